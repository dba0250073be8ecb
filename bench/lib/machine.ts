// Machine facts printed with every run: ratios travel between machines, absolute figures do not.
import os from 'node:os';
import { postgresVersion } from './database.ts';
import { NATS_URL } from './service.ts';

export interface Machine {
  cpus: number;
  cpuModel: string;
  memoryGb: number;
  loadAverage1m: number;
  node: string;
  postgres: string;
  nats: string | null;
}

async function natsVersion(): Promise<string | null> {
  try {
    const { connect } = await import('@nats-io/transport-node');
    const nc = await connect({ servers: NATS_URL });
    const v = nc.info?.version ?? null;
    await nc.close();
    return v;
  } catch {
    return null;
  }
}

export async function machineFacts(): Promise<Machine> {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    loadAverage1m: Math.round(os.loadavg()[0]! * 100) / 100,
    node: process.version,
    // Unreachable, the run still reports: each scenario then fails with its own reason.
    postgres: await postgresVersion().catch((err: Error) => `unknown (${err.message})`),
    nats: await natsVersion(),
  };
}
