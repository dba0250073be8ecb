// What a key's scopes grant (domain/api-key-scopes.ts) and the per-operation check built from an
// operation's x-scope (api/middleware/scope.ts): write includes read, "*" everything; a merchant
// operation that declares no scope stops the server at start-up rather than answering unchecked.
import t from 'tap';
import { grants } from '../domain/api-key-scopes.ts';
import { requireScope } from '../api/middleware/scope.ts';
import { DomainError } from '../domain/errors.ts';
import type { Operation } from '../api/module.ts';

t.test('grants: the scope itself, its write for a read, or "*"; nothing else', async (t) => {
  t.ok(grants(['payins:read'], 'payins:read'));
  t.ok(grants(['payins:write'], 'payins:read'), 'write includes read');
  t.ok(grants(['payins:write'], 'payins:write'));
  t.notOk(grants(['payins:read'], 'payins:write'), 'read does not include write');
  t.notOk(grants(['payouts:write'], 'payins:read'), 'another resource');
  t.notOk(grants([], 'payins:read'));
  t.ok(grants(['*'], 'webhooks:write'));
});

const op = (scope?: Operation['x-scope']): Operation => ({ operationId: 'op', 'x-auth': 'merchant', responses: {}, ...(scope ? { 'x-scope': scope } : {}) });

/** Runs the check with a credential holding `held`: what it passes to next(), or what it throws. */
function run(o: Operation, held: string[]): unknown {
  let passed: unknown = 'not called';
  try {
    requireScope(o)({} as never, { locals: { credential: { scopes: held } } } as never, ((e?: unknown) => { passed = e; }) as never);
  } catch (err) {
    return err;
  }
  return passed;
}

t.test('requireScope: refuses 403 forbidden naming the scope; passes a key that holds it; any passes every key', async (t) => {
  const refused = run(op('refunds:write'), ['refunds:read']);
  t.ok(refused instanceof DomainError);
  t.equal((refused as DomainError).code, 'forbidden');
  t.match((refused as DomainError).message, 'refunds:write');
  t.equal(run(op('refunds:write'), ['refunds:write']), undefined, 'next() with no error');
  t.equal(run(op('any'), []), undefined);
  t.throws(() => requireScope(op()), /declares no x-scope/, 'no x-scope: the server does not start');
});
