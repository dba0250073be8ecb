// What the service is made of: every API module, projection and worker, listed once.
import type { ApiModule } from '../api/module.ts';
import type { Projection } from '../projections/projection.ts';
import type { Worker } from '../workers/worker.ts';
import { adminMerchants } from '../api/routes/admin-merchants.ts';
import { operatorsModule } from '../api/routes/operators.ts';
import { adminOperators } from '../api/routes/admin-operators.ts';
import { adminOperatorRouting } from '../api/routes/admin-operator-routing.ts';
import { customersModule } from '../api/routes/customers.ts';
import { merchantsProjection } from '../projections/merchants.ts';
import { customersProjection } from '../projections/customers.ts';
import { FORWARDER_LEASE_KEY, makeEventForwarder } from '../workers/event-forwarder.ts';
import { leased } from '../workers/leased.ts';
import { quotesModule } from '../api/routes/quotes.ts';
import { payinsModule } from '../api/routes/payins.ts';
import { payoutsModule } from '../api/routes/payouts.ts';
import { payoutsBulkModule } from '../api/routes/payouts-bulk.ts';
import { payoutBatchesProjection } from '../projections/payout-batches.ts';
import { refundsModule } from '../api/routes/refunds.ts';
import { paymentLinksModule } from '../api/routes/payment-links.ts';
import { walletsModule } from '../api/routes/wallets.ts';
import { statementsModule } from '../api/routes/statements.ts';
import { providerCallbacksModule } from '../api/routes/provider-callbacks.ts';
import { moneyProjection } from '../projections/money.ts';
import { walletMovementsProjection } from '../projections/wallet-movements.ts';
import { providerGateway } from '../workers/provider-gateway.ts';
import { eventsModule } from '../api/routes/events.ts';
import { webhookEndpointsModule } from '../api/routes/webhook-endpoints.ts';
import { eventStreamModule } from '../api/routes/event-stream.ts';
import { webhookWorker } from '../workers/webhooks/index.ts';
import { transfersModule } from '../api/routes/transfers.ts';
import { transfersProjection } from '../projections/transfers.ts';
import { refundsProjection } from '../projections/refunds.ts';
import { paymentLinksProjection } from '../projections/payment-links.ts';
import { auditLogProjection } from '../projections/audit-log.ts';
import { transferSaga } from '../workers/transfer-saga.ts';
import { paymentLinkOutcomes } from '../workers/payment-link-outcomes.ts';
import { historyModule } from '../api/routes/history.ts';
import { operationsModule } from '../api/routes/operations.ts';
import { metricsModule } from '../api/routes/metrics.ts';
import { adminReconciliation } from '../api/routes/admin-reconciliation.ts';
import { kycModule } from '../api/routes/kyc.ts';
import { kycProjection } from '../projections/kyc.ts';
import { kycReviewWorker } from '../workers/kyc-review.ts';
import { idempotencyPurge } from '../workers/idempotency-purge.ts';
import { embeddedVacuum } from '../workers/embedded-vacuum.ts';
import { makeDueRebuilds } from '../workers/due-rebuilds.ts';
import { dashboardUsersModule } from '../api/routes/dashboard-users.ts';
import { adminAuditLog } from '../api/routes/admin-audit-log.ts';

export const apiModules: ApiModule[] = [
  adminMerchants,
  adminOperators,
  adminOperatorRouting,
  operatorsModule,
  customersModule,
  kycModule,
  quotesModule,
  payinsModule,
  payoutsModule,
  payoutsBulkModule,
  refundsModule,
  paymentLinksModule,
  walletsModule,
  statementsModule,
  providerCallbacksModule,
  // Before eventsModule: /events/stream must not be taken for /events/{event_id}.
  eventStreamModule,
  eventsModule,
  webhookEndpointsModule,
  transfersModule,
  historyModule,
  operationsModule,
  metricsModule,
  adminReconciliation,
  dashboardUsersModule,
  adminAuditLog,
];

/** What a `--role worker` process serves besides liveness and readiness: its own metrics. */
export const workerModules: ApiModule[] = [metricsModule];

export const projections: Projection[] = [
  merchantsProjection,
  customersProjection,
  kycProjection,
  moneyProjection,
  payoutBatchesProjection,
  transfersProjection,
  refundsProjection,
  paymentLinksProjection,
  walletMovementsProjection,
  auditLogProjection,
];

export const workers: Worker[] = [
  // Bus consumers subscribe before the forwarder starts publishing (the in-process bus keeps nothing
  // for a consumer that is not there yet).
  webhookWorker,
  providerGateway,
  transferSaga,
  paymentLinkOutcomes,
  kycReviewWorker,
  idempotencyPurge,
  embeddedVacuum,
  makeDueRebuilds(() => projections),
  // One forwarder at a time among the processes on the database (each one forwarded every event);
  // a holder that cannot reach its bus steps aside for one that can.
  leased(makeEventForwarder({ types: () => new Set(workers.flatMap((w) => w.consumes?.() ?? [])) }), FORWARDER_LEASE_KEY,
    { healthy: (s) => s.bus.healthy() }),
];
