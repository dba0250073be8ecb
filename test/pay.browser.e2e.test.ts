// The payer's page in a real browser (playwright-core driving Debian's Chromium, /usr/bin/chromium), on
// a phone-sized screen (390x844): a payer pays a link with JavaScript on (the operator suggested from
// the number as it is typed, the status followed live to completed without a reload) and with it off
// (the form posted, the status page reloading itself to completed). axe-core finds no serious or
// critical accessibility violation on the form and the status page; the page (HTML, CSS and script)
// weighs under 50 KB, makes no request outside its origin, and breaks no rule of its CSP.
// Screenshots go to docs/screenshots/ (pay-form-fr.png, pay-pending.png, pay-completed.png).
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startTestApp, type TestApp } from './helpers/app.ts';
import { newLink } from './helpers/pay.ts';
import { catalogues } from '../i18n/catalogue.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
const SHOTS = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const skip = fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (.ci/run installs it with apt-get)`;
const fr = catalogues().fr;
const MAX_PAGE_BYTES = 50_000;

/** A fresh French phone browser (a profile directory of its own), JavaScript on or off. */
async function phone(t: Test, javaScriptEnabled: boolean): Promise<{ context: BrowserContext; page: Page; problems: string[]; elsewhere: string[] }> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-chromium-'));
  t.teardown(() => fs.rmSync(profile, { recursive: true, force: true }));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 390, height: 844 }, locale: 'fr-FR', javaScriptEnabled,
  });
  t.teardown(() => context.close());
  const page = context.pages()[0] ?? await context.newPage();
  const problems: string[] = [];
  const elsewhere: string[] = [];
  // Script errors and CSP refusals (a 400 form answer is logged too: that one is expected).
  page.on('console', (m) => { if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(e.message));
  return { context, page, problems, elsewhere };
}

/** axe-core's serious and critical violations on the page as it is (evaluated by DevTools: the page's CSP stays whole). */
async function accessibilityProblems(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const result = await page.evaluate(() => (window as unknown as { axe: typeof axe }).axe.run(document, { resultTypes: ['violations'] }));
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

async function setUp(t: Test): Promise<{ h: TestApp; linkId: string }> {
  // The sandbox settles after 2.5 s: long enough to see (and photograph) the pending status.
  const h = await startTestApp({ env: { SANDBOX_SETTLE_MS: '2500' } });
  t.teardown(() => h.stop());
  fs.mkdirSync(SHOTS, { recursive: true });
  const m = await h.newMerchant('Boutique Awa');
  const linkId = await newLink(h, m, { amount: '15000', description: 'Commande 42 : deux t-shirts en coton', maxPayments: null });
  return { h, linkId };
}

t.test('with JavaScript: the operator suggested from the number, then the status live to completed, no reload', { skip, timeout: 180_000 }, async (t) => {
  const { h, linkId } = await setUp(t);
  const { page, problems } = await phone(t, true);
  const origin = new URL(h.url).origin;
  const outside: string[] = [];
  const weighed: Array<Promise<{ path: string; bytes: number }>> = [];
  page.on('request', (r) => { if (!r.url().startsWith(origin + '/') && !r.url().startsWith('data:')) outside.push(r.url()); });
  page.on('response', (r) => {
    const path = new URL(r.url()).pathname;
    if (/\/pay\/([0-9a-f-]{36}|static\/pay\.(css|js))$/.test(path)) weighed.push(r.body().then((b) => ({ path, bytes: b.length })));
  });

  await page.goto(`${h.url}/pay/${linkId}`, { waitUntil: 'networkidle' });
  t.equal(await page.getAttribute('html', 'lang'), 'fr');
  t.equal(await page.locator('h1').textContent(), 'Commande 42 : deux t-shirts en coton');
  t.same(outside, [], 'the form shows without any request outside the origin');
  const parts = await Promise.all(weighed);
  const bytes = parts.reduce((sum, p) => sum + p.bytes, 0);
  t.equal(parts.length, 3, `the page, its stylesheet and its script weighed (${parts.map((p) => p.path).join(', ')})`);
  t.ok(bytes < MAX_PAGE_BYTES, `HTML + CSS + script: ${bytes} bytes`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  t.equal(overflow, 0, 'no horizontal scrolling on the phone');
  await shot(page, 'pay-form-fr');
  t.same(await accessibilityProblems(page), [], 'axe: no serious or critical violation on the form');

  // The number typed with its calling code: the country and the operator follow.
  await page.getByLabel(fr['pay.field.phone']).pressSequentially('+237 670 00 00 01');
  t.equal(await page.locator('#country_code').inputValue(), 'CM', 'the country from +237');
  t.equal(await page.locator('#operator_code').inputValue(), 'CM_MTN_MOMO', 'MTN from 67…');
  await page.evaluate(() => { (window as unknown as { notReloaded: boolean }).notReloaded = true; });
  // No name yet: the form comes back (no reload) with the problem beside the field, focus on the summary.
  await page.getByRole('button', { name: /^Payer/ }).click();
  await page.locator('#name-error').waitFor();
  t.equal(await page.evaluate(() => document.activeElement?.className), 'error-summary', 'focus on the error summary');
  t.equal(await page.locator('#operator_code').inputValue(), 'CM_MTN_MOMO', 'the choices kept');
  t.same(await accessibilityProblems(page), [], 'axe: none on the form with its errors');
  await page.getByLabel(fr['pay.field.name']).fill('Awa Ngono');
  await page.getByRole('button', { name: /^Payer/ }).click();

  await page.waitForURL(new RegExp(`/pay/${linkId}/payments/[0-9a-f-]{36}$`));
  await page.getByRole('heading', { name: fr['pay.status.pending.title'] }).waitFor();
  t.match(await page.locator('#status').textContent(), fr['pay.handset.CM_MTN_MOMO'].slice(0, 40));
  await shot(page, 'pay-pending');
  t.same(await accessibilityProblems(page), [], 'axe: no serious or critical violation on the status page');
  await page.getByRole('heading', { name: fr['pay.status.completed.title'] }).waitFor({ timeout: 30_000 });
  await shot(page, 'pay-completed');
  t.equal(await page.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true, 'followed without a reload');
  t.same(await accessibilityProblems(page), [], 'axe: none on the completed status either');
  t.same(outside, [], 'no request outside the origin');
  t.same(problems, [], 'no script error and no CSP violation');
});

t.test('without JavaScript: the form posts, the status page reloads itself to completed', { skip, timeout: 180_000 }, async (t) => {
  const { h, linkId } = await setUp(t);
  const { page, problems } = await phone(t, false);
  await page.goto(`${h.url}/pay/${linkId}`);
  await page.getByLabel(fr['pay.field.country']).selectOption('CM');
  await page.getByLabel(fr['pay.field.phone']).fill('6 70 00 00 02');
  await page.getByLabel(fr['pay.field.operator']).selectOption('CM_ORANGE_MOMO');
  // A name left out: the same page again, the problem beside the field.
  await page.getByRole('button', { name: /^Payer/ }).click();
  t.match(await page.locator('#name-error').textContent(), fr['pay.error.name']);
  t.equal(await page.locator('#phone').inputValue(), '6 70 00 00 02', 'what was typed is kept');
  await page.getByLabel(fr['pay.field.name']).fill('Awa Ngono');
  await page.getByRole('button', { name: /^Payer/ }).click();
  await page.waitForURL(new RegExp(`/pay/${linkId}/payments/[0-9a-f-]{36}$`));
  t.match(await page.locator('h1').textContent(), fr['pay.status.pending.title']);
  t.match(await page.locator('#status').textContent(), fr['pay.handset.CM_ORANGE_MOMO'].slice(0, 40));
  await page.getByRole('heading', { name: fr['pay.status.completed.title'] }).waitFor({ timeout: 30_000 });
  t.same(problems, []);
});
