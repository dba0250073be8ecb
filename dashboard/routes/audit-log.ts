// Signed in: the merchant's audit log (CONTRACT §18): its own entries only, newest first, filtered by
// action, by who made the change (a member or the operator) and by day, and the same filter as CSV.
// Reading it records nothing.
import type { Request, Response, Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { isAuditAction } from '../../domain/audit-log.ts';
import { auditExport, auditPage, type AuditFilter } from '../../projections/audit-log-read.ts';
import { auditCsv } from '../../projections/audit-log-csv.ts';
import { can } from '../permissions.ts';
import { auditLogPage, type AuditForm, type Member } from '../pages/audit-log.ts';
import { locals, query, send } from '../http.ts';
import { calendarDayStart } from '../../domain/dates.ts';

const validDay = (v: string | undefined) => v === undefined || calendarDayStart(v) !== undefined;

/** The filter from the query; a value that is not one of the choices is dropped (as the other lists do), a bad day refused. */
function formOf(req: Request, members: Member[]): { form: AuditForm; datesOk: boolean } {
  const action = query(req, 'action');
  const actor = query(req, 'actor');
  const knownActor = actor === 'operator' || members.some((m) => actor === `member:${m.id}`);
  const form: AuditForm = { action: action && isAuditAction(action) ? action : undefined, actor: knownActor ? actor : undefined, from: query(req, 'from'), to: query(req, 'to') };
  const datesOk = validDay(form.from) && validDay(form.to) && !(form.from && form.to && form.from > form.to);
  return { form, datesOk };
}

const membersOf = async (s: ApiServices, merchantId: string): Promise<Member[]> =>
  s.knex('dashboard_users').where({ merchant_id: merchantId }).orderBy('email').select('id', 'email');

/** Always the session's merchant: another merchant's entries cannot be asked for. */
const filterOf = (merchantId: string, f: AuditForm): AuditFilter => ({ merchantId, action: f.action, actor: f.actor, from: f.from, to: f.to });

async function show(s: ApiServices, req: Request, res: Response): Promise<void> {
  const v = locals(res);
  const members = await membersOf(s, v.session.merchantId);
  const { form, datesOk } = formOf(req, members);
  if (!datesOk) return send(res, 400, auditLogPage(v, [], null, { ...form, from: undefined, to: undefined }, members, v.t('audit.error.dates')));
  const filter = filterOf(v.session.merchantId, form);
  if (query(req, 'format') === 'csv') {
    const { data, next_cursor } = await auditExport(s.knex, filter);
    if (next_cursor !== null) res.setHeader('X-Next-Cursor', next_cursor);
    res.status(200).set('Content-Disposition', 'attachment; filename="audit-log.csv"').type('text/csv; charset=utf-8').send(auditCsv(data));
    return;
  }
  const list = await auditPage(s.knex, filter, { cursor: query(req, 'cursor') });
  send(res, 200, auditLogPage(v, list.data, list.next_cursor, form, members));
}

export function addAuditLogRoutes(r: Router, s: ApiServices): void {
  r.get('/audit-log', can('audit:read'), (req, res) => show(s, req, res));
}
