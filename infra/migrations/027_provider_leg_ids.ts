import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Issue 41 (CONTRACT §15): a leg's id at its provider (MTN's X-Reference-Id, pawaPay's depositId,
// payoutId or refundId: a UUID derived from our reference, infra/providers/leg-id.ts), so that a
// callback, which names only that id, finds its leg. Rows from before are sandbox legs, whose id is
// our reference. `starting_until`: a start that may fail the leg over to another provider holds it
// until then (commands/leg-initiation.ts), so two starts of one leg never ask two providers.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    'ALTER TABLE provider_legs ADD COLUMN provider_leg_id text',
    'UPDATE provider_legs SET provider_leg_id = reference',
    'ALTER TABLE provider_legs ALTER COLUMN provider_leg_id SET NOT NULL',
    'CREATE INDEX provider_legs_by_provider_leg_id ON provider_legs (provider, provider_leg_id)',
    'ALTER TABLE provider_legs ADD COLUMN starting_until timestamptz',
    // The reconciliation report reads a period's legs in start order (commands/reconciliation.ts).
    'CREATE INDEX provider_legs_by_start ON provider_legs (created_at, reference)',
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['ALTER TABLE provider_legs DROP COLUMN provider_leg_id', 'ALTER TABLE provider_legs DROP COLUMN starting_until']);
}
