// Every schema change, in order. A migration is a TS module, listed here so that tsx and tests
// load them without knex scanning the filesystem.
import type { Knex } from 'knex';
import * as m001 from './001_event_store.ts';
import * as m002 from './002_idempotency_and_merchants.ts';
import * as m003 from './003_customers.ts';
import * as m004 from './004_money.ts';
import * as m005 from './005_jobs.ts';
import * as m006 from './006_webhooks.ts';
import * as m007 from './007_transfers.ts';
import * as m008 from './008_kyc.ts';
import * as m009 from './009_audit.ts';
import * as m010 from './010_idempotency_body_as_sent.ts';
import * as m011 from './011_dashboard.ts';
import * as m012 from './012_lz4_read_models.ts';
import * as m013 from './013_webhook_functions.ts';
import * as m014 from './014_append_function.ts';
import * as m015 from './015_rows_without_events.ts';
import * as m016 from './016_record_webhook_events_each.ts';
import * as m017 from './017_projector_expect.ts';
import * as m018 from './018_append_document.ts';
import * as m019 from './019_fenced_claims.ts';
import * as m020 from './020_snapshots.ts';
import * as m021 from './021_refunds.ts';
import * as m022 from './022_payout_batches.ts';
import * as m023 from './023_webhook_endpoints.ts';
import * as m024 from './024_event_feed.ts';
import * as m025 from './025_wallet_movements.ts';
import * as m026 from './026_webhook_fan_out_outside_feed_lock.ts';
import * as m027 from './027_provider_leg_ids.ts';
import * as m028 from './028_rebuild_failed_payments.ts';
import * as m029 from './029_payment_links.ts';
import * as m030 from './030_api_key_scopes.ts';
import * as m031 from './031_dashboard_roles.ts';
import * as m032 from './032_dashboard_two_factor.ts';
import * as m033 from './033_audit_log.ts';
import * as m034 from './034_event_feed_per_merchant.ts';
import * as m035 from './035_webhook_jobs_leased.ts';
import * as m036 from './036_provider_legs_asked_mark.ts';

export interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const migrations: Array<[string, Migration]> = [
  ['001_event_store', m001],
  ['002_idempotency_and_merchants', m002],
  ['003_customers', m003],
  ['004_money', m004],
  ['005_jobs', m005],
  ['006_webhooks', m006],
  ['007_transfers', m007],
  ['008_kyc', m008],
  ['009_audit', m009],
  ['010_idempotency_body_as_sent', m010],
  ['011_dashboard', m011],
  ['012_lz4_read_models', m012],
  ['013_webhook_functions', m013],
  ['014_append_function', m014],
  ['015_rows_without_events', m015],
  ['016_record_webhook_events_each', m016],
  ['017_projector_expect', m017],
  ['018_append_document', m018],
  ['019_fenced_claims', m019],
  ['020_snapshots', m020],
  ['021_refunds', m021],
  ['022_payout_batches', m022],
  ['023_webhook_endpoints', m023],
  ['024_event_feed', m024],
  ['025_wallet_movements', m025],
  ['026_webhook_fan_out_outside_feed_lock', m026],
  ['027_provider_leg_ids', m027],
  ['028_rebuild_failed_payments', m028],
  ['029_payment_links', m029],
  ['030_api_key_scopes', m030],
  ['031_dashboard_roles', m031],
  ['032_dashboard_two_factor', m032],
  ['033_audit_log', m033],
  ['034_event_feed_per_merchant', m034],
  ['035_webhook_jobs_leased', m035],
  ['036_provider_legs_asked_mark', m036],
];

export const migrationSource: Knex.MigrationSource<[string, Migration]> = {
  getMigrations: async () => migrations,
  getMigrationName: ([name]) => name,
  getMigration: async ([, migration]) => migration,
};
