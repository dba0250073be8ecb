// Migration 031 (dashboard roles and sessions): users from before become owners, so nobody loses
// access; afterwards a user must be given a role, one of the five; sessions from before get a public
// id each (the sessions page names them by it) and no device or address. Down and up again.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import * as m031 from '../infra/migrations/031_dashboard_roles.ts';
import { testDatabase, dbLabel } from './helpers/db.ts';

t.comment(`on ${dbLabel}`);

t.test('existing users become owners, existing sessions get a public id; a role is then required', async (t) => {
  const tdb = await testDatabase();
  t.teardown(() => tdb.teardown());
  const knex = tdb.db.knex;
  await m031.down(knex);
  const now = new Date();
  const users = [randomUUID(), randomUUID()];
  for (const [i, id] of users.entries()) {
    await knex('dashboard_users').insert({ id, merchant_id: randomUUID(), email: `before-${i}@example.com`, created_at: now });
    await knex('dashboard_sessions').insert({
      id_hash: `hash-${i}`, user_id: id, merchant_id: randomUUID(), csrf_token: 'x', created_at: now, last_seen_at: now, expires_at: now,
    });
  }
  await m031.up(knex);
  t.same((await knex('dashboard_users').orderBy('email').select('role')).map((r) => r.role), ['owner', 'owner'], 'owners, as they could do everything');
  const sessions = await knex('dashboard_sessions').select('public_id', 'user_agent', 'ip');
  t.equal(new Set(sessions.map((s) => s.public_id)).size, 2, 'a public id each, distinct');
  t.ok(sessions.every((s) => /^[0-9a-f-]{36}$/.test(s.public_id) && s.user_agent === null && s.ip === null));
  await t.rejects(knex('dashboard_users').insert({ id: randomUUID(), merchant_id: randomUUID(), email: 'new@example.com', created_at: now }), 'a new user without a role');
  await t.rejects(knex('dashboard_users').insert({ id: randomUUID(), merchant_id: randomUUID(), email: 'boss@example.com', role: 'boss', created_at: now }), 'nor one not on the list');
  await knex('dashboard_users').insert({ id: randomUUID(), merchant_id: randomUUID(), email: 'fin@example.com', role: 'finance', created_at: now });
  t.equal((await knex('dashboard_users').where({ email: 'fin@example.com' }).first('role')).role, 'finance');
});
