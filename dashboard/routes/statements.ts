// Signed in: the statement download of the home page: GET /dashboard/statement?currency=&from=&to=&format=,
// whole UTC days (from's start to the end of `to`), answered by the merchant API's own statement
// (api/routes/statements.ts) for the session's merchant only, as an attachment.
import type { Router } from 'express';
import type { ApiServices } from '../../api/services.ts';
import { can } from '../permissions.ts';
import { answerStatement } from '../../api/routes/statements.ts';
import { Refusal } from '../refusal.ts';
import { locals, query, requestId } from '../http.ts';
import { calendarDayStart } from '../../domain/dates.ts';

function day(v: string | undefined, name: string, next: boolean): string {
  const t = v === undefined ? undefined : calendarDayStart(v);
  if (t === undefined) throw new Refusal('dash.error.dates', {}, 'bad_request', [{ field: name, message: 'must be a date YYYY-MM-DD' }]);
  return new Date(next ? t + 86_400_000 : t).toISOString();
}

export function addStatementRoutes(r: Router, s: ApiServices): void {
  r.get('/statement', can('statements:read'), async (req, res) => {
    const { session } = locals(res);
    const currency = query(req, 'currency');
    const format = query(req, 'format') ?? 'csv';
    if (currency !== 'XAF' && currency !== 'XOF') throw new Refusal('dash.error.currency', {}, 'bad_request', [{ field: 'currency', message: 'must be XAF or XOF' }]);
    if (format !== 'csv' && format !== 'json') throw new Refusal('dash.error.format', {}, 'bad_request', [{ field: 'format', message: 'must be csv or json' }]);
    const from = day(query(req, 'from'), 'from', false);
    const to = day(query(req, 'to'), 'to', true);
    const id = requestId(req);
    const reply = await answerStatement({
      services: s, log: s.log.child({ request_id: id }), requestId: id, merchantId: session.merchantId,
      body: {}, params: {}, query: { currency, from, to, format }, headers: {}, clientIp: '',
    }, session.merchantId);
    if ('text' in reply) {
      res.status(reply.status).set(reply.headers ?? {}).type(reply.contentType).send(reply.text);
      return;
    }
    if (!('body' in reply)) throw new Error('a statement is JSON or CSV');
    const name = `statement-${currency}-${from.slice(0, 10)}-${to.slice(0, 10)}.json`;
    res.status(reply.status).set('Content-Disposition', `attachment; filename="${name}"`).type('application/json')
      .send(`${JSON.stringify(reply.body, null, 2)}\n`);
  });
}
