// Writes the OpenAPI document the service serves at /openapi.json, built from the same modules
// (app/registry.ts) without starting anything: `tsx scripts/openapi-document.ts <file>` (stdout
// without a file). `npm run check:openapi` lints what this writes; the client test types from it.
import fs from 'node:fs';
import { buildDocument } from '../api/openapi/document.ts';
import { systemModule } from '../api/routes/system.ts';
import { apiModules } from '../app/registry.ts';

const text = JSON.stringify(buildDocument([systemModule(() => undefined), ...apiModules]), null, 2);
const file = process.argv[2];
if (file) fs.writeFileSync(file, text);
else process.stdout.write(text + '\n');
