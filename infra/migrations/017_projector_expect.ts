import type { Knex } from 'knex';
import { runStatements } from './sql.ts';

// Bench issue 8: a projector batch on PostgreSQL is one statement (projections/pipelined-batch.ts):
// the checkpoints moved by compare-and-set in a CTE, the rows written by the statement's other
// CTEs. This fails the whole statement, the rows with it, when the compare-and-set did not move
// every checkpoint (another process applied the batch first): the projector then applies it the
// careful way, under the checkpoint lock.
export async function up(knex: Knex): Promise<void> {
  await runStatements(knex, [
    `CREATE FUNCTION projector_expect_moved(p_moved bigint, p_expected bigint) RETURNS boolean LANGUAGE plpgsql AS $$
     BEGIN
       IF p_moved IS DISTINCT FROM p_expected THEN
         RAISE EXCEPTION 'projector: % of % checkpoints where this process left them', p_moved, p_expected
           USING ERRCODE = '40001';
       END IF;
       RETURN true;
     END $$`,
  ]);
}

export async function down(knex: Knex): Promise<void> {
  await runStatements(knex, ['DROP FUNCTION IF EXISTS projector_expect_moved(bigint, bigint)']);
}
