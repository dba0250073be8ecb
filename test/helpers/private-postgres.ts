// A private PostgreSQL server for crash tests (initdb into a temp dir, pg_ctl on a free port): it can
// be stopped in immediate mode (no checkpoint, crash recovery at the next start, like a power cut of
// the database) and started again on the same data, without touching the machine's shared server that
// other tests use. initdb refuses to run as root: as root, every command runs as the `postgres` user.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './net.ts';

const run = promisify(execFile);

/** The newest PostgreSQL's bin directory holding initdb and pg_ctl, if any. */
export function postgresBinDir(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs.readdirSync(root).filter((v) => /^[0-9]+$/.test(v)).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = path.join(root, v, 'bin');
    if (fs.existsSync(path.join(bin, 'initdb')) && fs.existsSync(path.join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

const asRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

export class PrivatePostgres {
  private constructor(
    readonly bin: string,
    readonly port: number,
    readonly dir: string,
  ) {}

  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  private async ctl(args: string[]): Promise<string> {
    const cmd = path.join(this.bin, 'pg_ctl');
    const full = ['-D', path.join(this.dir, 'data'), ...args];
    const { stdout } = asRoot()
      ? await run('runuser', ['-u', 'postgres', '--', cmd, ...full], { cwd: '/' })
      : await run(cmd, full, { cwd: '/' });
    return stdout;
  }

  /** initdb (trust auth, user postgres) and start; answers once it accepts connections. */
  static async create(): Promise<PrivatePostgres> {
    const bin = postgresBinDir();
    if (!bin) throw new Error('no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'private-pg-'));
    fs.chmodSync(dir, 0o755);
    if (asRoot()) await run('chown', ['postgres:postgres', dir]);
    const initdb = path.join(bin, 'initdb');
    const args = ['-D', path.join(dir, 'data'), '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C'];
    if (asRoot()) await run('runuser', ['-u', 'postgres', '--', initdb, ...args], { cwd: '/' });
    else await run(initdb, args, { cwd: '/' });
    const server = new PrivatePostgres(bin, await freePort(), dir);
    await server.start();
    return server;
  }

  async start(): Promise<void> {
    const opts = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c max_connections=60 -c shared_buffers=32MB`;
    await this.ctl(['-o', opts, '-l', path.join(this.dir, 'server.log'), '-w', '-t', '60', 'start']);
  }

  /** Immediate mode: every backend is killed without a checkpoint; the next start runs crash recovery. */
  async stopImmediate(): Promise<void> {
    await this.ctl(['-m', 'immediate', '-w', 'stop']);
  }

  async createDatabase(name: string): Promise<string> {
    const c = new pg.Client({ connectionString: this.url() });
    await c.connect();
    try {
      await c.query(`CREATE DATABASE ${name}`);
    } finally {
      await c.end();
    }
    return this.url(name);
  }

  /** The server's own log (crash recovery lines), for a failing test's output. */
  log(): string {
    try {
      return fs.readFileSync(path.join(this.dir, 'server.log'), 'utf8');
    } catch {
      return '';
    }
  }

  /** Stops the server (fast mode) and removes its files. */
  async destroy(): Promise<void> {
    await this.ctl(['-m', 'fast', '-w', 'stop']).catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
