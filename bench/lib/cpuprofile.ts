// Aggregates a V8 .cpuprofile (node --cpu-prof): self time by function and by file/package, so the
// payin-create hot path can be read without a GUI (bench/profile.ts prints it; bench/PROFILE.md
// is the written analysis).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

export interface Row { name: string; ms: number; pct: number }

function fileOf(url: string): string {
  if (!url) return '(native/idle)';
  const u = url.replace(/^file:\/\//, '');
  const nm = u.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = u.slice(nm + 13).split('/');
    return `npm:${rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]}`;
  }
  if (u.startsWith('node:')) return u;
  // The service runs from its build (dist/*.js, bin/service): named by the source file it came from.
  const dist = u.lastIndexOf('/dist/');
  if (dist >= 0) return u.slice(dist + 6).replace(/\.js$/, '.ts');
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  return u.startsWith(`${root}/`) ? u.slice(root.length + 1) : u;
}

export function aggregate(file: string, top = 25): { totalMs: number; byFunction: Row[]; byFile: Row[] } {
  const p = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const fn = new Map<string, number>();
  const files = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    const f = fileOf(n.callFrame.url);
    const name = `${n.callFrame.functionName || '(anonymous)'} ${f}${n.callFrame.url ? `:${n.callFrame.lineNumber + 1}` : ''}`;
    fn.set(name, (fn.get(name) ?? 0) + us);
    files.set(f, (files.get(f) ?? 0) + us);
  }
  const rows = (m: Map<string, number>) => [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)
    .map(([name, us]) => ({ name, ms: Math.round(us / 1000), pct: Math.round((us / total) * 1000) / 10 }));
  return { totalMs: Math.round(total / 1000), byFunction: rows(fn), byFile: rows(files) };
}
