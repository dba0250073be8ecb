// A TypeScript helper process (a ceiling server, the MTN simulator) started with tsx and stopped with SIGTERM.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './service.ts';
import { freePort, waitForHttp } from './net.ts';

export interface Child {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function startHttpChild(file: string, env: Record<string, string>, label: string): Promise<Child> {
  const port = await freePort();
  const logFile = path.join(os.tmpdir(), `mpa-bench-${label}-${process.pid}.log`);
  const log = fs.openSync(logFile, 'w');
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    cwd: ROOT, env: { ...process.env, ...env, PORT: String(port) }, stdio: ['ignore', log, log],
  });
  let exited = false;
  const exitedP = new Promise<void>((resolve) => child.once('exit', () => { exited = true; resolve(); }));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/healthz`, 30_000, () => !exited);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`${(err as Error).message}: ${fs.readFileSync(logFile, 'utf8').slice(-2000)}`);
  }
  return {
    url, pid: child.pid!,
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        const hard = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exitedP;
        clearTimeout(hard);
      }
      fs.closeSync(log);
    },
  };
}
