// A clean install on Node 20 prints no EBADENGINE warning: every package the lockfile installs
// admits, in its `engines.node`, the Node versions we run on (issue 31: @nats-io/nuid 3.0.0 asked for
// Node 22; package.json pins 2.0.3 through `overrides`). The range check is a small subset of npm's
// semver (comparators, ^, ~, x-ranges, ||), enough for what the lockfile holds; a range it cannot read
// fails the test, so a new shape is looked at rather than passed.
import t from 'tap';
import { readFileSync } from 'node:fs';

type Version = [number, number, number];

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8'));

function parse(v: string): Version {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?/.exec(v);
  if (!m) throw new Error(`not a version: ${v}`);
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}

function compare(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
}

/** One comparator ("^20.17.0", ">= 18.x", "10.*", "20") against a version. */
function comparator(token: string, v: Version): boolean {
  const m = /^(>=|<=|>|<|=|\^|~)?v?(\d+|[x*])(?:\.(\d+|[x*]))?(?:\.(\d+|[x*]))?(?:-[0-9A-Za-z.-]+)?$/.exec(token);
  if (!m) throw new Error(`cannot read the range token ${JSON.stringify(token)}`);
  const [, op = '', ...parts] = m;
  const given = parts.filter((p) => p !== undefined && p !== 'x' && p !== '*').length;
  const base: Version = [Number(parts[0] ?? 0) || 0, Number(parts[1] ?? 0) || 0, Number(parts[2] ?? 0) || 0];
  if (given === 0) return op === '' || op === '>=' || op === '=';
  const c = compare(v, base);
  // The first version past a partial one ("20" → 21.0.0, "20.1" → 20.2.0).
  const past = (n: number): Version => (n === 1 ? [base[0] + 1, 0, 0] : n === 2 ? [base[0], base[1] + 1, 0] : [base[0], base[1], base[2] + 1]);
  switch (op) {
    case '>=': return c >= 0;
    case '>': return given === 3 ? c > 0 : compare(v, past(given)) >= 0;
    case '<': return c < 0;
    case '<=': return given === 3 ? c <= 0 : compare(v, past(given)) < 0;
    case '^': return c >= 0 && compare(v, base[0] > 0 ? [base[0] + 1, 0, 0] : base[1] > 0 ? [0, base[1] + 1, 0] : [0, 0, base[2] + 1]) < 0;
    case '~': return c >= 0 && compare(v, given === 1 ? [base[0] + 1, 0, 0] : [base[0], base[1] + 1, 0]) < 0;
    default: return c >= 0 && compare(v, past(given)) < 0;
  }
}

function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split('||').some((set) => {
    // "node >= 0.2.0" (a package's own spelling) and ">= 18" (space after the operator): one token each.
    const tokens = set.replace(/\bnode\b/g, '').replace(/(>=|<=|>|<|=|\^|~)\s+/g, '$1').trim().split(/\s+/).filter(Boolean);
    return tokens.every((tk) => comparator(tk, v));
  });
}

// Node 20 as we ship it: the running version when it is a Node 20 (CI), and the Node 20 line the
// Docker image `node:20-slim` carries (20.19 and later), whatever Node runs the test.
const NODE_20_LINE = '20.19.0';

t.test('the range check reads the shapes the lockfile uses', async (t) => {
  t.ok(satisfies('20.19.0', '>= 18.x'));
  t.notOk(satisfies('20.19.0', '>= 22.x'), 'what @nats-io/nuid 3.0.0 asks for');
  t.ok(satisfies('20.19.0', '^20.17.0 || >=22.9.0'));
  t.notOk(satisfies('20.16.0', '^20.17.0 || >=22.9.0'));
  t.ok(satisfies('20.19.0', '20 || >=22'));
  t.notOk(satisfies('21.0.0', '20 || >=22'));
  t.ok(satisfies('20.19.0', '10.* || >= 12.*'));
  t.ok(satisfies('20.19.0', '>=16 || 14 >=14.17'));
  t.ok(satisfies('20.19.0', 'node >= 0.2.0'));
  t.ok(satisfies('20.19.0', '*'));
  t.ok(satisfies('20.19.0', '^20.12||^22.13||>=24.0'));
  t.notOk(satisfies('20.19.0', '~20.18.0'));
  t.throws(() => satisfies('20.19.0', '>=twenty'), /cannot read/);
});

t.test('every package in package-lock.json admits Node 20 in its engines', async (t) => {
  t.match(pkg.engines.node, /^>=\s*20\b/, 'package.json promises Node 20');
  const versions = [NODE_20_LINE, ...(process.versions.node.startsWith('20.') ? [process.versions.node] : [])];
  const refused: string[] = [];
  for (const [where, entry] of Object.entries<any>(lock.packages)) {
    const range = entry.engines?.node;
    if (where === '' || typeof range !== 'string') continue;
    for (const v of versions) if (!satisfies(v, range)) refused.push(`${where}@${entry.version} wants node ${range} (not ${v})`);
  }
  t.same(refused, [], 'no EBADENGINE on Node 20');
});
