// `npm run projections -- status | rebuild [name]`: read-model maintenance. Opens the database the
// service uses (same configuration: DATABASE_URL, or the embedded PostgreSQL under $DATA_DIR).
// Progress goes to stderr, the summary to stdout.
//
// Rebuilds are online (projections/rebuild.ts): they run while the service runs, which keeps
// answering from the current tables until the rebuilt ones are swapped in.
// Exit codes: 0 done, 1 failure (database unavailable, rebuild interrupted), 2 usage error.
import type { Config } from '../infra/config.ts';
import { projections } from '../app/registry.ts';
import type { Projection } from '../projections/projection.ts';
import { projectionStatus, rebuildProjection, type RebuildProgress } from '../projections/rebuild.ts';
import { argumentsOrUsage, CliError, UsageError, formatDuration, runCli, withService } from './shared.ts';

const USAGE = `usage: npm run projections -- <command>

commands:
  status           each projection's checkpoint, the event store's head and the lag in events
  rebuild [name]   replay every event into fresh copies of a projection's tables and swap them in
                   (all projections when no name is given). Online: the service keeps answering
                   from the current tables meanwhile.

projections: ${projections.map((p) => p.name).join(', ')}`;

type Command = { kind: 'status' } | { kind: 'rebuild'; targets: Projection[] };

function parse(argv: string[]): Command {
  const [command, ...rest] = argv;
  if (command === 'status' && rest.length === 0) return { kind: 'status' };
  if (command === 'rebuild' && rest.length <= 1) {
    const name = rest[0];
    if (name === undefined) return { kind: 'rebuild', targets: projections };
    const found = projections.find((p) => p.name === name);
    if (!found) throw new UsageError(`unknown projection "${name}"; known projections: ${projections.map((p) => p.name).join(', ')}`);
    return { kind: 'rebuild', targets: [found] };
  }
  throw new UsageError(command === undefined ? 'no command given' : `unknown command "${argv.join(' ')}"`);
}

/** A progress bar with rate and ETA on stderr: redrawn in place on a terminal, a line every few seconds otherwise. */
function progressBar(name: string, stream: NodeJS.WriteStream = process.stderr): { update: RebuildProgress; end(): void } {
  const tty = stream.isTTY === true;
  const width = 30;
  const started = Date.now();
  let lastDraw = 0;
  let last = '';
  let drawn = false;
  const draw = (done: number, total: number, force: boolean) => {
    const now = Date.now();
    if (!force && now - lastDraw < (tty ? 100 : 5000)) return;
    if (`${done}/${total}` === last) return;
    lastDraw = now;
    last = `${done}/${total}`;
    const fraction = total > 0 ? Math.min(1, done / total) : 1;
    const filled = Math.round(fraction * width);
    const elapsed = now - started;
    const rate = elapsed > 0 ? (done / elapsed) * 1000 : 0;
    const eta = total <= done ? '0s' : rate > 0 ? formatDuration(((total - done) / rate) * 1000) : '--';
    const line = `${name} [${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${(fraction * 100).toFixed(0).padStart(3)}% ` +
      `${done}/${total} events, ${Math.round(rate)}/s, ETA ${eta}`;
    stream.write(tty ? `\r\x1b[2K${line}` : `${line}\n`);
    drawn = true;
  };
  return {
    update: (done, total) => draw(done, total, done === 0 || done >= total),
    end: () => {
      if (drawn && tty) stream.write('\n');
    },
  };
}

async function main(argv: string[]): Promise<number> {
  const asked = argumentsOrUsage(() => parse(argv), USAGE);
  if (asked === 2) return 2;
  const { args: command, config } = asked;

  return withService(config, async (db, store) => {
    if (command.kind === 'status') {
      const rows = await projectionStatus(db.knex, store, projections);
      const table = [
        ['projection', 'checkpoint', 'head', 'lag_events', 'state'],
        ...rows.map((r) => [r.projection, r.checkpoint.toString(), r.head.toString(), String(r.lag), r.lag === 0 ? 'up to date' : 'behind']),
      ];
      const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
      for (const row of table) process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()}\n`);
      return 0;
    }
    for (const p of command.targets) {
      const bar = progressBar(p.name);
      try {
        const r = await rebuildProjection(db.knex, store, p, bar.update);
        bar.end();
        process.stdout.write(`rebuilt ${r.projection}: ${r.events} events in ${(r.elapsedMs / 1000).toFixed(1)}s, checkpoint ${r.position}\n`);
      } catch (err) {
        bar.end();
        throw new CliError(`rebuilding ${p.name} failed: ${(err as Error).message}`);
      }
    }
    return 0;
  });
}

runCli('projections', main);
