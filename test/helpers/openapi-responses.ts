// Checking real answers against the served OpenAPI document: every response a test records is
// validated (ajv, JSON Schema 2020-12) against the schema the document declares for its operation
// and status, so a field the document calls `required` that an answer lacks fails the test.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { HttpResult, MerchantCreds, TestApp } from './app.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface Recorded { method: string; path: string; status: number; body: unknown }

interface Route { method: string; template: string; pattern: RegExp; params: number; op: any }

/** A schema's '#/components/...' refs, pointed into the document registered as 'openapi'. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (schema && typeof schema === 'object') {
    return Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' ? `openapi${v}` : rebase(v)]));
  }
  return schema;
}

export function responseChecker(doc: any) {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats(ajv);
  ajv.addSchema({ $id: 'openapi', components: doc.components }, 'openapi');
  const routes: Route[] = [];
  for (const [template, ops] of Object.entries<Record<string, any>>(doc.paths)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    for (const [method, op] of Object.entries(ops)) {
      routes.push({ method: method.toUpperCase(), template, pattern, params: (template.match(/\{/g) ?? []).length, op });
    }
  }
  routes.sort((a, b) => a.params - b.params); // a literal path wins over a template: /quotes/payin before /quotes/{quote_id}
  const compiled = new Map<string, ValidateFunction>();

  /** The problems of one answer (empty when it matches its declared schema), and the operation it was. */
  function check(r: Recorded): { operationId: string | undefined; problems: string[] } {
    const path = r.path.split('?')[0]!;
    const route = routes.find((x) => x.method === r.method && x.pattern.test(path));
    if (!route) return { operationId: undefined, problems: [`${r.method} ${path}: no operation in the document`] };
    const response = route.op.responses[String(r.status)];
    if (!response) return { operationId: route.op.operationId, problems: [`${route.op.operationId}: status ${r.status} is not declared`] };
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return { operationId: route.op.operationId, problems: [] };
    const key = `${route.op.operationId} ${r.status}`;
    let validate = compiled.get(key);
    if (!validate) compiled.set(key, (validate = ajv.compile(rebase(schema) as object)));
    if (validate(r.body)) return { operationId: route.op.operationId, problems: [] };
    return {
      operationId: route.op.operationId,
      problems: (validate.errors ?? []).map((e) => `${key} ${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`),
    };
  }
  return check;
}

/** The test app with its admin and merchant calls recorded into `into`. */
export function recording(h: TestApp, into: Recorded[]): TestApp {
  const keep = (method: string, path: string, r: HttpResult) => {
    into.push({ method, path, status: r.status, body: r.body });
    return r;
  };
  return {
    ...h,
    admin: async (method: string, path: string, body?: unknown) => keep(method, path, await h.admin(method, path, body)),
    as: async (m: MerchantCreds, method: string, path: string, body?: unknown, opts?: Parameters<TestApp['as']>[4]) =>
      keep(method, path, await h.as(m, method, path, body, opts)),
  };
}
