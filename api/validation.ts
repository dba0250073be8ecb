// Request validation compiled from the OpenAPI document (ajv, JSON Schema 2020-12). Bodies are
// checked as sent (no type coercion: "5000" is not 5000); query and path parameters, which arrive as
// text, are coerced to their declared types.
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { ErrorDetail } from '../domain/errors.ts';
import { isStorableInstant } from '../domain/dates.ts';
import type { OpenApiDocument } from './openapi/document.ts';
import type { Operation } from './module.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

export interface OperationValidator {
  body?: ValidateFunction;
  params?: ValidateFunction;
  query?: ValidateFunction;
  /**
   * The path parameters that are values the caller chose among a few (`'x-malformed': 'bad_request'`: a
   * wallet's currency, a corridor code): a bad one is a 400 naming it. Any other (an id, a name) that
   * does not match its schema names nothing: 404, like an unknown one.
   */
  pathValues?: string[];
}

function makeAjv(document: OpenApiDocument, coerce: boolean): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, coerceTypes: coerce ? true : false, useDefaults: coerce });
  addFormats(ajv);
  // RFC 3339 admits a leap second (23:59:60) that JavaScript dates cannot hold: a value the
  // handlers could not turn into a Date was a 500. A date-time must also be a real instant, and a
  // date or a date-time one the database can store (year 0000 was a 500 from PostgreSQL).
  const syntaxOf = (name: 'date-time' | 'date') => {
    const format = ajv.formats[name] as { validate: (s: string) => boolean } | ((s: string) => boolean);
    return typeof format === 'function' ? format : format.validate;
  };
  const dateTime = syntaxOf('date-time');
  const date = syntaxOf('date');
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => dateTime(s) && isStorableInstant(Date.parse(s)) });
  ajv.addFormat('date', { type: 'string', validate: (s: string) => date(s) && isStorableInstant(Date.parse(`${s}T00:00:00Z`)) });
  ajv.addSchema({ $id: 'openapi', components: document.components }, 'openapi');
  return ajv;
}

/** JSON Schema refs in the document point at '#/components/...'; resolve them inside 'openapi'. */
function rebase(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(rebase);
  if (schema && typeof schema === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(schema)) {
      out[k] = k === '$ref' && typeof v === 'string' && v.startsWith('#/') ? `openapi${v}` : rebase(v);
    }
    return out;
  }
  return schema;
}

export function compileValidators(document: OpenApiDocument): Map<string, OperationValidator> {
  const bodies = makeAjv(document, false);
  const params = makeAjv(document, true);
  const out = new Map<string, OperationValidator>();
  for (const ops of Object.values(document.paths)) {
    for (const op of Object.values(ops) as Operation[]) {
      const v: OperationValidator = {};
      const rb = op.requestBody as { content?: Record<string, { schema: unknown }> } | undefined;
      const bodySchema = rb?.content?.['application/json']?.schema;
      if (bodySchema) v.body = bodies.compile(rebase(bodySchema) as object);
      const parameters = (op.parameters ?? []) as Array<{ name: string; in: string; required?: boolean; schema: unknown }>;
      for (const where of ['path', 'query'] as const) {
        const list = parameters.filter((p) => p.in === where);
        if (list.length === 0) continue;
        const schema = {
          type: 'object',
          properties: Object.fromEntries(list.map((p) => [p.name, rebase(p.schema)])),
          required: list.filter((p) => p.required).map((p) => p.name),
          additionalProperties: where === 'path',
        };
        const compiled = params.compile(schema);
        if (where === 'path') {
          v.params = compiled;
          v.pathValues = list.filter((p) => (p as { 'x-malformed'?: string })['x-malformed'] === 'bad_request').map((p) => p.name);
        } else v.query = compiled;
      }
      out.set(op.operationId, v);
    }
  }
  return out;
}

/** `anyOf: [{required: [a]}, {required: [b]}]` (at least one of a, b): the alternatives, by instance and anyOf. */
function requiredAlternatives(errors: ErrorObject[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const e of errors) {
    const m = /^(.*\/anyOf)\/[0-9]+\/required$/.exec(e.schemaPath);
    if (e.keyword !== 'required' || !m) continue;
    const key = `${e.instancePath}|${m[1]}`;
    out.set(key, [...(out.get(key) ?? []), (e.params as { missingProperty: string }).missingProperty]);
  }
  return out;
}

/**
 * A value that matches no branch of an `anyOf` of shapes (a list bound: a date-time or a date) is one
 * problem: its branches' messages joined with "or", in one error (required-field alternatives are
 * requiredAlternatives's).
 */
function mergeShapeAlternatives(errors: ErrorObject[]): ErrorObject[] {
  const merged = new Map<string, ErrorObject>();
  const out: ErrorObject[] = [];
  for (const e of errors) {
    const m = /^(.*\/anyOf)\/[0-9]+\/[^/]+$/.exec(e.schemaPath);
    if (!m || e.keyword === 'required') {
      out.push(e);
      continue;
    }
    const key = `${e.instancePath}|${m[1]}`;
    const first = merged.get(key);
    if (first) {
      first.message = `${first.message} or ${e.message}`;
      continue;
    }
    const copy = { ...e };
    merged.set(key, copy);
    out.push(copy);
  }
  return out;
}

export function describeErrors(raw: ErrorObject[] | null | undefined, prefix = ''): ErrorDetail[] {
  const seen = new Set<string>();
  const details: ErrorDetail[] = [];
  const errors = mergeShapeAlternatives(raw ?? []);
  const alternatives = requiredAlternatives(errors);
  for (const e of errors) {
    let field = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      field = field ? `${field}.${missing}` : missing;
      const anyOf = /^(.*\/anyOf)\/[0-9]+\/required$/.exec(e.schemaPath);
      const others = anyOf ? alternatives.get(`${e.instancePath}|${anyOf[1]}`) ?? [] : [];
      message = others.length > 1 ? `is required unless one of ${others.filter((o) => o !== missing).join(', ')} is given` : 'is required';
    } else if (e.keyword === 'additionalProperties') {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      field = field ? `${field}.${extra}` : extra;
      message = 'is not a known field';
    } else if (e.keyword === 'enum') {
      message = `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    } else if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf') {
      continue; // the branch errors already name the fields
    }
    field = prefix + (field || '(body)');
    const key = `${field}|${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    details.push({ field, message });
  }
  return details.slice(0, 50);
}
