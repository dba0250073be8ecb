// HTML built from tagged templates, for the dashboard and the payer's page alike: every interpolated
// value is escaped unless it is already Html (the result of another html``), so a merchant's name, a
// link's description or a customer's name can never become markup. Arrays are joined; null, undefined
// and false render nothing.
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

type Value = Html | string | number | bigint | boolean | null | undefined | Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.value;
  if (Array.isArray(v)) return v.map(render).join('');
  return escapeHtml(String(v));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/**
 * A translated sentence whose `{name}` places hold markup (a link, a <code>): the sentence's own text
 * is escaped, each value rendered as html`` renders it. A place with no value stays visible.
 */
export function template(message: string, values: Record<string, Value>): Html {
  const parts = message.split(/\{([a-z_]+)\}/);
  let out = '';
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    out += i % 2 === 0 ? escapeHtml(part) : part in values ? render(values[part] as Value) : escapeHtml(`{${part}}`);
  }
  return new Html(out);
}
