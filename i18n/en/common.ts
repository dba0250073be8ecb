// Strings every surface shares: countries, operators' names stay as the operators write them (catalogue.ts in domain/).
export const common = {
  'language.name': 'English',
  'language.switch': 'Français',
  'language.label': 'Language',
  'country.CM': 'Cameroon',
  'country.SN': 'Senegal',
  'country.BJ': 'Benin',
  'country.TG': 'Togo',
  'country.CI': "Côte d'Ivoire",
  'status.created': 'Created',
  'status.pending': 'Pending',
  'status.completed': 'Completed',
  'status.failed': 'Failed',
} as const;
