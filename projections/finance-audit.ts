// The finance audit (`npm run audit`, `POST /admin/audit`): replays every event and
//  1. checks the ledger (domain/ledger-audit.ts: every entry balances, per-currency totals are
//     conserved, no merchant balance below zero at any point, each payment's money moved once);
//  2. compares every read model with a fresh fold of the events (projections/audit.ts);
//  3. checks that each snapshot of a stream it replayed is the fold of that stream up to the
//     snapshot's version (projections/snapshot-audit.ts): loads trust them, the audit never does.
// Read-only towards the service: it writes nothing but its own scratch schemas (`audit_<projection>`,
// dropped at the end) and never blocks the projector or the API.
import type { Knex } from 'knex';
import type { EventStore } from '../infra/eventstore/types.ts';
import type { Projection } from './projection.ts';
import { LEDGER_CHECKS, LedgerAudit, type LedgerCheck, type LedgerFinding, type LedgerSummary } from '../domain/ledger-audit.ts';
import { auditProjection, type ProjectionAudit } from './audit.ts';
import { SnapshotAuditor, type AnyDecider, type SnapshotAudit } from './snapshot-audit.ts';

export const AUDIT_READ_BATCH = 1000;

export interface AuditReport {
  ok: boolean;
  /** Discrepancies found: ledger findings plus differing read-model rows. */
  discrepancies: number;
  started_at: string;
  finished_at: string;
  elapsed_ms: number;
  ledger: {
    ok: boolean;
    /** The events replayed: every event up to this global position. */
    position: string;
    counts: Record<LedgerCheck, number>;
    findings: LedgerFinding[];
    summary: LedgerSummary;
  };
  read_models: ProjectionAudit[];
  snapshots: SnapshotAudit;
}

export type AuditProgress = (phase: 'ledger' | 'read_models' | 'snapshots', detail: string) => void;

export async function runAudit(
  knex: Knex,
  store: EventStore,
  projections: Projection[],
  opts: {
    batchSize?: number;
    onProgress?: AuditProgress;
    /** The decider of each stream kind by its id's prefix (default: the service's; tests give their own). */
    snapshotDeciders?: Array<[prefix: string, decider: AnyDecider]>;
  } = {},
): Promise<AuditReport> {
  const started = new Date();
  const batchSize = opts.batchSize ?? AUDIT_READ_BATCH;
  const progress = opts.onProgress ?? (() => undefined);

  // 1. The ledger, up to the head at the start (later events are the next audit's).
  const head = await store.head();
  const ledger = new LedgerAudit();
  const snapshotAuditor = new SnapshotAuditor(opts.snapshotDeciders);
  let position = 0n;
  let replayed = 0;
  for (;;) {
    const batch = (await store.readAll(position, batchSize)).filter((e) => e.position <= head);
    if (batch.length === 0) break;
    for (const e of batch) {
      ledger.add(e);
      snapshotAuditor.see(e.streamId);
    }
    position = batch[batch.length - 1]!.position;
    replayed += batch.length;
    progress('ledger', `${replayed} events`);
  }
  const l = ledger.finish();
  const ledgerDiscrepancies = LEDGER_CHECKS.reduce((n, c) => n + l.counts[c], 0);

  // 2. Every read model against a fresh fold, each at its own checkpoint.
  const readModels: ProjectionAudit[] = [];
  for (const p of projections) {
    progress('read_models', p.name);
    readModels.push(await auditProjection(knex, store, p, batchSize));
  }
  const rowDiscrepancies = readModels.reduce((n, p) => n + p.tables.reduce((m, t) => m + t.missing + t.unexpected + t.changed, 0), 0);

  // 3. Every snapshot of the streams replayed against the fold of its events.
  progress('snapshots', 'against the events');
  const snapshots = await snapshotAuditor.check(store, batchSize);

  const finished = new Date();
  const discrepancies = ledgerDiscrepancies + rowDiscrepancies + snapshots.mismatched;
  return {
    ok: discrepancies === 0,
    discrepancies,
    started_at: started.toISOString(),
    finished_at: finished.toISOString(),
    elapsed_ms: finished.getTime() - started.getTime(),
    ledger: { ok: ledgerDiscrepancies === 0, position: head.toString(), counts: l.counts, findings: l.findings, summary: l.summary },
    read_models: readModels,
    snapshots,
  };
}

const mark = (ok: boolean) => (ok ? 'ok  ' : 'FAIL');

/** The report as text, for the CLI. */
export function formatAuditReport(r: AuditReport): string {
  const out: string[] = [];
  const s = r.ledger.summary;
  out.push(`audit ${r.ok ? 'PASSED' : 'FAILED'}: ${r.discrepancies} discrepanc${r.discrepancies === 1 ? 'y' : 'ies'} (${(r.elapsed_ms / 1000).toFixed(1)}s)`);
  out.push('');
  out.push(`ledger: ${s.events} events replayed up to position ${r.ledger.position}; ${s.wallet_events} wallet movements in ${s.wallets} wallets; ` +
    `${s.payins} payins, ${s.payouts} payouts, ${s.transfers} transfers, ${s.refunds} refunds`);
  for (const c of LEDGER_CHECKS) {
    const n = r.ledger.counts[c];
    out.push(`  ${mark(n === 0)}  ${c.padEnd(16)} ${n === 0 ? '' : `${n} finding${n === 1 ? '' : 's'}`}`.trimEnd());
    for (const f of r.ledger.findings.filter((x) => x.check === c)) {
      out.push(`          ${f.message}${f.stream ? ` [${f.stream}${f.position ? ` @${f.position}` : ''}]` : ''}`);
    }
  }
  for (const t of s.currencies) {
    out.push(`  ${t.currency}: merchants hold ${t.merchant_balances} = top-ups ${t.top_ups} + credited ${t.credited_net} − paid out ${t.posted_holds}; ` +
      `fees ${t.fees}; all accounts sum to ${t.all_accounts}`);
  }
  out.push('');
  out.push('read models (live tables against a fresh fold of the events, at the same position):');
  for (const p of r.read_models) {
    const rows = p.tables.map((t) => `${t.table} ${t.live_rows}`).join(', ');
    out.push(`  ${mark(p.ok)}  ${p.projection.padEnd(16)} at ${p.position}: ${rows}`);
    for (const t of p.tables) {
      if (t.missing + t.unexpected + t.changed === 0) continue;
      out.push(`          ${t.table}: ${t.changed} changed, ${t.missing} missing, ${t.unexpected} unexpected (fresh fold has ${t.fresh_rows} rows)`);
      for (const d of t.samples) {
        const key = Object.entries(d.key).map(([k, v]) => `${k}=${String(v)}`).join(', ');
        const cols = d.columns?.map((c) => `${c.column}: live ${c.live}, fresh ${c.fresh}`).join('; ');
        out.push(`            ${d.kind} (${key})${cols ? ` ${cols}` : ''}`);
      }
    }
  }
  const sn = r.snapshots;
  out.push('');
  out.push(`snapshots (each against the fold of its stream up to its version):`);
  out.push(`  ${mark(sn.ok)}  ${sn.checked} checked${sn.mismatched > 0 ? `, ${sn.mismatched} not the fold of their stream` : ''}` +
    `${sn.other_shape > 0 ? `; ${sn.other_shape} of an older shape skipped` : ''}`);
  for (const f of sn.findings) out.push(`          ${f.message} [${f.stream} @${f.version}]`);
  return `${out.join('\n')}\n`;
}
