// Reading the audit log's read model (projections/audit-log.ts): one page newest first, filtered by
// merchant, actor, action and period (CONTRACT §18, the §8 list shape); and every entry of a filter
// up to a bound, for the CSV export.
import type { Knex } from 'knex';
import { listRequest, MAX_LIMIT, paginate, type Page } from './pagination.ts';
import type { AuditActorType } from '../domain/audit-log.ts';

export interface AuditEntryView {
  id: string;
  at: string;
  merchant_id: string | null;
  actor: { type: AuditActorType; id: string };
  action: string;
  target: { type: string; id: string };
  request_id: string;
  ip: string;
}

export interface AuditFilter {
  merchantId?: string | undefined;
  /** `operator:<id>`, `member:<id>`, an id alone (either kind), or `operator` / `member` (every actor of that kind). */
  actor?: string | undefined;
  action?: string | undefined;
  /** Inclusive bounds on `at`: a date-time, or a date (YYYY-MM-DD) for the whole UTC day. */
  from?: string | undefined;
  to?: string | undefined;
}

/** At most this many entries in one CSV export; the answer says where to go on (X-Next-Cursor). */
export const CSV_MAX_ROWS = 10_000;

interface Row {
  id: string; merchant_id: string | null; at: Date | string; actor_type: AuditActorType; actor_id: string; action: string;
  target_type: string; target_id: string; request_id: string; ip: string;
}

const view = (r: Row): AuditEntryView => ({
  id: r.id, at: new Date(r.at).toISOString(), merchant_id: r.merchant_id, actor: { type: r.actor_type, id: r.actor_id },
  action: r.action, target: { type: r.target_type, id: r.target_id }, request_id: r.request_id, ip: r.ip,
});

function filtered(knex: Knex, f: AuditFilter): Knex.QueryBuilder {
  const q = knex('audit_log').select('id', 'merchant_id', 'at', 'actor_type', 'actor_id', 'action', 'target_type', 'target_id', 'request_id', 'ip');
  if (f.merchantId !== undefined) q.where({ merchant_id: f.merchantId });
  if (f.action !== undefined) q.where({ action: f.action });
  if (f.actor !== undefined) {
    const m = /^(operator|member):(.+)$/.exec(f.actor);
    if (m) q.where({ actor_type: m[1], actor_id: m[2] });
    else if (f.actor === 'operator' || f.actor === 'member') q.where({ actor_type: f.actor });
    else q.where({ actor_id: f.actor });
  }
  return q;
}

export async function auditPage(knex: Knex, f: AuditFilter, page: { limit?: number | undefined; cursor?: string | undefined }): Promise<Page<AuditEntryView>> {
  const list = listRequest({ limit: page.limit, cursor: page.cursor, created_from: f.from, created_to: f.to });
  return paginate<Row, AuditEntryView>(knex, filtered(knex, f), list, view, { createdAtColumn: 'at' });
}

/** Every entry of the filter from `cursor` on, newest first, up to CSV_MAX_ROWS; `next_cursor` when more are left. */
export async function auditExport(knex: Knex, f: AuditFilter, cursor?: string): Promise<{ data: AuditEntryView[]; next_cursor: string | null }> {
  const data: AuditEntryView[] = [];
  let next: string | null | undefined = cursor;
  do {
    const p = await auditPage(knex, f, { limit: MAX_LIMIT, cursor: next ?? undefined });
    data.push(...p.data);
    next = p.next_cursor;
  } while (next !== null && data.length < CSV_MAX_ROWS);
  return { data, next_cursor: next };
}
