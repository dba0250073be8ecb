// The heap growing factor (infra/heap-growth.ts) bounds how far the heap outgrows its live set when
// the process allocates fast: bench issue 8's memory target, checked here on a stand-in workload in
// a child process (the flag applies to the whole V8 instance).
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { loadConfig } from '../infra/config.ts';
import { DEFAULT_HEAP_GROWING_PERCENT, setHeapGrowingPercent } from '../infra/heap-growth.ts';

const churn = (arg: string) => JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', 'test/helpers/heap-churn.ts', arg], {
  encoding: 'utf8', timeout: 60_000,
})) as { maxHeapMb: number; live: number };

t.test('the default factor keeps the heap far below what V8 grows it to on its own', async (t) => {
  const own = churn('v8');
  const bounded = churn(String(DEFAULT_HEAP_GROWING_PERCENT));
  t.comment(`largest heap: V8's own factor ${Math.round(own.maxHeapMb)} MB, ${DEFAULT_HEAP_GROWING_PERCENT}% ${Math.round(bounded.maxHeapMb)} MB`);
  // The live set is ~40 MB and the ring ~15 MB: V8's own factor grows past 300 MB here.
  t.ok(bounded.maxHeapMb < own.maxHeapMb * 0.7, `bounded ${bounded.maxHeapMb} MB vs own ${own.maxHeapMb} MB`);
  t.ok(bounded.maxHeapMb < 250, `bounded heap ${bounded.maxHeapMb} MB`);
  t.equal(bounded.live, 200_000, 'the live set survived: a factor, not a ceiling');
});

t.test('HEAP_GROWING_PERCENT: 50 by default, 0 leaves V8 its own factor, anything else is refused', async (t) => {
  t.equal(loadConfig({}, []).heapGrowingPercent, 50, 'embedded');
  t.equal(loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/x' }, []).heapGrowingPercent, 50, 'on PostgreSQL');
  t.equal(loadConfig({ DATABASE_URL: 'postgres://127.0.0.1/x', HEAP_GROWING_PERCENT: '25' }, []).heapGrowingPercent, 25, 'set explicitly');
  t.equal(loadConfig({ HEAP_GROWING_PERCENT: '0' }, []).heapGrowingPercent, 0);
  t.equal(loadConfig({ HEAP_GROWING_PERCENT: '25' }, []).heapGrowingPercent, 25);
  t.throws(() => loadConfig({ HEAP_GROWING_PERCENT: '-5' }, []), { message: /HEAP_GROWING_PERCENT must be a whole number/ });
  t.throws(() => loadConfig({ HEAP_GROWING_PERCENT: '1.5' }, []), { message: /HEAP_GROWING_PERCENT must be a whole number/ });
  t.throws(() => setHeapGrowingPercent(-1), { name: 'RangeError' });
  t.throws(() => setHeapGrowingPercent(2.5), { name: 'RangeError' });
});
