// The audit log as CSV (RFC 4180: a header line, CRLF line ends, a field quoted when it holds a
// comma, a quote or a line break, its quotes doubled). A cell that a spreadsheet would run as a
// formula (starting with =, +, -, @, a tab or a carriage return) is prefixed with ' so that opening
// the export never runs what an entry holds (OWASP, "CSV injection").
import type { AuditEntryView } from './audit-log-read.ts';

export const AUDIT_CSV_COLUMNS = [
  'id', 'at', 'merchant_id', 'actor_type', 'actor_id', 'action', 'target_type', 'target_id', 'request_id', 'ip',
] as const;

const FORMULA_START = /^[=+\-@\t\r]/;

export function csvCell(value: string | null): string {
  const v = value ?? '';
  const safe = FORMULA_START.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

function cells(e: AuditEntryView): Array<string | null> {
  return [e.id, e.at, e.merchant_id, e.actor.type, e.actor.id, e.action, e.target.type, e.target.id, e.request_id, e.ip];
}

export function auditCsv(entries: AuditEntryView[]): string {
  const lines = [AUDIT_CSV_COLUMNS.join(','), ...entries.map((e) => cells(e).map(csvCell).join(','))];
  return lines.map((l) => `${l}\r\n`).join('');
}
