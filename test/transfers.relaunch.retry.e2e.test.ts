// A relaunch retried after the process died between its append and its answer (found by the crash
// suite, test/crash.consistency.e2e.test.ts): the retry takes over the idempotency claim with the same
// resource id, and must answer the relaunch it already made (200, the transfer disbursing), not
// refuse it with 400 relaunch_not_allowed because the transfer is no longer failed.
import t from 'tap';
import * as T from '../domain/transfer.ts';
import { deciderSpec } from './helpers/spec.ts';
import { startTestApp } from './helpers/app.ts';
import { createTransfer, recipientSN, settledTransfer, transferMerchant, waitFor } from './helpers/transfers.ts';
import { requestHash } from '../commands/idempotency.ts';
import { relaunchPayout } from '../commands/transfers.ts';
import type { Recipient } from '../domain/payment.ts';

t.test('domain: a relaunch decided again by the same request decides nothing; another request is refused', async (t) => {
  const at = '2026-06-01T10:00:00.000Z';
  const id = '11111111-1111-4111-8111-111111111111';
  const recipient = { country_code: 'SN', rail_type: 'mobile_money', phone: '+221770000001', operator_code: 'SN_WAVE_MOMO', recipient_type: 'individual' };
  const ev = (type: string, data: Record<string, unknown>) => ({ type, data }) as T.TransferEvent;
  const history = [
    ev('transfer.created', {
      transfer_id: id, merchant_id: 'm', customer_id: 'c', quote_id: 'q', payin_amount: '10204', payin_currency: 'XAF', payout_amount: '10000',
      payout_currency: 'XOF', total_fee: '204', corridor_code: 'CM-SN-XAF-XOF', corridor_type: 'cross_border', payer_operator_code: 'CM_MTN_MOMO',
      recipient_operator_code: 'SN_WAVE_MOMO', payer: { country_code: 'CM', rail_type: 'mobile_money', phone: '+237670000001', operator_code: 'CM_MTN_MOMO' },
      recipient, pricing: {}, wallet_impact: null, payment_reason_code: null, sender_source_of_funds: null, sender_occupation: null, metadata: {}, otp_required: false, at,
    }),
    ev('transfer.collection_started', { leg_reference: T.collectionReference(id), operator_code: 'CM_MTN_MOMO', phone: '+237670000001', amount: '10204', currency: 'XAF', otp: false, at }),
    ev('transfer.payin.completed', { provider_reference: 'SBX-1', at }),
    ev('transfer.payout.started', { attempt: 1, leg_reference: T.payoutReference(id, 1), amount: '10000', currency: 'XOF', recipient, at }),
    ev('transfer.payout.failed', { attempt: 1, reason: 'RECIPIENT_NOT_FOUND', at }),
    ev('transfer.failed', { reason: 'RECIPIENT_NOT_FOUND', at }),
  ];
  const given = (events: T.TransferEvent[]) => deciderSpec(T.transferDecider).given(events);
  const relaunch = (relaunchId: string): T.TransferCommand => ({ type: 'RelaunchPayout', data: { merchantId: 'm', availability: {}, at, relaunchId } });
  const relaunched = ev('transfer.payout.started', { attempt: 2, leg_reference: T.payoutReference(id, 2), amount: '10000', currency: 'XOF', recipient, at, relaunch_id: 'r1' });
  given(history).when(relaunch('r1')).then(t, [relaunched], 'the relaunch names its request');
  given([...history, relaunched]).when(relaunch('r1')).then(t, [], 'the same request again: already done');
  given([...history, relaunched]).when(relaunch('r2')).thenThrows(t, 'relaunch_not_allowed', 'another request is refused');
});

t.test('HTTP: the retry of a relaunch whose first attempt appended and died answers 200 with that relaunch', async (t) => {
  const h = await startTestApp();
  t.teardown(() => h.stop());
  const s = h.app.services;
  const m = await transferMerchant(h);
  const tr = await createTransfer(h, m, { recipient: recipientSN('+221770000099') }); // the first disbursement fails
  await settledTransfer(h, m, tr.id, 'failed');

  // The first attempt: it claimed the key, appended the relaunch, and the process died before it
  // could store its answer (its claim is left in progress, as a SIGKILL leaves it).
  const key = 'relaunch-crashed-once';
  const path = `/transfers/${tr.id}/relaunch-payout`;
  const body = { recipient: recipientSN('+221770000002') };
  const claim = await s.idempotency.claim(m.merchantId, key, 'POST', path, requestHash(s.secrets, 'POST', path, body));
  t.equal(claim.kind, 'run');
  const resourceId = (claim as { resourceId: string }).resourceId;
  await relaunchPayout(s, { transferId: tr.id, merchantId: m.merchantId, payoutAmount: undefined, recipient: body.recipient as Recipient, relaunchId: resourceId }, { actor: 'test' });
  // Its lease runs out (the process is gone): the merchant's retry takes the claim over.
  await s.knex('idempotency_keys').where({ merchant_id: m.merchantId, key }).update({ locked_until: new Date(Date.now() - 1000) });

  const retry = await h.as(m, 'POST', path, body, { idem: key });
  t.equal(retry.status, 200, `the retry answers the relaunch it made (${retry.text.slice(0, 200)})`);
  t.equal(retry.body.execution?.disbursements?.length, 2, 'one relaunch: attempt 2, no third');
  const done = await waitFor('relaunched transfer completed', async () => {
    const r = await h.as(m, 'GET', `/transfers/${tr.id}`);
    return r.body.status === 'completed' ? r.body : undefined;
  });
  t.equal(done.execution.disbursements.length, 2, 'completed on attempt 2');
  const again = await h.as(m, 'POST', path, body, { idem: key });
  t.equal(again.status, 200, 'replayed');
  t.equal(again.body._meta?.idempotency_replayed, true);
  const other = await h.as(m, 'POST', path, body, { idem: 'another-relaunch' });
  t.equal(other.status, 400, 'a different relaunch request after it is refused');
  t.equal(other.body.error.code, 'relaunch_not_allowed');
});
