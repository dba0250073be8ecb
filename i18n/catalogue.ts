// The message catalogues (issue 42): every string a page shows comes from here, never built in code.
// One catalogue per language, assembled from one file per surface (common, the payer's page, the
// dashboard), so each surface's strings live together. English defines the keys; each French file
// must have exactly the same keys (the type checker refuses a missing or an extra one).
// A message's `{name}` placeholders are filled by `t(key, { name })`; values are plain text (the
// HTML templates escape them).
import type { Language } from './languages.ts';
import { en } from './en/index.ts';
import { fr } from './fr/index.ts';

export type MessageKey = keyof typeof en;
export type Catalogue = Record<MessageKey, string>;
export type MessageParams = Record<string, string | number | bigint>;
export type Translate = (key: MessageKey, params?: MessageParams) => string;

const CATALOGUES: Record<Language, Catalogue> = { en, fr };

export function fill(message: string, params: MessageParams | undefined): string {
  if (params === undefined) return message;
  return message.replace(/\{([a-z_]+)\}/g, (whole, name: string) => (name in params ? String(params[name]) : whole));
}

/** The translate function of one language. */
export function translator(lang: Language): Translate {
  const catalogue = CATALOGUES[lang];
  return (key, params) => fill(catalogue[key], params);
}

/** Every key of every language (the catalogue test checks placeholders agree across languages). */
export function catalogues(): Readonly<Record<Language, Catalogue>> {
  return CATALOGUES;
}
