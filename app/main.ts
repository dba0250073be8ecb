// `npm start [-- --role api|worker|all]`: reads the configuration and runs the service until
// SIGTERM/SIGINT, then shuts down gracefully.
import { loadConfig, ConfigError } from '../infra/config.ts';
import { createLogger } from '../infra/log.ts';
import { startApp } from './app.ts';
import { armCrashPoints } from '../infra/crash-points.ts';
import { setHeapGrowingPercent } from '../infra/heap-growth.ts';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(`configuration error: ${err.message}`);
      process.exit(2);
    }
    throw err;
  }
  setHeapGrowingPercent(config.heapGrowingPercent);
  const log = createLogger(config.logLevel, undefined, config.logFormat);
  armCrashPoints(config.crashAt); // test only: a no-op unless CRASH_AT is set
  if (config.crashAt) log.warn({ crash_at: config.crashAt }, 'crash points armed (CRASH_AT, test only)');
  const app = await startApp({ config, log });
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const force = setTimeout(() => process.exit(1), 20_000);
    force.unref();
    app.stop().then(() => process.exit(0), (err) => {
      log.error({ err }, 'shutdown failed');
      process.exit(1);
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
