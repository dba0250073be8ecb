// The gateway's `provider_legs` rows (reference → owner, provider, kind, provider reference),
// looked up and written set-wise: the legs started within one turn of the event loop are inserted by one
// statement, and their provider references set by another (bench issue 8: under load the gateway
// starts legs in bursts, and each row was a statement of its own). Each call answers as it would
// alone, the statement running after every call in it was made.
import type { Services } from './services.ts';
import { StatementBatcher } from '../infra/statement-batcher.ts';

export interface NewLeg {
  reference: string;
  owner: string;
  provider: string;
  /** The leg's id at its provider (a callback names only that). */
  providerLegId: string;
  kind: string;
  createdAt: Date;
}

/** A leg's row as the latency metric needs it. */
export type LegRow = { provider: string; kind: string; created_at: Date | string };

/** Who owns a leg and which provider has it. */
export type LegOwner = { owner: string; provider: string; kind: string };

interface Writers {
  inserts: StatementBatcher<NewLeg, void>;
  /** A leg's row written unless one is there, and its provider answered: a start's read and write in one statement. */
  claims: StatementBatcher<NewLeg, string | undefined>;
  /** Reads too: a leg that may fail over is looked up before its start (issue 44: a statement per payin before). */
  rows: StatementBatcher<string, LegOwner | undefined>;
  references: StatementBatcher<{ reference: string; providerReference: string }, LegRow | undefined>;
}

/** The first leg asked for each reference, in order. */
function firstPerReference(asked: NewLeg[]): NewLeg[] {
  const firsts = new Map<string, NewLeg>();
  for (const l of asked) if (!firsts.has(l.reference)) firsts.set(l.reference, l);
  return [...firsts.values()];
}

/** The legs as the column arrays of a provider_legs row: reference, owner, provider, provider_leg_id, kind, created_at. */
function legColumns(legs: NewLeg[]): string[][] {
  return [legs.map((l) => l.reference), legs.map((l) => l.owner), legs.map((l) => l.provider), legs.map((l) => l.providerLegId),
    legs.map((l) => l.kind), legs.map((l) => l.createdAt.toISOString())];
}

// One set per running app (tests run several in one process).
const built = new WeakMap<Services, Writers>();

function writers(s: Services): Writers {
  let w = built.get(s);
  if (w) return w;
  w = {
    inserts: new StatementBatcher<NewLeg, void>(async (asked) => {
      // One row per reference per statement (an upsert cannot touch a row twice): the first asked, as if it ran alone first.
      const legs = firstPerReference(asked);
      // A reference started again (a redelivered trigger) keeps its row and its first start; the
      // provider is the one asked now: the same one, or the next after a certain refusal (leg-initiation.ts).
      await s.knex.raw(
        `INSERT INTO provider_legs (reference, owner, provider, provider_leg_id, kind, created_at)
         SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[])
         ON CONFLICT (reference) DO UPDATE SET provider = EXCLUDED.provider, provider_leg_id = EXCLUDED.provider_leg_id
           WHERE provider_legs.provider <> EXCLUDED.provider`,
        legColumns(legs),
      );
      return asked.map(() => undefined);
    }),
    claims: new StatementBatcher<NewLeg, string | undefined>(async (asked) => {
      const legs = firstPerReference(asked);
      // A row already there is read from the statement's snapshot: one inserted by a start
      // committing meanwhile is neither added nor seen (no provider answered for it).
      const r = await s.knex.raw<{ rows: Array<{ reference: string; provider: string | null }> }>(
        `WITH wanted AS (
           SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[])
             AS w(reference, owner, provider, provider_leg_id, kind, created_at)
         ), added AS (
           INSERT INTO provider_legs (reference, owner, provider, provider_leg_id, kind, created_at)
           SELECT * FROM wanted ON CONFLICT (reference) DO NOTHING RETURNING reference, provider
         )
         SELECT w.reference, coalesce(a.provider, p.provider) AS provider
           FROM wanted w LEFT JOIN added a USING (reference) LEFT JOIN provider_legs p ON p.reference = w.reference`,
        legColumns(legs),
      );
      const providers = new Map(r.rows.map((row) => [row.reference, row.provider ?? undefined]));
      return asked.map((l) => providers.get(l.reference));
    }),
    rows: new StatementBatcher(async (references) => {
      const r = await s.knex.raw<{ rows: Array<LegOwner & { reference: string }> }>(
        'SELECT reference, owner, provider, kind FROM provider_legs WHERE reference = ANY (?::text[])', [[...new Set(references)]],
      );
      const rows = new Map(r.rows.map(({ reference, ...row }) => [reference, row]));
      return references.map((ref) => rows.get(ref));
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

/** Records a leg as started at `provider` (a row already there keeps its first start, and takes this provider). */
export function recordLeg(s: Services, leg: NewLeg): Promise<void> {
  return writers(s).inserts.submit(leg);
}

/**
 * Records a leg as started at `leg.provider` unless it has a row already; answers the provider its
 * row names (the one that may have the leg), or undefined when another start wrote the row at the
 * same moment.
 */
export function claimLeg(s: Services, leg: NewLeg): Promise<string | undefined> {
  return writers(s).claims.submit(leg);
}

/** Sets the leg's provider reference; answers its row (undefined if it has none). */
export function setProviderReference(s: Services, reference: string, providerReference: string): Promise<LegRow | undefined> {
  return writers(s).references.submit({ reference, providerReference });
}

/** The leg's row: who owns it and which provider has it (undefined: never started). */
export function legRowOf(s: Services, reference: string): Promise<LegOwner | undefined> {
  return writers(s).rows.submit(reference);
}

/** The leg a provider names by its own id (a callback's), if we started one. */
export async function legByProviderId(s: Services, provider: string, providerLegId: string): Promise<{ reference: string; owner: string; kind: string } | undefined> {
  return (await s.knex('provider_legs').where({ provider, provider_leg_id: providerLegId }).first('reference', 'owner', 'kind')) as
    { reference: string; owner: string; kind: string } | undefined;
}

/**
 * Holds the leg's start for `ms` (a start that may fail over: leg-initiation.ts); false while
 * another start holds it. No connection is held meanwhile: a start that dies frees it by expiry.
 */
export async function holdStart(s: Services, reference: string, ms: number): Promise<boolean> {
  const r = await s.knex.raw<{ rows: unknown[] }>(
    `UPDATE provider_legs SET starting_until = now() + make_interval(secs => ?)
     WHERE reference = ? AND (starting_until IS NULL OR starting_until < now()) RETURNING reference`,
    [ms / 1000, reference],
  );
  return r.rows.length === 1;
}

export async function releaseStart(s: Services, reference: string): Promise<void> {
  await s.knex('provider_legs').where({ reference }).update({ starting_until: null });
}
