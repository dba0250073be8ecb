// Records one audit log entry (domain/audit-log.ts) in the event store, on the merchant's audit
// stream or the operator-wide one. Called by the operator API and the dashboard once a change has
// succeeded (api/middleware/audit.ts, dashboard/audit.ts); nothing decides on these streams, so the
// append takes no expected version and never conflicts.
import { randomUUID } from 'node:crypto';
import type { Services } from './services.ts';
import { auditEntry, auditStreamOf, type AuditEntry, type AuditEvent } from '../domain/audit-log.ts';

/** What the caller knows; the id and the time are the recorder's. */
export type AuditFacts = Omit<AuditEntry, 'id' | 'at'>;

/**
 * The address as the socket gives it, an IPv4 one without its IPv6 mapping (`::ffff:203.0.113.7` →
 * `203.0.113.7`, as the sessions page shows it), or '' when it is not one (never refuse an entry over it).
 */
const address = (ip: string) => (/^[0-9A-Fa-f:.]{1,45}$/.test(ip) ? ip.replace(/^::ffff:(?=[0-9.]+$)/i, '') : '');

/**
 * Appends the entry and waits until the audit read model has it (read-your-writes, as the API's
 * other writes), so the change's answer is not sent before its entry can be listed.
 */
export async function recordAuditEntry(s: Services, facts: AuditFacts): Promise<AuditEntry> {
  const entry = auditEntry({ ...facts, ip: address(facts.ip), id: randomUUID(), at: s.clock.now().toISOString() });
  const event: AuditEvent = { type: 'audit.recorded', data: entry };
  const r = await s.store.append([{
    streamId: auditStreamOf(entry.merchant_id), expectedVersion: 'any',
    events: [{ id: entry.id, type: event.type, data: event.data as unknown as Record<string, unknown>, metadata: { requestId: entry.request_id } }],
  }]);
  await s.awaitReadModels(r.position);
  return entry;
}
