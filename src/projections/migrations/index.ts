// Every schema change, in order. A migration is a TS module, listed here so that tsx and tests
// load them without knex scanning the filesystem.
import type { Knex } from 'knex';
import * as m001 from './001_event_store.ts';
import * as m002 from './002_idempotency_and_merchants.ts';
import * as m005 from './005_jobs.ts';

export interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const migrations: Array<[string, Migration]> = [
  ['001_event_store', m001],
  ['002_idempotency_and_merchants', m002],
  ['005_jobs', m005],
];

export const migrationSource: Knex.MigrationSource<[string, Migration]> = {
  getMigrations: async () => migrations,
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
};
