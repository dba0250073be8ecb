// A private nats-server (JetStream, file store in a temp dir, free port) for crash tests: it can be
// killed with SIGKILL and started again on the same port and store. Every process started here is
// killed by stop(), which the tests register as a teardown.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { freePort } from './net.ts';

/** The nats-server binary: $NATS_SERVER_BIN, else one on the PATH, else /usr/sbin/nats-server. */
export function natsServerBinary(): string | undefined {
  const candidates = [
    process.env.NATS_SERVER_BIN,
    ...(process.env.PATH ?? '').split(path.delimiter).map((d) => path.join(d, 'nats-server')),
    '/usr/sbin/nats-server',
  ];
  return candidates.find((c): c is string => !!c && fs.existsSync(c));
}


function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

export class PrivateNatsServer {
  private proc: ChildProcess | undefined;
  private exited: Promise<void> | undefined;

  private constructor(
    readonly bin: string,
    readonly port: number,
    readonly storeDir: string,
  ) {}

  static async start(bin: string): Promise<PrivateNatsServer> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-js-'));
    const server = new PrivateNatsServer(bin, await freePort(), dir);
    await server.start();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  /** Starts (again) on the same port and store directory; resolves once JetStream answers. */
  async start(): Promise<void> {
    if (this.proc) throw new Error('already running');
    const proc = spawn(this.bin, ['-js', '-sd', this.storeDir, '-a', '127.0.0.1', '-p', String(this.port)], { stdio: 'ignore' });
    this.proc = proc;
    this.exited = new Promise<void>((r) => proc.once('exit', () => r()));
    const until = Date.now() + 15_000;
    while (!(await accepts(this.port))) {
      if (Date.now() > until || proc.exitCode !== null) throw new Error(`nats-server did not start on port ${this.port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const nc = await connect({ servers: this.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.getAccountInfo();
    } finally {
      await nc.close();
    }
  }

  /** kill -9: the server gets no chance to flush anything. */
  async kill9(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    proc.kill('SIGKILL');
    await this.exited;
    this.proc = undefined;
  }

  /** Kills the server (if running) and removes its store. */
  async stop(): Promise<void> {
    await this.kill9();
    fs.rmSync(this.storeDir, { recursive: true, force: true });
  }
}
