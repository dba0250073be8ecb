// PGlite's start parameters (infra/pglite-params.ts) and PGLITE_SHARED_BUFFERS_MB.
import t from 'tap';
import { loadConfig } from '../src/config.ts';
import { DEFAULT_PGLITE_SHARED_BUFFERS_MB, pgliteStartParams } from '../src/infra/pglite-params.ts';

t.test("PGlite's own parameters are kept and shared_buffers added", async (t) => {
  const defaults = ['--single', '-F', '-c', 'search_path=public'];
  t.same(pgliteStartParams(defaults, 16), [...defaults, '-c', 'shared_buffers=16MB']);
  t.same(defaults, ['--single', '-F', '-c', 'search_path=public'], 'the defaults are not modified');
  for (const bad of [0, -1, 1.5, 1025, Number.NaN]) t.throws(() => pgliteStartParams(defaults, bad), { name: 'RangeError' }, String(bad));
});

t.test('PGLITE_SHARED_BUFFERS_MB: 16 by default, 1 to 1024', async (t) => {
  t.equal(DEFAULT_PGLITE_SHARED_BUFFERS_MB, 16);
  t.equal(loadConfig({}, []).pgliteSharedBuffersMb, 16);
  t.equal(loadConfig({ PGLITE_SHARED_BUFFERS_MB: '128' }, []).pgliteSharedBuffersMb, 128);
  t.throws(() => loadConfig({ PGLITE_SHARED_BUFFERS_MB: '0' }, []), { message: /at least 1/ });
  t.throws(() => loadConfig({ PGLITE_SHARED_BUFFERS_MB: '2048' }, []), { message: /at most 1024/ });
  t.throws(() => loadConfig({ PGLITE_SHARED_BUFFERS_MB: '16MB' }, []), { message: /whole number/ });
});
