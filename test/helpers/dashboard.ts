// Dashboard test helpers: a tiny cookie-keeping form client (what a browser does, minus rendering)
// and the invite → set password → sign in path.
import type { TestApp } from './app.ts';

export interface Page {
  status: number;
  text: string;
  headers: Headers;
  location: string | null;
  setCookies: string[];
}

export class FormClient {
  readonly cookies = new Map<string, string>();
  /**
   * `lang`: the language the client has chosen, as the dashboard's switch remembers it (the `lang`
   * cookie). English by default, because most tests match the English words; null for none (the
   * dashboard then speaks French, or what an Accept-Language header asks for).
   */
  constructor(readonly base: string, lang: 'en' | 'fr' | null = 'en') {
    if (lang !== null) this.cookies.set('lang', lang);
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private keep(res: Response): string[] {
    const set = res.headers.getSetCookie();
    for (const c of set) {
      const [pair, ...attrs] = c.split(';');
      const i = pair!.indexOf('=');
      const name = pair!.slice(0, i).trim();
      const value = pair!.slice(i + 1).trim();
      if (attrs.some((a) => /^\s*max-age=0$/i.test(a)) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return set;
  }

  async get(path: string, headers: Record<string, string> = {}): Promise<Page> {
    const res = await fetch(this.base + path, { redirect: 'manual', headers: { cookie: this.cookieHeader(), ...headers } });
    return { status: res.status, text: await res.text(), headers: res.headers, location: res.headers.get('location'), setCookies: this.keep(res) };
  }

  async post(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<Page> {
    const res = await fetch(this.base + path, {
      method: 'POST', redirect: 'manual', body: new URLSearchParams(fields).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: this.cookieHeader(), ...headers },
    });
    return { status: res.status, text: await res.text(), headers: res.headers, location: res.headers.get('location'), setCookies: this.keep(res) };
  }

  /** The CSRF token of the first form on a page. */
  static csrf(page: Page): string {
    const m = /name="csrf_token" value="([^"]+)"/.exec(page.text);
    if (!m) throw new Error(`no CSRF token on the page (status ${page.status})`);
    return m[1]!;
  }

  /** The one-time nonce (form_nonce) of the page's first form posting to `action`, if it has one. */
  static nonce(page: Page, action: string): string | undefined {
    for (const m of page.text.matchAll(/<form\b[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)) {
      if (m[1] !== action) continue;
      const n = /name="form_nonce" value="([^"]+)"/.exec(m[2]!);
      if (n) return n[1]!;
    }
    return undefined;
  }

  /** GETs `path` and POSTs `fields` with that page's CSRF token (and the form's nonce, as a browser would). */
  async submit(path: string, action: string, fields: Record<string, string> = {}): Promise<Page> {
    const p = await this.get(path);
    const nonce = FormClient.nonce(p, action);
    return this.post(action, { csrf_token: FormClient.csrf(p), ...(nonce ? { form_nonce: nonce } : {}), ...fields });
  }
}

/** The operator's invitation; `role` as the API takes it (left out: the API's default, owner). */
export async function inviteUser(h: TestApp, merchantId: string, email: string, role?: string): Promise<{ token: string; path: string; body: any }> {
  const r = await h.admin('POST', `/admin/merchants/${merchantId}/dashboard-users`, role === undefined ? { email } : { email, role });
  if (r.status !== 201) throw new Error(`invite failed: ${r.status} ${r.text}`);
  return { token: r.body.invitation_token, path: r.body.invitation_path, body: r.body };
}

export const PASSWORD = 'correct horse battery staple';

/** Invite, set the password through the link, sign in: a signed-in client. */
export async function signedInClient(h: TestApp, merchantId: string, email: string, password = PASSWORD, lang: 'en' | 'fr' | null = 'en', role?: string): Promise<FormClient> {
  const c = new FormClient(h.url, lang);
  const { path } = await inviteUser(h, merchantId, email, role);
  const set = await c.submit(path, '/dashboard/invite', { token: new URL(path, h.url).searchParams.get('token')!, password, password_confirm: password });
  if (set.status !== 303) throw new Error(`set password failed: ${set.status}`);
  const signIn = await c.submit('/dashboard/sign-in', '/dashboard/sign-in', { email, password });
  if (signIn.status !== 303 || signIn.location !== '/dashboard') throw new Error(`sign-in failed: ${signIn.status}`);
  return c;
}
