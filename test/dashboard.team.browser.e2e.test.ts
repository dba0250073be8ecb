// The Team and sessions pages in a real browser (playwright-core driving Debian's Chromium): an owner
// invites a member with a role and reads the link shown once, changes the member's role through the
// confirmation dialog (the script adds confirmed=yes), and sees their own session marked on the
// sessions page with the browser it runs in. Screenshots: docs/screenshots/team.png, sessions.png.
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startTestApp } from './helpers/app.ts';
import { FormClient, inviteUser, PASSWORD } from './helpers/dashboard.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
const SHOTS = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const skip = fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (.ci/run installs it with apt-get)`;

t.test('an owner invites, changes a role through the dialog, and sees their session', { skip, timeout: 180_000 }, async (t) => {
  const h = await startTestApp();
  t.teardown(() => h.stop());
  const knex = h.app.services.knex;
  const m = await h.newMerchant('Boutique Awa');
  const invitation = await inviteUser(h, m.merchantId, 'awa@boutique-awa.example');
  const setter = new FormClient(h.url);
  await setter.submit(invitation.path, '/dashboard/invite', { token: invitation.token, password: PASSWORD, password_confirm: PASSWORD });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-chromium-'));
  t.teardown(() => fs.rmSync(profile, { recursive: true, force: true }));
  fs.mkdirSync(SHOTS, { recursive: true });
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 860 }, locale: 'en-GB',
  });
  t.teardown(() => context.close());
  const page: Page = context.pages()[0] ?? await context.newPage();
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  await page.goto(`${h.url}/dashboard/sign-in`);
  await page.getByLabel('E-mail address').fill('awa@boutique-awa.example');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard$/);

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Team', exact: true }).click();
  await page.getByLabel('E-mail address').fill('moussa@boutique-awa.example');
  t.equal(await page.getByLabel('Role', { exact: true }).inputValue(), 'viewer', 'the least role offered first');
  await page.getByLabel('Role', { exact: true }).selectOption('finance');
  await page.getByRole('button', { name: 'Invite' }).click();
  const link = await page.locator('#invitation-link').textContent();
  t.match(link, /\/dashboard\/invite\?token=[A-Za-z0-9_-]{43}$/, 'the invitation link, shown once');
  t.match(await page.locator('tr[data-member="moussa@boutique-awa.example"]').textContent(), /Finance[\s\S]*Invited/);
  await shot('team');

  await page.getByLabel('New role for moussa@boutique-awa.example').selectOption('developer');
  await page.locator('tr[data-member="moussa@boutique-awa.example"]').getByRole('button', { name: 'Change role' }).click();
  const dialog = page.locator('dialog[open]');
  t.match(await dialog.textContent(), /Change the role of moussa@boutique-awa\.example\?/);
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await page.waitForURL('**/dashboard/team?done=role_changed');
  t.equal((await knex('dashboard_users').where({ email: 'moussa@boutique-awa.example' }).first('role')).role, 'developer');

  await page.getByRole('link', { name: 'Your sessions' }).click();
  await page.waitForURL('**/dashboard/sessions');
  t.match(await page.locator('tr[data-current="yes"]').textContent(), /Chrome on Linux\s*This session/);
  await shot('sessions');
});
