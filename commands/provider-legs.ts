// The gateway's `provider_legs` rows (reference → owner, provider, kind, provider reference),
// written set-wise: the legs started within one turn of the event loop are inserted by one
// statement, and their provider references set by another (bench issue 8: under load the gateway
// starts legs in bursts, and each row was a statement of its own). Each call answers as it would
// alone, the statement running after every call in it was made.
import type { Services } from './services.ts';
import { StatementBatcher } from '../infra/statement-batcher.ts';

export interface NewLeg {
  reference: string;
  owner: string;
  provider: string;
  kind: string;
  createdAt: Date;
}

/** A leg's row as the latency metric needs it. */
export type LegRow = { provider: string; kind: string; created_at: Date | string };

interface Writers {
  inserts: StatementBatcher<NewLeg, void>;
  references: StatementBatcher<{ reference: string; providerReference: string }, LegRow | undefined>;
}

// One set per running app (tests run several in one process).
const built = new WeakMap<Services, Writers>();

function writers(s: Services): Writers {
  let w = built.get(s);
  if (w) return w;
  w = {
    inserts: new StatementBatcher<NewLeg, void>(async (legs) => {
      // A reference started twice (a redelivered trigger) keeps its first row.
      await s.knex.raw(
        `INSERT INTO provider_legs (reference, owner, provider, kind, created_at)
         SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[])
         ON CONFLICT (reference) DO NOTHING`,
        [legs.map((l) => l.reference), legs.map((l) => l.owner), legs.map((l) => l.provider), legs.map((l) => l.kind),
          legs.map((l) => l.createdAt.toISOString())],
      );
      return legs.map(() => undefined);
    }),
    references: new StatementBatcher(async (sets) => {
      // One provider reference per leg (the provider answers a repeated initiate with the first leg's).
      const byRef = new Map(sets.map((x) => [x.reference, x.providerReference]));
      const r = await s.knex.raw<{ rows: Array<LegRow & { reference: string }> }>(
        `UPDATE provider_legs p SET provider_reference = x.provider_reference
           FROM unnest(?::text[], ?::text[]) AS x(reference, provider_reference)
         WHERE p.reference = x.reference
         RETURNING p.reference, p.provider, p.kind, p.created_at`,
        [[...byRef.keys()], [...byRef.values()]],
      );
      const rows = new Map(r.rows.map(({ reference, ...row }) => [reference, row]));
      return sets.map((x) => rows.get(x.reference));
    }),
  };
  built.set(s, w);
  return w;
}

/** Records a leg as started (nothing if its reference has a row already). */
export function recordLeg(s: Services, leg: NewLeg): Promise<void> {
  return writers(s).inserts.submit(leg);
}

/** Sets the leg's provider reference; answers its row (undefined if it has none). */
export function setProviderReference(s: Services, reference: string, providerReference: string): Promise<LegRow | undefined> {
  return writers(s).references.submit({ reference, providerReference });
}
