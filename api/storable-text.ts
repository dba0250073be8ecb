// Text the database cannot store as sent: PostgreSQL refuses NUL (U+0000) in text and jsonb, and
// a lone UTF-16 surrogate has no UTF-8 form (jsonb refuses its escape). Such a string reaching a
// query or an event was a 500; it is refused up front as the client's error, naming the field.

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

export const isStorableText = (s: string): boolean => !UNSTORABLE.test(s);

/** The first field (dotted path, keys included) holding unstorable text, or undefined. Depth-bounded by the caller. */
export function unstorableField(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : path || '(body)';
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const f = unstorableField(value[i], path ? `${path}.${i}` : String(i));
      if (f !== undefined) return f;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      const p = path ? `${path}.${k}` : k;
      if (!isStorableText(k)) return p;
      const f = unstorableField(v, p);
      if (f !== undefined) return f;
    }
  }
  return undefined;
}
