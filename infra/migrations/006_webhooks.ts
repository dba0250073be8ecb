import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Webhook events and their delivery attempts (issue 5). Not a read model: the webhook worker owns
// these tables. A row is recorded once per terminal domain event (keyed by its event id) before any
// delivery is attempted; delivery state and attempts cannot be rebuilt from the event store, so a
// projection rebuild never touches them.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE TABLE webhook_events (
      id uuid PRIMARY KEY,
      merchant_id uuid NOT NULL,
      event text NOT NULL,
      resource_type text NOT NULL,
      resource_id text NOT NULL,
      customer_id text,
      stream_id text NOT NULL,
      stream_version integer NOT NULL,
      prev_event_id uuid,
      body text NOT NULL,
      delivery_status text NOT NULL CHECK (delivery_status IN ('pending', 'delivered', 'failed', 'not_configured')),
      attempt_count integer NOT NULL DEFAULT 0,
      scheduled_attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz,
      last_attempt_at timestamptz,
      last_status_code integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL,
      recorded_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (stream_id, stream_version)
    )`,
    `CREATE INDEX webhook_events_merchant ON webhook_events (merchant_id, created_at DESC, id DESC)`,
    `CREATE INDEX webhook_events_resource ON webhook_events (merchant_id, resource_id)`,
    `CREATE INDEX webhook_events_prev ON webhook_events (prev_event_id) WHERE prev_event_id IS NOT NULL`,
    `CREATE TABLE webhook_attempts (
      event_id uuid NOT NULL REFERENCES webhook_events (id),
      attempt integer NOT NULL,
      trigger text NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
      url text,
      attempted_at timestamptz NOT NULL,
      duration_ms integer NOT NULL,
      status_code integer,
      error text,
      succeeded boolean NOT NULL,
      PRIMARY KEY (event_id, attempt)
    )`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP TABLE webhook_attempts', 'DROP TABLE webhook_events']);
}
