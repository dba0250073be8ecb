// docker-compose.yml, checked without a Docker engine: the services, their ports, health checks and
// start order, and that the service's environment is exactly what infra/config.ts reads (and loads).
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { loadConfig } from '../infra/config.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const compose = parse(fs.readFileSync(path.join(root, 'docker-compose.yml'), 'utf8')) as {
  services: Record<string, {
    image?: string;
    build?: unknown;
    command?: string[] | string;
    environment?: Record<string, string | number | boolean> | string[];
    ports?: string[];
    healthcheck?: { test: string[] | string; interval?: string; retries?: number };
    depends_on?: Record<string, { condition: string }> | string[];
  }>;
};
const services = compose.services;

/** Every environment variable infra/config.ts reads: `env.NAME`, `env['NAME']` and `int(env, 'NAME', …)`. */
function variablesConfigReads(): Set<string> {
  const source = fs.readFileSync(path.join(root, 'infra/config.ts'), 'utf8');
  const names = new Set<string>();
  for (const re of [/\benv\.([A-Z][A-Z0-9_]*)/g, /\benv\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\]/g, /\(\s*env\s*,\s*['"]([A-Z][A-Z0-9_]*)['"]/g]) {
    for (const m of source.matchAll(re)) names.add(m[1]!);
  }
  return names;
}

function environmentOf(name: string): Record<string, string> {
  const env = services[name]?.environment;
  if (!env) return {};
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((kv) => {
      const i = kv.indexOf('=');
      return i < 0 ? [kv, ''] : [kv.slice(0, i), kv.slice(i + 1)];
    }));
  }
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, String(v)]));
}

const healthTest = (name: string) => {
  const test = services[name]?.healthcheck?.test;
  return Array.isArray(test) ? test.join(' ') : String(test ?? '');
};

t.test('the services are there', async (t) => {
  t.same(Object.keys(services).sort(), ['api', 'kurrentdb', 'nats', 'postgres', 'worker']);
  t.match(services.kurrentdb!.image, /(kurrentdb|eventstore)/, 'KurrentDB or EventStoreDB');
  t.match(services.postgres!.image, /^postgres:16/, 'PostgreSQL 16');
  t.match(services.nats!.image, /^nats:/);
});

t.test('KurrentDB: insecure single node with a health check', async (t) => {
  const env = environmentOf('kurrentdb');
  const insecure = env.KURRENTDB_INSECURE ?? env.EVENTSTORE_INSECURE;
  t.equal(insecure, 'true', 'insecure (no TLS), as EVENTSTORE_URL says tls=false');
  t.equal(env.KURRENTDB_CLUSTER_SIZE ?? env.EVENTSTORE_CLUSTER_SIZE ?? '1', '1', 'single node');
  t.match(healthTest('kurrentdb'), /health\/live/);
  t.ok(services.kurrentdb!.ports?.some((p) => p.endsWith(':2113')), 'gRPC/HTTP port published');
});

t.test('PostgreSQL 16 with pg_isready', async (t) => {
  t.match(healthTest('postgres'), /pg_isready/);
  const env = environmentOf('postgres');
  const db = new URL(environmentOf('api').DATABASE_URL!);
  t.equal(db.hostname, 'postgres');
  t.equal(decodeURIComponent(db.username), env.POSTGRES_USER);
  t.equal(decodeURIComponent(db.password), env.POSTGRES_PASSWORD);
  t.equal(db.pathname.slice(1), env.POSTGRES_DB, 'the service connects to the database the container creates');
});

t.test('NATS with JetStream and a /healthz check on its monitoring port', async (t) => {
  const command = services.nats!.command;
  const args = Array.isArray(command) ? command : String(command).split(/\s+/);
  t.ok(args.includes('-js') || args.includes('--jetstream'), 'JetStream enabled');
  const m = args.indexOf('-m');
  t.equal(args[m + 1], '8222', 'monitoring on 8222');
  t.match(healthTest('nats'), /:8222\/healthz/);
});

t.test('api and worker: one image, their roles, health checks and start order', async (t) => {
  for (const name of ['api', 'worker']) {
    const s = services[name]!;
    t.ok(s.build, `${name} is built from the Dockerfile`);
    const cmd = Array.isArray(s.command) ? s.command.join(' ') : String(s.command);
    t.match(cmd, new RegExp(`^bin/service --role ${name}$`), `${name} runs the build (bin/service) with its role`);
    const deps = s.depends_on as Record<string, { condition: string }>;
    for (const infra of ['postgres', 'kurrentdb', 'nats']) {
      t.equal(deps?.[infra]?.condition, 'service_healthy', `${name} waits for ${infra} to be healthy`);
    }
  }
  t.ok(services.api!.ports?.includes('3000:3000'), 'the API on port 3000');
  t.match(healthTest('api'), /\/readyz/, 'the api is healthy when ready (store, read models, bus)');
  t.match(healthTest('worker'), /\/readyz/, 'the worker too (it serves /readyz on PORT)');
  t.notOk(services.worker!.ports, 'the worker publishes no port');
  const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
  t.match(dockerfile, /^FROM node:20-slim/m);
  t.match(dockerfile, /npm ci --omit=dev/, 'no dev dependency in the image');
  t.match(dockerfile, /RUN npm run build/, 'built in a stage of its own');
  t.match(dockerfile, /COPY --from=build \/app\/dist \.\/dist/);
  t.match(dockerfile, /COPY bin \.\/bin/);
  t.match(dockerfile, /CMD \["bin\/service"\]/, 'runs the build as npm start does');
});

t.test('every variable the services set is one infra/config.ts reads, and the needed ones are set', async (t) => {
  const read = variablesConfigReads();
  t.ok(read.has('DATABASE_URL') && read.has('NATS_URL') && read.has('PORT'), 'the scan finds the configuration');
  const api = environmentOf('api');
  const worker = environmentOf('worker');
  for (const [name, env] of [['api', api], ['worker', worker]] as const) {
    const unknown = Object.keys(env).filter((k) => !read.has(k));
    t.same(unknown, [], `${name}: no variable that the service does not read`);
    for (const needed of ['DATABASE_URL', 'NATS_URL', 'NATS_PREFIX', 'EVENTSTORE_URL', 'ADMIN_TOKEN', 'SECRET_HASH_KEY', 'PORT', 'HOST']) {
      t.ok(env[needed], `${name} sets ${needed}`);
    }
    t.equal(env.HOST, '0.0.0.0', `${name} listens on every interface`);
  }
  t.same(api, worker, 'api and worker share one environment (same secrets hash, same services)');
  t.equal(api.PORT, '3000');
});

t.test('the environment loads: the configuration accepts every value', async (t) => {
  // `${NAME:?message}` is filled in by docker compose from the shell; stand-ins here.
  const env = Object.fromEntries(Object.entries(environmentOf('api')).map(([k, v]) => [k, v.replace(/\$\{[^}]*\}/g, `test-${k.toLowerCase()}`)]));
  const config = loadConfig(env, ['--role', 'api']);
  t.equal(config.role, 'api');
  t.equal(config.port, 3000);
  t.equal(config.host, '0.0.0.0');
  t.match(config.eventstoreUrl, /^kurrentdb:\/\/kurrentdb:2113/);
  t.equal(config.natsUrl, 'nats://nats:4222');
  t.equal(config.natsPrefix, 'payments');
  t.match(config.databaseUrl, /^postgres:\/\/.*@postgres:5432\//);
  t.equal(config.adminToken, 'test-admin_token');
  t.equal(config.secretHashKey, 'test-secret_hash_key');
  t.equal(loadConfig(env, ['--role', 'worker']).role, 'worker');
});
