// Two-step sign-in for the signed-in member (/dashboard/two-factor): enrol (QR code, key, a first
// code, then the recovery codes once), turn it off with a current code unless the team requires it,
// and, for the owner, require it for every member. Codes sent here are throttled as at sign-in.
import type { Request, Response, Router } from 'express';
import QRCode from 'qrcode';
import type { ApiServices } from '../../api/services.ts';
import { confirmEnrolment, removeTwoFactor, secretToEnrol, setRequired, twoFactorState } from '../../commands/dashboard-two-factor.ts';
import { allows } from '../../domain/dashboard-roles.ts';
import { checkSecondFactor } from '../../commands/dashboard-second-factor.ts';
import { totpUri } from '../../infra/totp.ts';
import type { MessageKey } from '../../i18n/catalogue.ts';
import { BASE } from '../pages/layout.ts';
import { recoveryCodesPage, twoFactorPage } from '../pages/two-factor.ts';
import { field, locals, query, send } from '../http.ts';
import { addressOf } from './sign-in-code.ts';
import { can } from '../permissions.ts';

const PATH = `${BASE}/two-factor`;

/** Messages after a redirect, by code: nothing from the request is shown as text. */
const DONE: Record<string, MessageKey> = {
  disabled: 'tfa.disabled',
  required_on: 'tfa.require.saved_on',
  required_off: 'tfa.require.saved_off',
};

/** The page as it stands, with a message; the enrolment's QR code drawn when not enrolled. */
async function render(s: ApiServices, res: Response, status: number, o: { info?: string; error?: string } = {}): Promise<void> {
  const v = locals(res);
  const { userId, merchantId, email, role } = v.session;
  const state = await twoFactorState(s.knex, userId, merchantId);
  const secret = state.enrolled ? undefined : await secretToEnrol(s, userId);
  // Error correction M, as the payment links' codes: read from a screen at any size.
  const enrolment = secret === undefined ? undefined
    : { secret, qrSvg: await QRCode.toString(totpUri(secret, email), { type: 'svg', errorCorrectionLevel: 'M', margin: 2 }) };
  send(res, status, twoFactorPage(v, { state, isOwner: allows(role, 'security:manage'), enrolment, ...o }));
}

async function enrol(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const codes = await confirmEnrolment(s, v.session.userId, field(req, 'code'));
  if (codes) return send(res, 200, recoveryCodesPage(v, codes));
  const state = await twoFactorState(s.knex, v.session.userId, v.session.merchantId);
  // Already enrolled (this form sent twice): the page as it is now, the codes not shown again.
  if (state.enrolled) return res.redirect(303, PATH);
  await render(s, res, 400, { error: v.t('tfa.enrol.wrong') });
}

async function disable(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const state = await twoFactorState(s.knex, v.session.userId, v.session.merchantId);
  if (!state.enrolled) return res.redirect(303, PATH);
  if (state.required) return render(s, res, 403, { error: v.t('tfa.disable.required') });
  const outcome = await checkSecondFactor(s, v.session.userId, addressOf(req), field(req, 'code'));
  if (outcome === 'locked') return render(s, res, 429, { error: v.t('tfa.code.locked') });
  if (outcome === 'wrong') return render(s, res, 401, { error: v.t('tfa.disable.wrong') });
  await removeTwoFactor(s.knex, v.session.userId);
  res.redirect(303, `${PATH}?done=disabled`);
}

async function requireForTeam(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const { userId, merchantId } = v.session;
  const wanted = field(req, 'required');
  if (wanted !== 'true' && wanted !== 'false') return render(s, res, 400, { error: v.t('dash.error.unreadable') });
  const state = await twoFactorState(s.knex, userId, merchantId);
  if (wanted === 'true' && !state.enrolled) return render(s, res, 400, { error: v.t('tfa.require.enrol_first') });
  await setRequired(s, merchantId, wanted === 'true');
  res.redirect(303, `${PATH}?done=${wanted === 'true' ? 'required_on' : 'required_off'}`);
}

export function addTwoFactorRoutes(r: Router, s: ApiServices): void {
  // Each member's own enrolment is theirs (every role); the rule for the whole team is the owner's.
  r.get('/two-factor', can('self:manage'), async (req, res) => {
    const key = DONE[query(req, 'done') ?? ''];
    await render(s, res, 200, key === undefined ? {} : { info: locals(res).t(key) });
  });
  r.post('/two-factor/enrol', can('self:manage'), (req, res) => enrol(s, req, res));
  r.post('/two-factor/disable', can('self:manage'), (req, res) => disable(s, req, res));
  r.post('/two-factor/require', can('security:manage'), (req, res) => requireForTeam(s, req, res));
}
