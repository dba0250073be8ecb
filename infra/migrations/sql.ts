import type { Knex } from 'knex';

// PGlite runs knex.raw as one prepared statement, which admits a single command: run them one by one.
export async function runStatements(knex: Knex, statements: string[]): Promise<void> {
  for (const s of statements) await knex.raw(s);
}
