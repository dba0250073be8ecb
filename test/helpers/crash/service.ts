// The service under test as a child process (`node --import tsx app/main.ts`), on one port and one
// set of data for its whole life: started, killed with SIGKILL (by the test, or by itself at an armed
// crash point, CRASH_AT), and started again on the same data, as many times as the test wants.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { request } from '../app.ts';

export interface Life {
  /** 1-based count of starts. */
  n: number;
  crashAt: string | undefined;
  child: ChildProcess;
  /** Resolves when the process has exited (however). */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Set when the process reported reaching its armed crash point just before killing itself. */
  crashPointHit: string | undefined;
  /** The test sent the SIGKILL (a timer kill, not a crash point). */
  killedByTest: boolean;
  /** From spawn to /readyz 200 (undefined: it died first). */
  readyMs: number | undefined;
  /** When /readyz first answered 200 (epoch ms). */
  readyAt: number | undefined;
  /** The test ends it with SIGTERM (stop). */
  stopping: boolean;
}

const exited = (l: Life) => l.child.exitCode !== null || l.child.signalCode !== null;
/** Killed or stopped by the test, or at its armed crash point (the in-doubt point ends no process). */
const endedOnPurpose = (l: Life) => l.killedByTest || l.stopping || (l.crashPointHit !== undefined && !l.crashPointHit.startsWith('append-in-doubt'));

const root = path.resolve(import.meta.dirname, '../../..');
const LOG_LINES_KEPT = 400;

export class ChildService {
  readonly url: string;
  private lives: Life[] = [];
  private readonly logLines: string[] = [];

  constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  get current(): Life | undefined {
    const l = this.lives[this.lives.length - 1];
    return l && !exited(l) ? l : undefined;
  }

  get starts(): number {
    return this.lives.length;
  }

  /**
   * When the newest life became ready; undefined while it starts, once it was ended on purpose (a
   * new one is about to start) or if it never got ready. A life that died by itself keeps it.
   */
  newestReadyAt(): number | undefined {
    const l = this.lives.at(-1);
    return l && !(exited(l) && endedOnPurpose(l)) ? l.readyAt : undefined;
  }

  /** The lives that ended by themselves (a process that exits on its own is a defect, whatever the load recovers from). */
  exitedByThemselves(): string[] {
    return this.lives.filter((l) => exited(l) && !endedOnPurpose(l))
      .map((l) => `life ${l.n} exited by itself (${l.child.exitCode ?? l.child.signalCode})`);
  }

  /** Start-to-ready times of every life that got ready. */
  get readyTimesMs(): number[] {
    return this.lives.flatMap((l) => (l.readyMs === undefined ? [] : [l.readyMs]));
  }

  /** The last lines the processes wrote (all lives), for a failing test's output. */
  log(): string {
    return this.logLines.join('');
  }

  private keep(prefix: string, chunk: Buffer, life: Life): void {
    const text = chunk.toString();
    const m = /CRASH POINT (\S+) reached/.exec(text);
    if (m) life.crashPointHit = m[1];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      this.logLines.push(`[${prefix}] ${line.slice(0, 2000)}\n`);
      if (this.logLines.length > LOG_LINES_KEPT) this.logLines.shift();
    }
  }

  /** Starts a new life (the previous one must be gone) and waits until /readyz answers 200. */
  async start(crashAt?: string, readyTimeoutMs = 90_000): Promise<Life> {
    if (this.current) throw new Error('the service is still running');
    const child = spawn(process.execPath, ['--import', 'tsx', 'app/main.ts'], {
      cwd: root,
      env: { ...this.env, PORT: String(this.port), HOST: '127.0.0.1', ...(crashAt ? { CRASH_AT: crashAt } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const life: Life = {
      n: this.lives.length + 1, crashAt, child, crashPointHit: undefined, killedByTest: false, readyMs: undefined, readyAt: undefined, stopping: false,
      exited: new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal }))),
    };
    this.lives.push(life);
    const prefix = `life ${life.n}`;
    child.stdout!.on('data', (c: Buffer) => this.keep(prefix, c, life));
    child.stderr!.on('data', (c: Buffer) => this.keep(prefix, c, life));
    const spawned = Date.now();
    const until = spawned + readyTimeoutMs;
    for (;;) {
      const r = await request(this.url, 'GET', '/readyz').catch(() => undefined);
      if (r?.status === 200) {
        life.readyAt = Date.now();
        life.readyMs = life.readyAt - spawned;
        return life;
      }
      if (exited(life)) {
        // An armed crash point may fire while the service recovers, before it is ready: a life too.
        if (life.crashPointHit) return life;
        throw new Error(`the service exited while starting (${child.exitCode ?? child.signalCode}):\n${this.log()}`);
      }
      if (Date.now() > until) throw new Error(`the service was not ready within ${readyTimeoutMs} ms:\n${this.log()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** SIGKILL the running life (if any) and wait for it to be gone. */
  async kill(): Promise<void> {
    const life = this.current;
    if (!life) return;
    life.killedByTest = true;
    life.child.kill('SIGKILL');
    await life.exited;
  }

  /** SIGTERM and wait (the end of the test: a clean shutdown releases the embedded database). */
  async stop(): Promise<void> {
    const life = this.current;
    if (!life) return;
    life.stopping = true;
    life.child.kill('SIGTERM');
    const timer = setTimeout(() => life.child.kill('SIGKILL'), 25_000);
    await life.exited;
    clearTimeout(timer);
  }
}
