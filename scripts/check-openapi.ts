// `npm run check:openapi`: Redocly CLI's lint (redocly.yaml: the recommended ruleset, each exception
// with its reason) on the document the service serves, built as scripts/openapi-document.ts does.
// Redocly fails only on errors; this fails on warnings too: the document is a product.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const redoclyPackage = createRequire(import.meta.url).resolve('@redocly/cli/package.json');
const redocly = path.join(path.dirname(redoclyPackage), (JSON.parse(fs.readFileSync(redoclyPackage, 'utf8')) as { bin: Record<string, string> }).bin.redocly!);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
const file = path.join(dir, 'openapi.json');
try {
  const built = spawnSync(process.execPath, ['--import=tsx', path.join(root, 'scripts/openapi-document.ts'), file], { cwd: root, stdio: 'inherit' });
  if (built.status !== 0) process.exit(1);
  const lint = spawnSync(process.execPath, [redocly, 'lint', file, '--config', path.join(root, 'redocly.yaml'), '--format=stylish'], {
    cwd: root, encoding: 'utf8', env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  });
  const output = `${lint.stdout}${lint.stderr}`;
  const problems = output.split('\n').filter((l) => /^\s+\d+:\d+\s+(error|warning)\s/.test(l));
  for (const p of problems) console.log(p.trim());
  if (lint.status !== 0 || problems.length > 0) {
    if (problems.length === 0) console.log(output);
    console.log(`openapi lint: ${problems.length} problem(s)`);
    process.exit(1);
  }
  console.log('openapi lint: no error, no warning (redocly.yaml: recommended)');
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
