// A free TCP port on 127.0.0.1, and waiting for an HTTP endpoint to answer 200.
// The tests' own: a port asked of the kernel, then released.
export { freePort } from '../../test/helpers/net.ts';

export async function waitForHttp(url: string, ms: number, alive: () => boolean = () => true): Promise<void> {
  const end = Date.now() + ms;
  for (;;) {
    if (!alive()) throw new Error(`the process serving ${url} exited before it was ready`);
    try {
      const r = await fetch(url);
      if (r.status === 200) return;
    } catch { /* not listening yet */ }
    if (Date.now() > end) throw new Error(`${url} not ready after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
