import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// API key scopes (CONTRACT §18): what each key may do, as its `merchant.api_key_created` event says.
// Keys created before have no scopes in their events and may do everything: the default ["*"] is
// what a rebuild of the read model gives them too, so no rebuild is needed.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [`ALTER TABLE api_keys ADD COLUMN scopes jsonb NOT NULL DEFAULT '["*"]'::jsonb`]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['ALTER TABLE api_keys DROP COLUMN scopes']);
}
