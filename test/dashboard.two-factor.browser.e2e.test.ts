// Two-step sign-in in a real browser (playwright-core driving Debian's Chromium, /usr/bin/chromium):
// a member signs in with a password, opens the two-step sign-in page, sees the QR code load (the CSP
// allows its data: image), reads the key from the page, types the code the "phone" (the otpauth
// package, as an authenticator app computes it) shows, gets ten recovery codes, signs out, and signs
// in again with the password then a code. The service runs on a manual clock: each code is of its own
// 30-second step, so no code is refused as a replay and the test never waits for a step to change.
// Screenshots go to docs/screenshots/ (two-factor-*.png, sign-in-code.png).
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startTestApp } from './helpers/app.ts';
import { inviteUser, PASSWORD } from './helpers/dashboard.ts';
import { ManualClock } from '../infra/clock.ts';
import { totpCodeAt } from '../infra/totp.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
const SHOTS = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const skip = fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (.ci/run installs it with apt-get)`;

t.test('enrol in two-step sign-in, sign out, sign in with a code', { skip, timeout: 180_000 }, async (t) => {
  const clock = new ManualClock(new Date('2026-11-28T09:00:05Z'));
  const h = await startTestApp({ clock });
  t.teardown(() => h.stop());
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-chromium-'));
  t.teardown(() => fs.rmSync(profile, { recursive: true, force: true }));
  fs.mkdirSync(SHOTS, { recursive: true });
  const merchant = await h.admin('POST', '/admin/merchants', { name: 'Acme Shop' });
  const invitation = await inviteUser(h, merchant.body.id, 'owner@acme.example');

  // An English browser (the steps name the English words; the dashboard speaks French by default).
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 860 }, locale: 'en-GB',
  });
  t.teardown(() => context.close());
  const page: Page = context.pages()[0] ?? await context.newPage();
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  const signInWithPassword = async () => {
    await page.getByLabel('E-mail address').fill('owner@acme.example');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
  };

  await page.goto(h.url + invitation.path);
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByLabel('Repeat the password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.waitForURL('**/dashboard/sign-in?done=password_set');
  await signInWithPassword();
  await page.waitForURL(/\/dashboard$/);

  // Enrolment: the QR code loads, the key is on the page as text.
  await page.goto(`${h.url}/dashboard/two-factor`);
  t.equal(await page.locator('h1').textContent(), 'Two-step sign-in');
  await page.locator('img.qr').waitFor();
  t.ok(await page.locator('img.qr').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the QR code image loads');
  const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s/g, '');
  t.match(secret, /^[A-Z2-7]{32}$/, 'the key, as a member would type it into an app');
  await shot('two-factor-enrol');
  await page.getByLabel('Code').fill(totpCodeAt(secret, clock.now().getTime()));
  await page.getByRole('button', { name: 'Turn on two-step sign-in' }).click();
  t.equal(await page.locator('h1').textContent(), 'Two-step sign-in is on');
  const codes = await page.locator('#recovery-codes li').allTextContents();
  t.equal(codes.length, 10, 'ten recovery codes');
  t.match(await page.locator('.reveal .warning').textContent(), /shown only once/);
  await shot('two-factor-recovery-codes');
  await page.getByRole('link', { name: /continue to the dashboard/ }).click();
  await page.waitForURL(/\/dashboard$/);

  // Sign out, then in again: the password leads to the code step, the code to the dashboard.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL('**/dashboard/sign-in?done=signed_out');
  await signInWithPassword();
  await page.waitForURL('**/dashboard/sign-in/code');
  t.equal(await page.locator('h1').textContent(), 'Enter your sign-in code');
  clock.advance(30_000); // the phone shows the next step's code
  await page.getByLabel('Code').fill('000000' === totpCodeAt(secret, clock.now().getTime()) ? '111111' : '000000');
  await page.getByRole('button', { name: 'Continue' }).click();
  t.match(await page.locator('[role="alert"]').textContent(), /That code is not valid/);
  await shot('sign-in-code');
  await page.getByLabel('Code').fill(totpCodeAt(secret, clock.now().getTime()));
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(/\/dashboard$/);
  t.equal(await page.locator('h1').textContent(), 'Home', 'signed in with the code');
  await page.goto(`${h.url}/dashboard/two-factor`);
  t.match(await page.locator('#two-factor-status').textContent(), /on since/);
  await shot('two-factor-on');
});
