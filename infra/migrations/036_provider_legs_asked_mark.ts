import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Issue 41: provider_legs.starting_until now also says whether the provider a leg's row names may
// have the leg (commands/provider-legs.ts): NULL, no start asked it; '-infinity', one did. Rows from
// before said nothing of the kind: their NULL was left by every release, and by starts that took no
// hold at all, after asking the provider. Read as "never asked", such a leg's next start would take a
// refusal (the provider unreachable for a moment) as certain and fail it over, or fail it, while the
// provider may have it. So every row of a provider that can refuse a leg is marked as asked: its
// next start checks a refusal against the leg's status first. A hold in progress keeps its time.

export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `UPDATE provider_legs SET starting_until = '-infinity' WHERE starting_until IS NULL AND provider <> 'sandbox'`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, [`UPDATE provider_legs SET starting_until = NULL WHERE starting_until = '-infinity'`]);
}
