import type { common as en } from '../en/common.ts';

export const common: Record<keyof typeof en, string> = {
  'language.name': 'Français',
  'language.switch': 'English',
  'language.label': 'Langue',
  'country.CM': 'Cameroun',
  'country.SN': 'Sénégal',
  'country.BJ': 'Bénin',
  'country.TG': 'Togo',
  'country.CI': "Côte d'Ivoire",
  'status.created': 'Créé',
  'status.pending': 'En attente',
  'status.completed': 'Réussi',
  'status.failed': 'Échoué',
};
