// The audit log's pure parts (CONTRACT §18): an entry is checked before it is stored (ids only), the
// CSV is RFC 4180 with formula cells defused, the operator is named by a fingerprint, and an operator
// operation or a dashboard POST that declares no audit keeps the service from starting.
import { createHash } from 'node:crypto';
import t from 'tap';
import express from 'express';
import { auditEntry, auditStreamOf, type AuditEntry } from '../domain/audit-log.ts';
import { InvariantViolation } from '../domain/errors.ts';
import { auditCsv, csvCell } from '../projections/audit-log-csv.ts';
import { audited, operatorFingerprint } from '../api/middleware/audit.ts';
import { everyChangeDeclared } from '../dashboard/audit.ts';
import type { Operation } from '../api/module.ts';
import { apiModules } from '../app/registry.ts';
import { recordAuditEntry } from '../commands/audit-log.ts';
import type { Services } from '../commands/services.ts';

const entry = (over: Partial<AuditEntry> = {}): AuditEntry => ({
  id: '6b1f8d1e-2c4a-4b8e-9f0a-1d2e3f4a5b6c', at: '2026-11-28T01:00:00.000Z', merchant_id: '0d9c7a52-1f4e-4c1b-9a55-3f1c2d4b5e6f',
  actor: { type: 'member', id: '394aa3ed-2142-4bde-9702-726f4c41fe4d' }, action: 'api_key.revoked',
  target: { type: 'api_key', id: '4f2f4ed4-9b18-48aa-8f9c-a3b1d3e869f7' }, request_id: 'req-1', ip: '::ffff:127.0.0.1', ...over,
});

t.test('an entry holds ids: free text, an unknown action or a malformed address is refused', async (t) => {
  t.same(auditEntry(entry()), entry());
  t.throws(() => auditEntry(entry({ target: { type: 'webhook_endpoint', id: 'https://hooks.example.com/in?token=abc' } })), InvariantViolation, 'a URL is not an id');
  t.throws(() => auditEntry(entry({ target: { type: 'api_key', id: 'a'.repeat(101) } })), InvariantViolation, 'an id has a bound');
  t.throws(() => auditEntry(entry({ actor: { type: 'member', id: 'someone@example.com' } })), InvariantViolation, 'an e-mail address is not an id');
  t.throws(() => auditEntry(entry({ action: 'key.stolen' as never })), InvariantViolation);
  t.throws(() => auditEntry(entry({ ip: '1.2.3.4; DROP' })), InvariantViolation);
  t.equal(auditStreamOf('abc'), 'audit-abc');
  t.equal(auditStreamOf(null), 'audit-operator');
});

t.test('the operator is named by the first 12 hex digits of the SHA-256 of its token, never the token', async (t) => {
  t.equal(operatorFingerprint('Bearer s3cret-token'), createHash('sha256').update('s3cret-token').digest('hex').slice(0, 12));
  t.match(operatorFingerprint('Bearer s3cret-token'), /^[0-9a-f]{12}$/);
});

t.test('CSV: RFC 4180 quoting, CRLF lines, a header, formula cells prefixed with \'', async (t) => {
  t.equal(csvCell('plain'), 'plain');
  t.equal(csvCell(null), '');
  t.equal(csvCell('a,b'), '"a,b"');
  t.equal(csvCell('say "hi"'), '"say ""hi"""');
  t.equal(csvCell('two\nlines'), '"two\nlines"');
  for (const start of ['=', '+', '-', '@', '\t', '\r']) t.equal(csvCell(`${start}1+1`).startsWith(`'${start}`) || csvCell(`${start}1+1`).startsWith(`"'${start}`), true, `a cell starting with ${JSON.stringify(start)}`);
  t.equal(csvCell('=HYPERLINK("http://evil")'), '"\'=HYPERLINK(""http://evil"")"', 'defused, then quoted');
  const e = entry({ target: { type: 'corridor', id: '-CM-SN' } });
  const csv = auditCsv([{ ...e, merchant_id: null }]);
  t.equal(csv, 'id,at,merchant_id,actor_type,actor_id,action,target_type,target_id,request_id,ip\r\n'
    + `${e.id},${e.at},,member,${e.actor.id},api_key.revoked,corridor,'-CM-SN,req-1,::ffff:127.0.0.1\r\n`);
  t.equal(auditCsv([]), 'id,at,merchant_id,actor_type,actor_id,action,target_type,target_id,request_id,ip\r\n', 'the header alone');
});

const op = (over: Partial<Operation>): Operation => ({ operationId: 'probe', 'x-auth': 'admin', responses: {}, ...over });
const answer = async () => ({ status: 200, body: {} });

t.test('an operator operation that may change something and declares no x-audit stops the start', async (t) => {
  for (const method of ['post', 'put', 'patch', 'delete']) t.throws(() => audited(op({}), method, answer), /declares no x-audit/, method);
  t.equal(audited(op({}), 'get', answer), answer, 'a GET is a read');
  t.equal(audited(op({ 'x-auth': 'merchant' }), 'post', answer), answer, 'the merchant API is not the operator\'s');
  t.equal(audited(op({ 'x-audit': 'not-a-change' }), 'post', answer), answer);
  const every = apiModules.flatMap((m) => Object.entries(m.paths).flatMap(([, ops]) => Object.entries(ops)));
  const changes = every.filter(([method, o]) => o['x-auth'] === 'admin' && method !== 'get');
  t.ok(changes.length >= 15, 'the operator API has its changes');
  t.ok(changes.every(([, o]) => o['x-audit']), 'each declares its audit');
});

t.test('a dashboard POST route without an audit declaration stops the start', async (t) => {
  const r = express.Router();
  r.get('/anything', (_q, s) => s.end());
  r.post('/keys/:keyId/revoke', (_q, s) => s.end());
  t.doesNotThrow(() => everyChangeDeclared(r, 0));
  r.post('/something-new', (_q, s) => s.end());
  t.throws(() => everyChangeDeclared(r, 0), /without an audit declaration.*\/something-new/);
  t.doesNotThrow(() => everyChangeDeclared(r, 3), 'only the routes from the signed-in part on');
});

t.test('an entry\'s address: IPv4 without its IPv6 mapping, anything not an address left out', async (t) => {
  const appended: AuditEntry[] = [];
  const s = {
    clock: { now: () => new Date('2026-11-28T01:00:00Z') }, awaitReadModels: async () => undefined,
    store: { append: async (a: Array<{ events: Array<{ data: unknown }> }>) => { appended.push(a[0]!.events[0]!.data as AuditEntry); return { position: 1n }; } },
  } as unknown as Services;
  const facts = { merchant_id: null, actor: { type: 'operator' as const, id: 'abcdef012345' }, action: 'operator.routing_set' as const, target: { type: 'operator', id: 'CM_MTN_MOMO' }, request_id: 'r' };
  for (const ip of ['::ffff:203.0.113.7', '203.0.113.7', '2001:db8::1', 'not an address']) await recordAuditEntry(s, { ...facts, ip });
  t.same(appended.map((e) => e.ip), ['203.0.113.7', '203.0.113.7', '2001:db8::1', '']);
  t.same(appended.map((e) => e.at), Array(4).fill('2026-11-28T01:00:00.000Z'), 'at: the service\'s clock');
});
