// Which operator a mobile number most likely belongs to, from the first digits of its national
// number: the payer's page suggests the operator as the payer types (CONTRACT §16). A suggestion only:
// numbers can be ported, some wallets (Wave) work on any operator's line, and the payer may pick
// another operator. Only the ranges stated below are listed; a number outside them suggests nothing.
//
// Sources, each the national regulator's numbering plan as published:
//  - Cameroon (ART, plan de numérotation, 9 digits since 2014): MTN 67x, 650–654, 680–683;
//    Orange 69x, 655–659.
//  - Senegal (ARTP, plan national de numérotation): Orange (Sonatel) 77, 78; Free 76.
//  - Benin (ARCEP Bénin; 10 digits since 30 November 2024, every mobile number prefixed with 01):
//    MTN 01 61, 01 62, 01 66, 01 67, 01 90, 01 91, 01 96, 01 97; Moov 01 60, 01 64, 01 65,
//    01 68, 01 94, 01 95, 01 98, 01 99 (the same ranges without 01 in the old 8-digit form).
//  - Togo (ARCEP Togo, plan national de numérotation): Togocom (T-Money) 90–93, 70; Moov Africa
//    (Flooz) 96–99, 79.
//  - Côte d'Ivoire (ARTCI, 10-digit plan since 31 January 2021): Moov 01, MTN 05, Orange 07.
import type { CountryCode } from './catalogue.ts';

/** National-number prefixes, per country, each with the operator code it suggests. */
export const MOBILE_PREFIXES: Readonly<Record<CountryCode, ReadonlyArray<readonly [prefix: string, operatorCode: string]>>> = {
  CM: [
    ['67', 'CM_MTN_MOMO'], ['650', 'CM_MTN_MOMO'], ['651', 'CM_MTN_MOMO'], ['652', 'CM_MTN_MOMO'], ['653', 'CM_MTN_MOMO'],
    ['654', 'CM_MTN_MOMO'], ['680', 'CM_MTN_MOMO'], ['681', 'CM_MTN_MOMO'], ['682', 'CM_MTN_MOMO'], ['683', 'CM_MTN_MOMO'],
    ['69', 'CM_ORANGE_MOMO'], ['655', 'CM_ORANGE_MOMO'], ['656', 'CM_ORANGE_MOMO'], ['657', 'CM_ORANGE_MOMO'],
    ['658', 'CM_ORANGE_MOMO'], ['659', 'CM_ORANGE_MOMO'],
  ],
  SN: [['77', 'SN_ORANGE_MOMO'], ['78', 'SN_ORANGE_MOMO'], ['76', 'SN_FREE_MOMO']],
  BJ: [
    ...['61', '62', '66', '67', '90', '91', '96', '97'].flatMap((p) => [[`01${p}`, 'BJ_MTN_MOMO'], [p, 'BJ_MTN_MOMO']] as const),
    ...['60', '64', '65', '68', '94', '95', '98', '99'].flatMap((p) => [[`01${p}`, 'BJ_MOOV_MOMO'], [p, 'BJ_MOOV_MOMO']] as const),
  ],
  TG: [
    ['90', 'TG_TOGOCOM_MOMO'], ['91', 'TG_TOGOCOM_MOMO'], ['92', 'TG_TOGOCOM_MOMO'], ['93', 'TG_TOGOCOM_MOMO'], ['70', 'TG_TOGOCOM_MOMO'],
    ['96', 'TG_MOOV_MOMO'], ['97', 'TG_MOOV_MOMO'], ['98', 'TG_MOOV_MOMO'], ['99', 'TG_MOOV_MOMO'], ['79', 'TG_MOOV_MOMO'],
  ],
  CI: [['01', 'CI_MOOV_MOMO'], ['05', 'CI_MTN_MOMO'], ['07', 'CI_ORANGE_MOMO']],
};

/**
 * The operator a national number suggests: the longest listed prefix it starts with (no old 8-digit
 * Benin mobile number starts with 01, so `01 97…` and `97…` cannot be confused). The page's script
 * does the same with the table embedded in the page.
 */
export function suggestOperator(country: CountryCode, nationalDigits: string): string | undefined {
  let best: readonly [string, string] | undefined;
  for (const entry of MOBILE_PREFIXES[country]) {
    if (nationalDigits.startsWith(entry[0]) && (best === undefined || entry[0].length > best[0].length)) best = entry;
  }
  return best?.[1];
}
