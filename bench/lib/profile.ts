// The bench profiles: quick (`npm run bench`, under 5 minutes on 2 cores) and full (`-- --full`).
// smoke (`-- --smoke`) runs every phase for a moment: it checks that the bench runs and reports,
// for its own test (test/bench.report.e2e.test.ts); its figures measure nothing.
export interface Profile {
  name: 'quick' | 'full' | 'smoke';
  /** Seconds of each measured load phase, and of the warm-up before it. */
  seconds: number;
  warmupSeconds: number;
  /** Appends per writer-count run of the append scenario. */
  appendSeconds: number;
  transferRate: number;
  transferSeconds: number;
  webhookEvents: number;
  rebuildEvents: number;
  /** Wallet movements (top-ups) in the history scenario's long-lived merchant's wallet. */
  historyMovements: number;
  /** Wallet movements of the as-of scenario's merchant: issue 35's 1,000,000 in quick and full. */
  asOfMovements: number;
}

export const PROFILES: Record<Profile['name'], Profile> = {
  quick: { name: 'quick', seconds: 8, warmupSeconds: 2, appendSeconds: 2, transferRate: 20, transferSeconds: 10, webhookEvents: 300, rebuildEvents: 200_000, historyMovements: 200_000, asOfMovements: 1_000_000 },
  smoke: { name: 'smoke', seconds: 1, warmupSeconds: 0.5, appendSeconds: 1, transferRate: 5, transferSeconds: 1, webhookEvents: 20, rebuildEvents: 2_000, historyMovements: 2_000, asOfMovements: 2_000 },
  full: { name: 'full', seconds: 60, warmupSeconds: 10, appendSeconds: 15, transferRate: 20, transferSeconds: 60, webhookEvents: 3000, rebuildEvents: 1_000_000, historyMovements: 1_000_000, asOfMovements: 1_000_000 },
};
