// Module hooks of test/helpers/ts-loader.mjs: a .ts file is loaded as an ES module from esbuild's
// transform of it (with an inline source map, so stack traces and tap's failure locations point at
// the TypeScript), kept in node_modules/.cache by the file's path and content and the transform's
// options, so a file is transformed once until it changes. Everything else is Node's own loading.
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cacheDir = path.join(root, 'node_modules', '.cache', 'mpa-ts-loader');
// esbuild as tsx depends on it (tsx runs everything else here): the same transform, found through tsx.
const requireFromTsx = createRequire(createRequire(path.join(root, 'package.json')).resolve('tsx'));
const esbuildVersion = requireFromTsx('esbuild/package.json').version;
const options = {
  loader: 'ts', format: 'esm', target: `node${process.versions.node.split('.')[0]}`, sourcemap: 'inline',
  tsconfigRaw: fs.readFileSync(path.join(root, 'tsconfig.json'), 'utf8'), // as tsx reads it (comments and all)
};
const optionsKey = JSON.stringify({ esbuildVersion, options, v: 1 });
let esbuild;

function transformed(file, source) {
  const key = createHash('sha256').update(optionsKey).update('\0').update(file).update('\0').update(source).digest('hex');
  const cached = path.join(cacheDir, `${key.slice(0, 40)}.mjs`);
  try {
    return fs.readFileSync(cached, 'utf8');
  } catch { /* not transformed yet */ }
  esbuild ??= requireFromTsx('esbuild');
  const { code } = esbuild.transformSync(source, { ...options, sourcefile: file });
  fs.mkdirSync(cacheDir, { recursive: true });
  // Written aside and renamed: the run's test files load the same modules at once.
  const aside = `${cached}.${process.pid}.${randomBytes(4).toString('hex')}`;
  fs.writeFileSync(aside, code);
  fs.renameSync(aside, cached);
  return code;
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
  const file = fileURLToPath(url);
  return { format: 'module', source: transformed(file, fs.readFileSync(file, 'utf8')), shortCircuit: true };
}
