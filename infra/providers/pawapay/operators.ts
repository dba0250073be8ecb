// Which pawaPay provider carries each of our operators (CONTRACT §15). pawaPay names a mobile-money
// operator by its own provider code (docs.pawapay.io/v2/docs/providers; the codes an account can use
// are listed by its active configuration, GET /v2/active-conf). An operator missing here is not
// served: TG_* and CI_MOOV_MOMO stay out until pawaPay's active configuration lists them.
const PROVIDER_OF = new Map<string, string>([
  ['CM_MTN_MOMO', 'MTN_MOMO_CMR'],
  ['CM_ORANGE_MOMO', 'ORANGE_CMR'],
  ['SN_ORANGE_MOMO', 'ORANGE_SEN'],
  ['SN_WAVE_MOMO', 'WAVE_SEN'],
  ['SN_FREE_MOMO', 'FREE_SEN'],
  ['BJ_MTN_MOMO', 'MTN_MOMO_BEN'],
  ['BJ_MOOV_MOMO', 'MOOV_BEN'],
  ['CI_ORANGE_MOMO', 'ORANGE_CIV'],
  ['CI_MTN_MOMO', 'MTN_MOMO_CIV'],
  ['CI_WAVE_MOMO', 'WAVE_CIV'],
]);

/** pawaPay's provider code for one of our operator codes; undefined when pawaPay does not serve it. */
export function pawapayProvider(operatorCode: string): string | undefined {
  return PROVIDER_OF.get(operatorCode);
}
