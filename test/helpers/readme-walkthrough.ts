// Reads the README's walkthrough (issue 31): the command that starts the service and the shell blocks
// a newcomer runs, both between HTML comment markers, so the test runs exactly what the README shows.
import fs from 'node:fs';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '../..');

export function readme(): string {
  return fs.readFileSync(path.join(root, 'README.md'), 'utf8');
}

/** The text between `<!-- tag -->` and `<!-- /tag -->` (each once). */
export function marked(text: string, tag: string): string {
  const open = `<!-- ${tag} -->`;
  const close = `<!-- /${tag} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) throw new Error(`README.md has no ${open} … ${close} section`);
  return text.slice(start + open.length, end);
}

/** The contents of every ```sh fenced block, in order. */
export function shellBlocks(text: string): string[] {
  return [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}

/**
 * The environment the README's start command sets: `A=1 B=2 npm start` → {A: '1', B: '2'}. Anything
 * else in the block is refused, so the README cannot start the service in a way the test does not.
 */
export function startEnv(block: string): Record<string, string> {
  const line = block.trim();
  const m = /^((?:[A-Z_][A-Z0-9_]*=\S+\s+)*)npm start$/.exec(line);
  if (!m) throw new Error(`the README's start command is not "[VAR=value …] npm start": ${line}`);
  return Object.fromEntries(m[1]!.trim().split(/\s+/).filter(Boolean).map((kv) => {
    const i = kv.indexOf('=');
    return [kv.slice(0, i), kv.slice(i + 1)];
  }));
}

/** Files under `dir` (not node_modules, .git, build output or test output) changed since `sinceMs`. */
export function changedFiles(dir: string, sinceMs: number): string[] {
  const skip = new Set(['node_modules', '.git', '.tap', 'dist']);
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (skip.has(entry.name) || entry.name.startsWith('dist.')) continue;
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...changedFiles(p, sinceMs));
    else if (entry.isFile() && fs.statSync(p).mtimeMs >= sinceMs) out.push(p);
  }
  return out;
}
