// A client generated from the served document works in strict TypeScript (issue 31 point 2):
// openapi-typescript types the document, test/client-flow/flow.ts (openapi-fetch, no `!`) must
// type-check against them with `tsc --strict`, and must stop compiling when a field it reads is no
// longer `required`; then the flow runs against the service.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import { buildDocument } from '../api/openapi/document.ts';
import { systemModule } from '../api/routes/system.ts';
import { apiModules } from '../app/registry.ts';
import { startTestApp } from './helpers/app.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(path.dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');
const flow = path.join(root, 'test/client-flow/flow.ts');
const document = () => JSON.parse(JSON.stringify(buildDocument([systemModule(() => undefined), ...apiModules])));

/** Types `doc` into a fresh directory beside a copy of the flow, and runs `tsc --strict` there. */
async function typeCheck(doc: unknown): Promise<{ ok: boolean; output: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-client-'));
  try {
    fs.writeFileSync(path.join(dir, 'openapi.ts'), astToString(await openapiTS(doc as never)));
    fs.copyFileSync(flow, path.join(dir, 'flow.ts'));
    fs.symlinkSync(path.join(root, 'node_modules'), path.join(dir, 'node_modules'));
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({
      compilerOptions: {
        strict: true, noUncheckedIndexedAccess: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext',
        allowImportingTsExtensions: true, noEmit: true, types: [], lib: ['ES2022', 'DOM'],
        // The libraries' own .d.ts (the DOM's above all) are not what is checked: two-thirds of tsc's time.
        skipLibCheck: true,
      },
      files: ['flow.ts'],
    }));
    const run = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' });
    return { ok: run.status === 0, output: `${run.stdout}${run.stderr}` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

t.test('the flow has no non-null assertion', async (t) => {
  const code = fs.readFileSync(flow, 'utf8').replace(/\/\/.*$/gm, '').replace(/!==?|!\(|!\w|!\s*[a-z]/g, '');
  t.notMatch(code, /[\w)\]]!/, 'no `!` after an expression');
});

t.test('the generated types make the client flow compile in strict mode', async (t) => {
  const r = await typeCheck(document());
  t.ok(r.ok, 'tsc --strict passes');
  if (!r.ok) t.comment(r.output);
});

t.test('it would not compile if a field it reads were not required', async (t) => {
  const doc = document();
  const payin = doc.components.schemas.Payin;
  payin.required = payin.required.filter((f: string) => f !== 'status');
  const r = await typeCheck(doc);
  t.notOk(r.ok, 'Payin.status optional: tsc fails');
  t.match(r.output, /flow\.ts.*(undefined|not assignable)/s, 'on the read of status');
});

t.test('the flow runs against the service', async (t) => {
  const h = await startTestApp();
  t.teardown(() => h.stop());
  const m = await h.newMerchant('Generated client');
  // Imported by its path: the repository's own type check leaves the flow to this test (tsconfig.json).
  const { firstPayin } = (await import(pathToFileURL(flow).href)) as { firstPayin: (...a: string[]) => Promise<any> };
  const r = await firstPayin(h.url, m.apiKey, m.apiSecret);
  t.equal(r.status, 'pending');
  t.same(r.listed, [r.payin.id]);
  t.equal(r.refusal, 'quote_not_active');
});
