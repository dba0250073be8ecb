import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Finance audit and operations (issue 10).
//  - The event store is append-only: 001 refuses UPDATE and DELETE row by row; a TRUNCATE fires no
//    row trigger, so it is refused here by a statement-level trigger. (Nothing in the service needs
//    to remove events; an operator who really must goes through a superuser and a migration.)
//  - Statements select one merchant's ledger entries in a currency by time: an index for that.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
      FOR EACH STATEMENT EXECUTE FUNCTION events_are_append_only()`,
    `CREATE INDEX ledger_entries_statement ON ledger_entries (merchant_id, currency, created_at, global_position)`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TRIGGER events_no_truncate ON events', 'DROP INDEX ledger_entries_statement']);
}
