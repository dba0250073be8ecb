// `npm run build`: the service's TypeScript compiled to dist/ (what bin/service runs), with the
// dashboard's static files beside the code that serves them. dist/ is emptied first, so a module
// removed from src/ cannot linger in it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
fs.rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
fs.cpSync(path.join(root, 'src/dashboard/static'), path.join(dist, 'dashboard/static'), { recursive: true });
