// What every request to the payer's page passes: strict security headers (no inline script or style
// anywhere, nothing loaded from elsewhere, never framed, never cached, no referrer sent), and for a
// POST the form rules: same-site only, urlencoded (or the page's own script asking for JSON).
import type { NextFunction, Request, Response } from 'express';

export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; form-action 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'";

export function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  // The link's id is in every URL of the page: it is sent to no one.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Vary', 'Accept, Accept-Language, Cookie');
  next();
}

/**
 * False when the browser says the form came from another site. The page carries no credentials for
 * a forged form to ride on, so this guards against using payers' browsers to send payment requests.
 * Under `Referrer-Policy: no-referrer` browsers send `Origin: null` on the page's own POSTs: a modern
 * browser is judged by Sec-Fetch-Site, and an Origin is compared only when it names one.
 */
export function sentFromOurPage(req: Request, publicBaseUrl: string | undefined): boolean {
  const site = req.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return false;
  const origin = req.header('origin');
  if (origin === undefined || origin === 'null') return true;
  const ours = [`${req.protocol}://${req.header('host') ?? ''}`];
  if (publicBaseUrl) ours.push(new URL(publicBaseUrl).origin);
  return ours.includes(origin);
}

/** The page's script asks for JSON (no reload); a plain form post gets HTML. */
export const wantsJson = (req: Request) => req.accepts(['html', 'json']) === 'json';
