// The service's dependency rules (issue 29; docs/ARCHITECTURE.md, "Layers"). `.ci/run` runs
// `npm run check:deps`, which fails on any violation. Dependencies point one way:
//
//   domain  ←  commands, projections  ←  api, workers, dashboard, pay  ←  app, cli (composition roots)
//                        ↖ infra (adapters) ↗
//
// - i18n/ (message catalogues, language choice, formats) is a leaf: it imports only i18n/; the
//   dashboard and the payer's page (pay/) use it.
// - domain/ is pure: it imports only domain/ and libraries.
// - infra/ (adapters: event stores, buses, database, outbound HTTP, clock, secrets) imports only
//   infra/ and domain/. The adapters that choose a backend (the event-store and bus
//   implementations, opening the database, the embedded server, migrations, the logger) are
//   imported by the composition roots only; every other layer sees their interfaces
//   (infra/eventstore/types.ts, infra/bus/types.ts, infra/db.ts's Database).
// - commands/ (the write side) and projections/ (the read side) import domain/ and infra/, and not
//   each other.
// - api/, workers/ and dashboard/ import commands/, the read side of projections/, domain/ and
//   infra/ ports; never each other, except that the dashboard renders through the API's views.
// - app/ and cli/ build and start everything; nothing imports them.
// Tests, benchmarks and scripts may import anything.
const SOURCES = '^(domain|commands|projections|api|workers|infra|dashboard|pay|i18n|cli|app|webhook-verifier)/';

module.exports = {
  forbidden: [
    {
      name: 'no-cycle',
      severity: 'error',
      comment: 'An import cycle: two modules that each need the other have one job between them, or a shared type in the wrong place.',
      from: { path: SOURCES },
      to: { circular: true },
    },
    {
      name: 'domain-is-pure',
      severity: 'error',
      comment: 'domain/ decides on values alone: it imports only domain/ and libraries.',
      from: { path: '^domain/' },
      to: { path: SOURCES, pathNot: '^domain/' },
    },
    {
      name: 'infra-is-below',
      severity: 'error',
      comment: 'An adapter knows the domain and other adapters, never the layers that use it.',
      from: { path: '^infra/' },
      to: { path: SOURCES, pathNot: '^(infra|domain)/' },
    },
    {
      name: 'write-and-read-sides-apart',
      severity: 'error',
      comment: 'commands/ and projections/ import domain/ and infra/ only (not each other, nothing above).',
      from: { path: '^(commands|projections)/' },
      to: { path: SOURCES, pathNot: '^(domain|infra)/|^$1/' },
    },
    {
      name: 'edges-do-not-import-each-other',
      severity: 'error',
      comment: 'api/ and workers/ are independent edges of the service (the dashboard may render through the API, not the other way round).',
      from: { path: '^(api|workers)/' },
      to: { path: '^(api|workers|dashboard)/', pathNot: '^$1/' },
    },
    {
      name: 'i18n-is-a-leaf',
      severity: 'error',
      comment: 'The catalogues and the language choice import nothing of the service.',
      from: { path: '^i18n/' },
      to: { path: SOURCES, pathNot: '^i18n/' },
    },
    {
      name: 'payer-page-and-dashboard-apart',
      severity: 'error',
      comment: 'The payer\'s page (pay/) and the dashboard are separate edges; neither imports the other, nor workers/; api/ imports neither.',
      from: { path: '^(pay|dashboard)/' },
      to: { path: '^(pay|dashboard|workers)/', pathNot: '^$1/' },
    },
    {
      name: 'api-not-into-payer-page',
      severity: 'error',
      from: { path: '^(api|workers|domain|commands|projections|infra)/' },
      to: { path: '^pay/' },
    },
    {
      name: 'dashboard-not-into-workers',
      severity: 'error',
      from: { path: '^dashboard/' },
      to: { path: '^workers/' },
    },
    {
      name: 'nothing-imports-the-composition-roots',
      severity: 'error',
      comment: 'app/ and cli/ build the service from its parts; a part that imports them imports everything.',
      from: { path: SOURCES, pathNot: '^(app|cli)/' },
      to: { path: '^(app|cli)/' },
    },
    {
      name: 'backends-chosen-by-the-composition-root',
      severity: 'error',
      comment: 'Which event store, bus and database run is the composition root\'s choice: other layers use the ports.',
      from: { path: SOURCES, pathNot: '^(app|cli|infra)/' },
      to: {
        path: '^infra/(eventstore/(postgres|kurrent)|bus/(nats|memory)|embedded-postgres|data-dir-lock|log|migrations/)',
      },
    },
    {
      name: 'read-side-only-above-projections',
      severity: 'error',
      comment: 'api/, workers/ and the dashboard read projections; applying events to read models is the projector\'s.',
      from: { path: '^(api|workers|dashboard|pay)/' },
      to: { path: '^projections/(projector|one-statement-batch|upsert|copy-rows|shadow|swap|row-cache)\\.ts$', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'verifier-stands-alone',
      severity: 'error',
      comment: 'The webhook verifier is copied into merchants\' code: it imports nothing of the service.',
      from: { path: '^webhook-verifier/' },
      to: { path: SOURCES, pathNot: '^webhook-verifier/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'], extensions: ['.ts', '.js', '.mjs', '.json'] },
  },
};
