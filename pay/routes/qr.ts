// GET /pay/{id}/qr.svg: the link's URL as a QR code (CONTRACT §16 `qr_svg_url`), for the merchant to
// print or share. The URL is absolute: PUBLIC_BASE_URL when configured, else this request's origin
// (the API's `url`, by the same function). Drawn by the `qrcode` package (the reference implementation's
// encoder for Node: error correction, masking and version choice are not ours to get wrong).
import type { Request, Response, Router } from 'express';
import QRCode from 'qrcode';
import type { ApiServices } from '../../api/services.ts';
import { speechOf } from '../language.ts';
import { readLink } from '../reads.ts';
import { sendNotFound } from '../answer.ts';
import { linkBaseUrl, paymentLinkUrl } from '../../projections/views/payment-link.ts';

/** The link's `url` as the API answers it (projections/views/payment-link.ts: one rule for both). */
function linkUrl(s: ApiServices, req: Request, linkId: string): string {
  const { config } = s;
  return paymentLinkUrl(linkBaseUrl(config.providers.publicBaseUrl, req.header('host'), `http://${config.host}:${config.port}`), linkId);
}

async function qr(s: ApiServices, req: Request, res: Response): Promise<void> {
  const link = await readLink(s, String(req.params.id));
  if (!link) return sendNotFound(req, res, speechOf(res));
  // Error correction M (15 %): still read when printed small or slightly damaged.
  const svg = await QRCode.toString(linkUrl(s, req, link.id), { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
  res.status(200).type('image/svg+xml').setHeader('Cache-Control', 'public, max-age=300');
  res.send(svg);
}

export function addQrRoutes(r: Router, s: ApiServices): void {
  r.get('/:id/qr.svg', (req, res) => qr(s, req, res));
}
