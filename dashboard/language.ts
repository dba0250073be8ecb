// The language a dashboard page speaks (issue 42): `?lang=`, then the choice remembered in the
// `lang` cookie, then the browser's Accept-Language, else French (i18n/languages.ts). Choosing with
// `?lang=` (the header's switch is a plain link carrying it) also remembers the choice for a year:
// a language is no secret and changes nothing, so a GET may set it and no CSRF token is needed.
import type { NextFunction, Request, Response } from 'express';
import { LANGUAGES, LANGUAGE_COOKIE, isLanguage, negotiateLanguage, type Language } from '../i18n/languages.ts';
import { translator, type Translate } from '../i18n/catalogue.ts';
import { readCookie } from './session.ts';

/** What a page needs to speak: its language, the translate function, and the switch to the other language. */
export interface Speech {
  lang: Language;
  t: Translate;
  /** The other language and the address of this page in it (for a form's answer: the dashboard's home). */
  other: { lang: Language; href: string };
}

const REMEMBER_SECONDS = 365 * 86_400;

/** This page again with `?lang=` set: a GET's own address, else (the answer to a form) the home page. */
function switchHref(req: Request, lang: Language, home: string): string {
  const url = new URL(req.method === 'GET' || req.method === 'HEAD' ? req.originalUrl : home, 'http://dashboard.invalid');
  url.searchParams.set('lang', lang);
  return `${url.pathname}${url.search}`;
}

function remember(res: Response, lang: Language, secure: boolean): void {
  // SameSite=Lax, not Strict: a dashboard link opened from an e-mail or a chat keeps the language.
  const attrs = [`${LANGUAGE_COOKIE}=${lang}`, 'Path=/', `Max-Age=${REMEMBER_SECONDS}`, 'HttpOnly', 'SameSite=Lax'];
  if (secure) attrs.push('Secure');
  res.append('Set-Cookie', attrs.join('; '));
}

export function speechFor(lang: Language, req: Request, home: string): Speech {
  const other = LANGUAGES.find((l) => l !== lang) ?? lang;
  return { lang, t: translator(lang), other: { lang: other, href: switchHref(req, other, home) } };
}

/** The middleware: the page's speech on `res.locals`, and a `?lang=` choice remembered. */
export const speak = (home: string, secure: (req: Request) => boolean) => (req: Request, res: Response, next: NextFunction): void => {
  const asked = req.query.lang;
  const lang = negotiateLanguage({ query: asked, cookie: readCookie(req, LANGUAGE_COOKIE), acceptLanguage: req.header('accept-language') });
  if (isLanguage(asked)) remember(res, asked, secure(req));
  Object.assign(res.locals, speechFor(lang, req, home));
  // Caches keep one answer per language choice (the pages are no-store; the redirects are not).
  res.vary('Accept-Language');
  next();
};
