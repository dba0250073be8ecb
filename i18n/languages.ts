// Which language a page speaks (issue 42): French by default (our merchants' and payers' language),
// English on request. The choice, strongest first: an explicit `?lang=` on the request, the choice
// remembered in a cookie, then the browser's Accept-Language (its q-values honoured), then French.
export const LANGUAGES = ['fr', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];
export const DEFAULT_LANGUAGE: Language = 'fr';
/** The cookie that remembers a user's choice (the dashboard's switch, the payer page's link). */
export const LANGUAGE_COOKIE = 'lang';

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (LANGUAGES as readonly string[]).includes(value);
}

/** The best of our languages in an Accept-Language header (RFC 9110 §12.5.4), or undefined. */
export function fromAcceptLanguage(header: string | undefined): Language | undefined {
  if (!header) return undefined;
  let best: { lang: Language; q: number } | undefined;
  for (const part of header.slice(0, 512).split(',')) {
    const [tag, ...params] = part.trim().split(';');
    const primary = tag?.trim().toLowerCase().split('-')[0];
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!isLanguage(primary) || !Number.isFinite(q) || q <= 0) continue;
    if (best === undefined || q > best.q) best = { lang: primary, q };
  }
  return best?.lang;
}

export interface LanguageHints {
  query?: unknown;
  cookie?: unknown;
  acceptLanguage?: string | undefined;
}

export function negotiateLanguage(hints: LanguageHints): Language {
  if (isLanguage(hints.query)) return hints.query;
  if (isLanguage(hints.cookie)) return hints.cookie;
  return fromAcceptLanguage(hints.acceptLanguage) ?? DEFAULT_LANGUAGE;
}
