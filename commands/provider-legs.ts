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

/**
 * A start's claim on its leg: the provider its row names, and whether the row was there before this
 * start. The row is written just before a provider is first asked, so a row already there means that
 * provider may have the leg from an earlier start (a redelivered trigger, a start after a crash).
 */
export type LegClaim = { provider: string; existed: boolean };

/**
 * A start's hold on its leg (leg-initiation.ts): `token` is the hold's expiry as the database wrote
 * it, which only this hold has (its release and its moves name it); `heldBefore`: an earlier start
 * held the leg, and may have asked a provider.
 */
export type LegHold = { token: string; heldBefore: boolean };

interface Writers {
  /** A leg's row written unless one is there, and its provider answered: a start's read and write in one statement. */
  claims: StatementBatcher<NewLeg, LegClaim | undefined>;
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
    claims: new StatementBatcher<NewLeg, LegClaim | undefined>(async (asked) => {
      const legs = firstPerReference(asked);
      // A row already there is read from the statement's snapshot: one inserted by a start
      // committing meanwhile is neither added nor seen (no provider answered for it).
      const r = await s.knex.raw<{ rows: Array<{ reference: string; provider: string | null; existed: boolean }> }>(
        `WITH wanted AS (
           SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[])
             AS w(reference, owner, provider, provider_leg_id, kind, created_at)
         ), added AS (
           INSERT INTO provider_legs (reference, owner, provider, provider_leg_id, kind, created_at)
           SELECT * FROM wanted ON CONFLICT (reference) DO NOTHING RETURNING reference, provider
         )
         SELECT w.reference, coalesce(a.provider, p.provider) AS provider, a.reference IS NULL AS existed
           FROM wanted w LEFT JOIN added a USING (reference) LEFT JOIN provider_legs p ON p.reference = w.reference`,
        legColumns(legs),
      );
      const claims = new Map(r.rows.map((row) => [row.reference, row.provider === null ? undefined : { provider: row.provider, existed: row.existed }]));
      // The first claim of a reference in the statement wrote its row; any other found it there.
      const seen = new Set<string>();
      return asked.map((l) => {
        const claim = claims.get(l.reference);
        const first = !seen.has(l.reference);
        seen.add(l.reference);
        return claim && { ...claim, existed: claim.existed || !first };
      });
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

/**
 * Records a leg as started at `leg.provider` unless it has a row already (a row is never moved by
 * this: only a start holding the leg moves it, moveLeg); answers the provider its row names (the one
 * that may have the leg) and whether the row was there, or undefined when another start wrote the
 * row at the same moment.
 */
export function claimLeg(s: Services, leg: NewLeg): Promise<LegClaim | undefined> {
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
 * Holds the leg's start for `ms` (a start that may fail over: leg-initiation.ts); undefined while
 * another start holds it. No connection is held meanwhile: a start that dies frees it by expiry.
 * `starting_until` is NULL until a first hold; a release leaves '-infinity', so a later hold knows
 * an earlier start held the leg (the row locked first, to read its value before this update).
 */
export async function holdStart(s: Services, reference: string, ms: number): Promise<LegHold | undefined> {
  const r = await s.knex.raw<{ rows: Array<{ token: string; held_before: boolean }> }>(
    `UPDATE provider_legs p SET starting_until = now() + make_interval(secs => ?)
       FROM (SELECT reference, starting_until FROM provider_legs WHERE reference = ? FOR UPDATE) o
     WHERE p.reference = o.reference AND (o.starting_until IS NULL OR o.starting_until < now())
     RETURNING p.starting_until::text AS token, o.starting_until IS NOT NULL AS held_before`,
    [ms / 1000, reference],
  );
  const row = r.rows[0];
  return row && { token: row.token, heldBefore: row.held_before };
}

/**
 * Moves a held leg to the next provider of its routing (the one asked before certainly did not take
 * it), and extends the hold by `ms` for that provider's calls; answers the hold's new token, or
 * undefined when the hold is no longer this start's (it expired and another start took it).
 */
export async function moveLeg(s: Services, hold: string, leg: NewLeg, ms: number): Promise<string | undefined> {
  const r = await s.knex.raw<{ rows: Array<{ token: string }> }>(
    `UPDATE provider_legs SET provider = ?, provider_leg_id = ?, starting_until = now() + make_interval(secs => ?)
     WHERE reference = ? AND starting_until::text = ? AND starting_until > now()
     RETURNING starting_until::text AS token`,
    [leg.provider, leg.providerLegId, ms / 1000, leg.reference, hold],
  );
  return r.rows[0]?.token;
}

/** Ends this start's hold (a hold that expired and was taken by another start is that one's, and stays). */
export async function releaseStart(s: Services, reference: string, hold: string): Promise<void> {
  await s.knex.raw(
    `UPDATE provider_legs SET starting_until = '-infinity' WHERE reference = ? AND starting_until::text = ?`,
    [reference, hold],
  );
}
