// The test files' TypeScript loader (package.json "tap" node-arg: --import=./test/helpers/ts-loader.mjs),
// in place of tsx there: every test file is a process of its own, and tsx's hooks cost it about
// 0.6 s of CPU more than these for the service's 400-odd modules (measured on 2 cores: 1.4 s against
// 0.8 s to import app/app.ts), a minute of a two-core `npm test`. The same esbuild transform of each
// file (tsx's own esbuild), cached on disk by content; resolution is Node's own (every relative import
// here names its .ts file, as NodeNext requires). The processes a test starts (the service, a CLI)
// still run under tsx, as a user would run them.
import { register } from 'node:module';

register('./ts-loader-hooks.mjs', import.meta.url);
