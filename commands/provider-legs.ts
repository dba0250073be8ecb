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
 * A start's hold on its leg (leg-initiation.ts). `token`: the hold's expiry as the database wrote it,
 * which only this hold has (its release and its moves name it); `provider`: the provider the row
 * names; `mayHaveIt`: that provider may have the leg from an earlier start (one that asked it and
 * released the hold saying so, or died holding it, or the provider answered for it).
 */
export type LegHold = { token: string; provider: string; mayHaveIt: boolean };

/** A hold asked for: the leg and how long the start may need it. */
type HoldAsked = { reference: string; ms: number };
/** A hold given back: its token, and whether the row's provider may now have the leg. */
type HoldReleased = { reference: string; token: string; mayHaveIt: boolean };

interface Writers {
  /** A leg's row written unless one is there, and its provider answered: a start's read and write in one statement. */
  claims: StatementBatcher<NewLeg, string | undefined>;
  holds: StatementBatcher<HoldAsked, LegHold | undefined>;
  releases: StatementBatcher<HoldReleased, void>;
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
    holds: new StatementBatcher(async (asked) => holdRows(s, asked)),
    releases: new StatementBatcher<HoldReleased, void>(async (given) => {
      // '-infinity': its provider may have the leg (see holdRows); NULL: this start never reached it.
      await s.knex.raw(
        `UPDATE provider_legs p SET starting_until = CASE WHEN x.may_have_it THEN '-infinity'::timestamptz END
           FROM unnest(?::text[], ?::text[], ?::boolean[]) AS x(reference, token, may_have_it)
         WHERE p.reference = x.reference AND p.starting_until = x.token::timestamptz`,
        [given.map((g) => g.reference), given.map((g) => g.token), given.map((g) => g.mayHaveIt)],
      );
      return given.map(() => undefined);
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
 * that may have the leg), or undefined when another start wrote the row at the same moment.
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
 * Holds the leg's start for `ms` (leg-initiation.ts: a start at a provider that can refuse it);
 * undefined while another start holds it. No connection is held meanwhile: a start that dies frees
 * it by expiry. The legs held together are one statement.
 */
export function holdStart(s: Services, reference: string, ms: number): Promise<LegHold | undefined> {
  return writers(s).holds.submit({ reference, ms });
}

/**
 * `starting_until` says what the starts before knew: NULL, the provider the row names was never
 * asked; '-infinity', it was (a release said so); a time past, a start died holding the leg (it may
 * have asked); a time to come, a start holds it. The rows are locked first (in one order: batches
 * never wait on each other in a cycle), to read that value before this update.
 */
async function holdRows(s: Services, asked: HoldAsked[]): Promise<Array<LegHold | undefined>> {
  const references = [...new Set(asked.map((a) => a.reference))];
  const r = await s.knex.raw<{ rows: Array<{ reference: string; provider: string; token: string; may_have_it: boolean }> }>(
    `UPDATE provider_legs p SET starting_until = now() + make_interval(secs => ?)
       FROM (SELECT reference, starting_until, provider_reference FROM provider_legs
              WHERE reference = ANY (?::text[]) ORDER BY reference FOR UPDATE) o
     WHERE p.reference = o.reference AND (o.starting_until IS NULL OR o.starting_until < now())
     RETURNING p.reference, p.provider, to_json(p.starting_until) #>> '{}' AS token,
       (o.starting_until IS NOT NULL OR o.provider_reference IS NOT NULL) AS may_have_it`,
    [Math.max(...asked.map((a) => a.ms)) / 1000, references],
  );
  const held = new Map(r.rows.map((row) => [row.reference, { token: row.token, provider: row.provider, mayHaveIt: row.may_have_it }]));
  // One start per reference gets its hold: the first asked; any other is told it is held.
  return asked.map((a) => {
    const hold = held.get(a.reference);
    held.delete(a.reference);
    return hold;
  });
}

/**
 * Moves a held leg to the next provider of its routing (the one asked before certainly did not take
 * it: never asked there yet, and no reference from it), and extends the hold by `ms` for that
 * provider's calls; answers the hold's new token, or undefined when the hold is no longer this
 * start's (it expired, another took it).
 */
export async function moveLeg(s: Services, token: string, leg: NewLeg, ms: number): Promise<string | undefined> {
  const r = await s.knex.raw<{ rows: Array<{ token: string }> }>(
    `UPDATE provider_legs SET provider = ?, provider_leg_id = ?, provider_reference = NULL, starting_until = now() + make_interval(secs => ?)
     WHERE reference = ? AND starting_until = ?::timestamptz AND starting_until > now()
     RETURNING to_json(starting_until) #>> '{}' AS token`,
    [leg.provider, leg.providerLegId, ms / 1000, leg.reference, token],
  );
  return r.rows[0]?.token;
}

/** Extends a hold this start still has by `ms`; answers its new token, or undefined when the hold is no longer this start's. */
export async function extendHold(s: Services, token: string, reference: string, ms: number): Promise<string | undefined> {
  const r = await s.knex.raw<{ rows: Array<{ token: string }> }>(
    `UPDATE provider_legs SET starting_until = now() + make_interval(secs => ?)
     WHERE reference = ? AND starting_until = ?::timestamptz AND starting_until > now()
     RETURNING to_json(starting_until) #>> '{}' AS token`,
    [ms / 1000, reference, token],
  );
  return r.rows[0]?.token;
}

/**
 * Ends this start's hold, saying whether the provider the row names may now have the leg (this start
 * asked it, or a start before did and this one did not move the leg on). A hold that expired and
 * was taken by another start is that one's, and stays.
 */
export function releaseStart(s: Services, reference: string, token: string, mayHaveIt: boolean): Promise<void> {
  return writers(s).releases.submit({ reference, token, mayHaveIt });
}
