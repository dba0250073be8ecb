// The operator API's audit log (CONTRACT §18): every operator operation that may change something
// (POST, PUT, PATCH, DELETE) declares `x-audit` (its action, where its target's id and its merchant
// come from) or `'x-audit': 'not-a-change'` for a POST that only reads; the server refuses to start
// on one that declares neither, so a new route cannot be forgotten. After the handler has answered a
// success (2xx, not a replay of an earlier answer), one entry is recorded (commands/audit-log.ts)
// before the answer is sent. A refused or failed call (an error thrown, a 4xx) records nothing.
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import type { AuditDeclaration, AuditSource, Ctx, Operation, Reply } from '../module.ts';
import type { Answer } from './respond.ts';
import { recordAuditEntry } from '../../commands/audit-log.ts';

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);

/** The operator, named as the contract says: the first 12 hex digits of the SHA-256 of the token it used, never the token. */
export function operatorFingerprint(authorization: string | undefined): string {
  const token = authorization?.startsWith('Bearer ') ? authorization.slice(7) : '';
  return createHash('sha256').update(token).digest('hex').slice(0, 12);
}

function valueOf(source: AuditSource, ctx: Ctx, reply: Reply): string | undefined {
  const [from, name] = source.split(':') as ['path' | 'answer', string];
  const v = from === 'path' ? ctx.params[name] : 'body' in reply ? (reply.body as Record<string, unknown> | undefined)?.[name] : undefined;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** A success this call made, not the replay of an earlier one's answer (which was recorded then). */
function isNewSuccess(reply: Reply): boolean {
  if (reply.status < 200 || reply.status >= 300) return false;
  if (!('body' in reply)) return true;
  const meta = (reply.body as { _meta?: { idempotency_replayed?: unknown } } | undefined)?._meta;
  return reply.replayed !== true && meta?.idempotency_replayed !== true;
}

async function record(d: AuditDeclaration, ctx: Ctx, req: Request, reply: Reply): Promise<void> {
  const targetId = valueOf(d.target.id, ctx, reply);
  const merchantId = d.merchant === null ? null : valueOf(d.merchant, ctx, reply);
  if (targetId === undefined || merchantId === undefined) throw new Error(`x-audit of ${d.action}: the target or the merchant is missing from the call`);
  await recordAuditEntry(ctx.services, {
    merchant_id: merchantId, actor: { type: 'operator', id: operatorFingerprint(req.header('authorization')) },
    action: d.action, target: { type: d.target.type, id: targetId }, request_id: ctx.requestId, ip: ctx.clientIp,
  });
}

/**
 * The operation's answer, audited. Throws at start-up for an operator operation that may change
 * something and declares no `x-audit`.
 */
export function audited(op: Operation, method: string, answer: Answer): Answer {
  const declared = op['x-audit'];
  if (op['x-auth'] !== 'admin' || !MUTATING.has(method)) return answer;
  if (!declared) throw new Error(`operator operation ${op.operationId} (${method.toUpperCase()}) declares no x-audit`);
  if (declared === 'not-a-change') return answer;
  return async (ctx, req) => {
    const reply = await answer(ctx, req);
    if (!isNewSuccess(reply)) return reply;
    try {
      await record(declared, ctx, req, reply);
    } catch (err) {
      // The change is made and cannot be taken back: answer it, and say loudly that its entry is missing (docs/AUDIT-LOG.md).
      ctx.log.error({ err, action: declared.action, operation: op.operationId }, 'audit: entry not recorded');
    }
    return reply;
  };
}
