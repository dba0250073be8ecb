// Child process of heap-growth.int.test.ts: a steady live set plus a fast stream of objects that live
// just long enough to be promoted (a ring, like requests in flight), then prints the largest heap
// seen. argv[2]: the growing percent to set, or "v8" for V8's own factor.
import { setHeapGrowingPercent } from '../../infra/heap-growth.ts';

if (process.argv[2] !== 'v8') setHeapGrowingPercent(Number(process.argv[2]));
const live = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `live-${i}-${'x'.repeat(100)}` }));
const ring = new Array<unknown>(50_000);
let max = 0;
for (let n = 0; n < 2_000_000; n++) {
  ring[n % ring.length] = { n, s: `in-flight-${n}-${'y'.repeat(100)}`, a: [n, n + 1] };
  if (n % 10_000 === 0) max = Math.max(max, process.memoryUsage().heapTotal);
}
process.stdout.write(JSON.stringify({ maxHeapMb: max / 1048576, live: live.length }));
