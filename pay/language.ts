// The language a payer's page speaks (i18n/languages.ts: ?lang=, the `lang` cookie, Accept-Language,
// else French). An explicit ?lang= (the page's language link) is remembered in the cookie, so the
// form posted next and the status page after it stay in the language the payer chose.
import type { Request, Response } from 'express';
import { LANGUAGE_COOKIE, isLanguage, negotiateLanguage, type Language } from '../i18n/languages.ts';
import { translator, type Translate } from '../i18n/catalogue.ts';

export interface Speech {
  lang: Language;
  t: Translate;
}

const YEAR_SECONDS = 365 * 86_400;

function cookieValue(req: Request, name: string): string | undefined {
  const header = req.header('cookie');
  if (!header) return undefined;
  for (const part of header.slice(0, 4096).split(';')) {
    const i = part.indexOf('=');
    if (i > 0 && part.slice(0, i).trim() === name) return part.slice(i + 1).trim();
  }
  return undefined;
}

/** The request's language; remembers an explicit choice. */
export function speech(req: Request, res: Response): Speech {
  const query = req.query.lang;
  const lang = negotiateLanguage({ query, cookie: cookieValue(req, LANGUAGE_COOKIE), acceptLanguage: req.header('accept-language') });
  if (isLanguage(query)) {
    res.append('Set-Cookie', `${LANGUAGE_COOKIE}=${lang}; Path=/; Max-Age=${YEAR_SECONDS}; SameSite=Lax${req.secure ? '; Secure' : ''}`);
  }
  res.setHeader('Content-Language', lang);
  return { lang, t: translator(lang) };
}

/** The speech the router chose for this request (router.ts puts it on `res.locals`). */
export const speechOf = (res: Response): Speech => (res.locals as { speech: Speech }).speech;
