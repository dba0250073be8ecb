// Reading the served OpenAPI document in tests: its operations, their parameters and bodies, a
// valid-looking sample of a schema, and every field path of a body schema. Used by the hostile
// input and tenant isolation tests, so that a new endpoint is covered without editing them.
import { randomUUID } from 'node:crypto';

export interface Param { name: string; in: 'path' | 'query' | 'header'; required?: boolean; schema: any }
export interface Op {
  method: string;
  path: string;
  operationId: string;
  auth: 'merchant' | 'admin' | 'public';
  idempotent: boolean;
  params: Param[];
  body: any | undefined;
}

export function operations(doc: any): Op[] {
  const out: Op[] = [];
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(ops)) {
      out.push({
        method: method.toUpperCase(), path, operationId: op.operationId, auth: op['x-auth'], idempotent: !!op['x-idempotent'],
        params: op.parameters ?? [], body: op.requestBody?.content?.['application/json']?.schema,
      });
    }
  }
  return out;
}

/** Resolves `$ref` and merges `allOf` (one level is all the document uses). */
export function resolve(doc: any, schema: any): any {
  if (!schema || typeof schema !== 'object') return schema ?? {};
  if (schema.$ref) return resolve(doc, doc.components.schemas[String(schema.$ref).split('/').pop()!]);
  if (schema.allOf) {
    const parts = [schema, ...schema.allOf.map((s: any) => resolve(doc, s))];
    return {
      ...schema, allOf: undefined,
      type: parts.find((p) => p.type)?.type,
      properties: Object.assign({}, ...parts.map((p) => p.properties ?? {})),
      required: [...new Set(parts.flatMap((p) => p.required ?? []))],
      additionalProperties: schema.additionalProperties,
    };
  }
  return schema;
}

/** Values a valid request would carry for fields the schema alone cannot make up. */
export type Known = Record<string, unknown>;

/** A valid-looking value for `schema` (required fields only, plus the known ones). */
export function sample(doc: any, raw: any, known: Known = {}, name = ''): unknown {
  const schema = resolve(doc, raw);
  if (name && name in known) return known[name];
  if ('const' in schema) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.anyOf || schema.oneOf) return sample(doc, (schema.anyOf ?? schema.oneOf)[0], known, name);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (type === 'object' || schema.properties) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries<any>(schema.properties ?? {})) {
      if ((schema.required ?? []).includes(k) || k in known) out[k] = sample(doc, v, known, k);
    }
    return out;
  }
  if (type === 'array') return Array.from({ length: schema.minItems ?? 1 }, () => sample(doc, schema.items ?? {}, known, name));
  if (type === 'integer' || type === 'number') return schema.minimum ?? 1;
  if (type === 'boolean') return true;
  if (schema.format === 'uuid') return randomUUID();
  if (schema.format === 'date-time') return new Date().toISOString();
  if (schema.format === 'date') return '2020-01-01';
  if (schema.format === 'email') return 'a@example.com';
  if (/amount/.test(name) || schema.pattern === '^[0-9]+(\\.[0-9]+)?$') return '1000';
  if (schema.pattern === '^[A-Z]{2}$') return 'SN';
  return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
}

export interface Field { path: string[]; schema: any }

/** Every property path of a body schema (objects and array items), depth-limited. */
export function fields(doc: any, raw: any, prefix: string[] = [], depth = 0): Field[] {
  const schema = resolve(doc, raw);
  if (depth > 4) return [];
  const out: Field[] = [];
  const props = { ...(schema.properties ?? {}) };
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) Object.assign(props, resolve(doc, branch).properties ?? {});
  for (const [k, v] of Object.entries<any>(props)) {
    const p = [...prefix, k];
    const r = resolve(doc, v);
    out.push({ path: p, schema: r });
    if (r.type === 'object' || r.properties) out.push(...fields(doc, r, p, depth + 1));
    if (r.type === 'array' && r.items) out.push(...fields(doc, r.items, [...p, '0'], depth + 1));
  }
  return out;
}

/** A deep copy of `body` with the value at `path` set (or removed when `value` is `REMOVE`). */
export const REMOVE = Symbol('remove');
export function setAt(body: unknown, path: string[], value: unknown): unknown {
  const copy = structuredClone(body) ?? {};
  let cur: any = copy;
  for (const k of path.slice(0, -1)) {
    if (cur[k] === undefined || cur[k] === null || typeof cur[k] !== 'object') cur[k] = /^[0-9]+$/.test(k) ? [] : {};
    cur = cur[k];
  }
  const last = path[path.length - 1]!;
  if (value === REMOVE) delete cur[last];
  else cur[last] = value;
  return copy;
}

/** The path with its parameters filled in (encoded). */
export function fillPath(path: string, values: Record<string, string>): string {
  return path.replace(/\{([^}]+)\}/g, (_, n: string) => encodeURIComponent(values[n] ?? ''));
}
