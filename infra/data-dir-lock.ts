// One service per embedded data directory: its bus is in-process, so a second service on the same
// DATA_DIR would run every worker twice beside it. `<DATA_DIR>/service.pid` holds the pid of the
// service that has it; a file whose process is gone (a killed service) is taken over. The operator
// CLIs do not take it: they work beside a running service, on its PostgreSQL.
import fs from 'node:fs';
import path from 'node:path';

export class DataDirInUseError extends Error {
  constructor(readonly dataDir: string, readonly pid: number, readonly lockFile: string) {
    super(`the data directory ${dataDir} is in use by the service with process id ${pid} (${lockFile}); stop it first, or set DATA_DIR to another directory`);
    this.name = 'DataDirInUseError';
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the data directory for this process; answers the release function. */
export function lockDataDir(dataDir: string): () => void {
  fs.mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'service.pid');
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      fs.writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      return () => {
        try {
          if (fs.readFileSync(file, 'utf8').trim() === String(process.pid)) fs.rmSync(file, { force: true });
        } catch { /* already gone */ }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    let holder = NaN;
    try {
      holder = Number.parseInt(fs.readFileSync(file, 'utf8'), 10);
    } catch { /* removed meanwhile: try again */ }
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
      throw new DataDirInUseError(dataDir, holder, file);
    }
    fs.rmSync(file, { force: true });
  }
  throw new DataDirInUseError(dataDir, NaN, file);
}
