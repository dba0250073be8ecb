// Amounts and dates in a page's language: "5 000 F CFA" in French, "FCFA 5,000" in English, from the
// platform's Intl (full ICU in Node 20), so no format is written by hand. Amounts are strings of
// whole francs (XAF and XOF have no minor unit), formatted without ever passing through a float
// beyond Number's exact range.
import type { Language } from './languages.ts';

const LOCALES: Record<Language, string> = { fr: 'fr-FR', en: 'en-GB' };

export function formatAmount(lang: Language, amount: string | bigint, currency: string): string {
  const value = BigInt(amount);
  return new Intl.NumberFormat(LOCALES[lang], { style: 'currency', currency, maximumFractionDigits: 0 }).format(value);
}

export function formatDateTime(lang: Language, iso: string): string {
  return new Intl.DateTimeFormat(LOCALES[lang], { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(new Date(iso)) + ' UTC';
}
