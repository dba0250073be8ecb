// Read model of the audit log (CONTRACT §18): one row per `audit.recorded` event of the `audit-…`
// streams, what GET /admin/audit-log and the dashboard's audit page list. An entry is recorded once
// and never changes, so a row is inserted once (a replayed batch is ignored).
import type { RecordedEvent } from '../infra/eventstore/types.ts';
import { AUDIT_STREAM_PREFIX, type AuditEvent } from '../domain/audit-log.ts';
import { unreachable } from '../domain/decider.ts';
import type { BatchWrite, Projection } from './projection.ts';
import { upsertRows } from './upsert.ts';

function rowsOf(events: RecordedEvent[]): Array<Record<string, unknown>> {
  return events.filter((r) => r.streamId.startsWith(AUDIT_STREAM_PREFIX)).map((r) => {
    const e = { type: r.type, data: r.data } as unknown as AuditEvent;
    switch (e.type) {
      case 'audit.recorded': {
        const d = e.data;
        return {
          id: d.id, merchant_id: d.merchant_id, at: d.at, actor_type: d.actor.type, actor_id: d.actor.id, action: d.action,
          target_type: d.target.type, target_id: d.target.id, request_id: d.request_id, ip: d.ip,
        };
      }
      default:
        return unreachable(e.type);
    }
  });
}

async function prepare(_db: unknown, events: RecordedEvent[]): Promise<BatchWrite> {
  const rows = rowsOf(events);
  return (tx) => upsertRows(tx, 'audit_log', ['id'], rows, 'ignore');
}

export const auditLogProjection: Projection = {
  name: 'audit_log',
  tables: ['audit_log'],
  prepare,
  async apply(tx, events) {
    await (await prepare(tx, events))(tx);
  },
};
