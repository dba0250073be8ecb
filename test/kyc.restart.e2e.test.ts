// The review is durable and resumes where it stopped: the service stops mid-review, the remaining
// work waits in the jobs table, a run that died holding its lease is taken over once the lease
// expires, and documents already checked are not fetched again.
import t from 'tap';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { newCustomer, passport, reviewed, startFileServer, until } from './helpers/kyc.ts';
import { KYC_REVIEW_JOB } from '../workers/kyc-review.ts';

const files = await startFileServer();
t.teardown(() => files.close());
const env = { KYC_FETCH_TIMEOUT_MS: '4000', JOB_LEASE_MS: '1000' };

t.test('stop mid-review, restart on the same database (after a dead run\'s lease): the verdict comes, nothing fetched twice', async (t) => {
  const first = await startTestApp({ env });
  let second: TestApp | undefined;
  t.teardown(async () => {
    if (second) await second.stop();
    await first.stop();
  });
  const m = await first.newMerchant('Restart');
  const c = await newCustomer(first, m);
  const r = await first.as(m, 'POST', `/customers/${c}/kyc`, {
    documents: [
      passport({ front_file_url: `${files.url}/id.png` }, { document_number: 'ONE' }),
      passport({ front_file_url: `${files.url}/delayed` }, { document_number: 'TWO' }),
      passport({ front_file_url: `${files.url}/doc.pdf` }, { document_number: 'THREE' }),
    ],
  });
  t.equal(r.status, 201);
  const types = async (app: TestApp) => (await app.app.services.store.readStream(`customer-${c}`, 1)).map((e) => e.type);
  // The second document is being fetched (800 ms): stop now. A graceful stop lets that run finish.
  await until('the first document checked', async () => (await types(first)).filter((x) => x === 'customer.kyc_document_checked').length >= 1);
  await first.app.stop();
  const knex = first.database.db.knex;
  const jobs = await knex('jobs').where({ kind: KYC_REVIEW_JOB });
  t.equal(jobs.length, 1, 'the rest of the review waits in the jobs table');
  t.not((await types(first)).at(-1), 'customer.kyc_reviewed', 'no verdict yet');
  // As if a process had claimed the job and died: its lease holds the job for a while.
  const leaseEnds = new Date(Date.now() + 1500);
  const deadLease = '00000000-0000-4000-8000-00000000dead';
  await knex('jobs').where({ kind: KYC_REVIEW_JOB }).update({ locked_until: leaseEnds, lease_id: deadLease });

  second = await startTestApp({ env, shareWith: first });
  const done = await reviewed(second, m, c);
  t.ok(Date.now() >= leaseEnds.getTime() - 50, 'taken over only once the lease expired');
  t.equal(done.kyc_status, 'verified');
  t.same(done.documents.map((d: { status: string }) => d.status), ['verified', 'verified', 'verified']);
  t.same(await types(second), [
    'customer.created', 'customer.kyc_submitted',
    'customer.kyc_document_checked', 'customer.kyc_document_checked', 'customer.kyc_document_checked',
    'customer.kyc_reviewed',
  ], 'each document checked once, one verdict');
  t.equal(files.hits.get('/id.png'), 1, 'the first document was not fetched again');
  t.equal(files.hits.get('/delayed'), 1);
  t.equal((await second.as(m, 'GET', `/customers/${c}`)).body.kyc_status, 'verified');
  // The job's row goes once its last run has returned (removals are batched): wait for it.
  await until('the job is done', async () => (await knex('jobs').where({ kind: KYC_REVIEW_JOB })).length === 0);
  t.pass('the job is done');
});
