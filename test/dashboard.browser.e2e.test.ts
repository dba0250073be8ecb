// The dashboard in a real browser (playwright-core driving Debian's Chromium, /usr/bin/chromium):
// a new merchant's user sets a password from the operator's invitation, signs in, creates an API key
// and proves it works against the merchant API, revokes a key, sets a webhook URL to a local
// receiver, sends a test event and sees it arrive (signature checked with the secret the page
// revealed), redelivers it and sees the second attempt, opens a transfer's page with both legs, creates a
// payment link and sees its QR code, and switches the dashboard to French.
// Screenshots of the main pages go to docs/screenshots/ (linked from the README).
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { startTestApp, request, type MerchantCreds } from './helpers/app.ts';
import { startReceiver, until } from './helpers/webhooks.ts';
import { inviteUser, PASSWORD } from './helpers/dashboard.ts';
import { createTransfer, waitFor } from './helpers/transfers.ts';
import { verifyWebhook } from '../webhook-verifier/index.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];
const SHOTS = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
const skip = fs.existsSync(CHROMIUM) ? false : `${CHROMIUM} is not installed (.ci/run installs it with apt-get)`;

t.test('a new merchant, from invitation to a working key, webhook and transfer page', { skip, timeout: 240_000 }, async (t) => {
  const h = await startTestApp();
  t.teardown(() => h.stop());
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mpa-chromium-'));
  t.teardown(() => fs.rmSync(profile, { recursive: true, force: true }));
  fs.mkdirSync(SHOTS, { recursive: true });

  // The operator: a merchant (no key yet), a corridor and some float, and the first dashboard user.
  const merchant = await h.admin('POST', '/admin/merchants', { name: 'Acme Shop' });
  const merchantId = merchant.body.id as string;
  await h.admin('PUT', `/admin/merchants/${merchantId}/routing`, { corridors: ['CM-SN-XAF-XOF'] });
  await h.admin('POST', `/admin/merchants/${merchantId}/wallets/XOF/top-ups`, { amount: '250000' });
  const invitation = await inviteUser(h, merchantId, 'owner@acme.example');

  // A fresh profile directory: launchPersistentContext is how Playwright takes --user-data-dir.
  // An English browser (Accept-Language: en-GB): the dashboard speaks French by default and the
  // steps below name its English words.
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1280, height: 860 }, locale: 'en-GB',
  });
  t.teardown(() => context.close());
  const page: Page = context.pages()[0] ?? await context.newPage();
  const nav = (name: string) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });

  // Set the password through the invitation link, then sign in.
  await page.goto(h.url + invitation.path);
  t.equal(await page.locator('h1').textContent(), 'Choose your password');
  await page.getByLabel('New password').fill(PASSWORD);
  await page.getByLabel('Repeat the password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.waitForURL('**/dashboard/sign-in?done=password_set');
  await shot('sign-in');
  await page.getByLabel('E-mail address').fill('owner@acme.example');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/dashboard$/);
  t.equal(await page.locator('h1').textContent(), 'Home');
  t.match(await page.locator('.checklist').textContent(), /Create an API key/);
  t.equal(await page.locator('.checklist li.done').count(), 1, 'only "sign in" is done yet');
  // Keyboard: the first Tab reaches the skip link, which moves focus to the content.
  await page.keyboard.press('Tab');
  t.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to content');
  await shot('home-new-merchant');

  // Create an API key: the secret is revealed once, with a copy button; it works on the merchant API.
  await nav('API keys').click();
  await page.getByRole('button', { name: 'Create API key' }).click();
  const apiSecret = (await page.locator('#new-secret').textContent())!.trim();
  const apiKey = (await page.locator('#new-key').textContent())!.trim();
  t.match(apiSecret, /^sk_/);
  t.match(await page.locator('.reveal .warning').textContent(), /shown only once/);
  t.ok(await page.locator('button[data-copy="new-secret"]').isVisible(), 'copy button shown (JavaScript on)');
  await shot('keys-created');
  const creds: MerchantCreds = { merchantId, keyId: '', apiKey, apiSecret };
  const wallets = await h.as(creds, 'GET', '/wallets');
  t.equal(wallets.status, 200, 'the revealed key and secret work on the merchant API');
  t.equal(wallets.body.data.find((w: { currency: string }) => w.currency === 'XOF').available, '250000');
  await page.goto(`${h.url}/dashboard/keys`);
  t.notOk((await page.content()).includes(apiSecret), 'the secret is not shown again');

  // A second key, revoked through the confirmation dialog: its requests get 401.
  await page.getByRole('button', { name: 'Create API key' }).click();
  const doomed: MerchantCreds = { merchantId, keyId: '', apiKey: (await page.locator('#new-key').textContent())!.trim(), apiSecret: (await page.locator('#new-secret').textContent())!.trim() };
  t.equal((await h.as(doomed, 'GET', '/wallets')).status, 200);
  const row = page.locator(`tr[data-key="${doomed.apiKey}"]`);
  await row.getByRole('button', { name: 'Revoke' }).click();
  const dialog = page.locator('dialog[open]');
  t.match(await dialog.textContent(), /cannot be undone/);
  await dialog.getByRole('button', { name: 'Confirm' }).click();
  await page.waitForURL('**/dashboard/keys?done=revoked');
  t.match(await page.locator(`tr[data-key="${doomed.apiKey}"] .badge`).textContent(), /revoked/);
  t.equal((await h.as(doomed, 'GET', '/wallets')).status, 401, 'the revoked key is refused');
  t.equal((await h.as(creds, 'GET', '/wallets')).status, 200, 'the other key still works');
  await shot('keys');

  // Webhook URL (SSRF rules apply: the test service allows local URLs) and the revealed secret.
  await nav('Webhooks').click();
  await page.getByLabel('Webhook URL').fill(receiver.url);
  await page.getByRole('button', { name: 'Save URL' }).click();
  const signingSecret = (await page.locator('#signing-secret').textContent())!.trim();
  t.match(signingSecret, /^whsec_/);
  await shot('webhooks');

  // Send a test event: it arrives, signed with that secret.
  await page.getByRole('button', { name: 'Send test event' }).click();
  await page.waitForURL('**/dashboard/webhooks?done=test_sent');
  const first = await until(() => receiver.deliveries.find((d) => d.headers['x-service-event'] === 'webhook.test'), 'the test event');
  const event = verifyWebhook(first.body, first.headers, signingSecret);
  t.equal(event.event, 'webhook.test');
  t.equal((event.data as any).object.merchant_id, merchantId);

  // The event log shows it delivered; redeliver it and see the second attempt.
  await nav('Event log').click();
  await until(async () => {
    await page.reload();
    return (await page.locator(`tr[data-event-id="${event.id}"] .badge`).textContent())?.includes('delivered');
  }, 'the event delivered in the log', 20_000);
  await shot('events');
  await page.locator(`tr[data-event-id="${event.id}"] a`).first().click();
  t.equal(await page.locator('tr[data-attempt]').count(), 1);
  await page.getByRole('button', { name: 'Redeliver now' }).click();
  await page.waitForURL(`**/dashboard/events/${event.id}?done=redelivered`);
  const second = await until(() => receiver.deliveries.filter((d) => d.headers['x-service-webhook-id'] === event.id)[1], 'the redelivery');
  t.equal(second.body, first.body, 'same body');
  await until(async () => {
    await page.reload();
    return (await page.locator('tr[data-attempt]').count()) === 2;
  }, 'the second attempt on the page', 20_000);
  t.match(await page.locator('tr[data-attempt="2"]').textContent(), /manual/);
  t.match(await page.locator('tr[data-attempt="2"]').textContent(), /HTTP 200/);
  await shot('event');

  // A transfer created through the API, then its page: timeline and both legs.
  const customer = await h.as(creds, 'POST', '/customers', { first_name: 'Awa', last_name: 'Diop' }, { idem: true });
  const transfer = await createTransfer(h, { ...creds, customerId: customer.body.id });
  await waitFor('transfer completed', async () => (await h.as(creds, 'GET', `/transfers/${transfer.id}`)).body.status === 'completed');
  await nav('Transfers').click();
  await shot('transfers');
  await page.locator(`a[href="/dashboard/transfers/${transfer.id}"]`).click();
  await page.waitForURL(`**/dashboard/transfers/${transfer.id}`);
  const legs = page.locator('.card.leg');
  t.equal(await legs.count(), 2, 'both legs');
  t.match(await legs.nth(0).textContent(), /Collection \(payin leg\)[\s\S]*completed/);
  t.match(await legs.nth(1).textContent(), /Disbursement \(payout leg\)[\s\S]*completed/);
  t.match(await page.locator('.timeline').textContent(), /completed/);
  t.match(await page.locator('table.history').textContent(), /transfer\.completed/);
  await shot('transfer');

  // The checklist is complete but for nothing; and the home page on a phone-sized screen.
  await page.goto(`${h.url}/dashboard`);
  t.equal(await page.locator('.checklist li.todo').count(), 0, 'every getting-started step is done');
  await shot('home');
  await page.setViewportSize({ width: 390, height: 844 });
  await page.reload();
  await shot('home-mobile');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  const widest = overflow === 0 ? '' : await page.evaluate(() => [...document.querySelectorAll('body *')]
    .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1).slice(0, 3).map((e) => e.outerHTML.slice(0, 80)).join(' | '));
  t.equal(overflow, 0, `no horizontal scrolling on a phone ${widest}`);

  // Page weight: small pages and no bundle (fast on a slow link).
  const html = await request(h.url, 'GET', '/dashboard/static/dashboard.js');
  const css = await request(h.url, 'GET', '/dashboard/static/dashboard.css');
  t.ok(html.text.length + css.text.length < 16_000, `script + stylesheet ${html.text.length + css.text.length} bytes`);

  // A payment link from the form: its page shows the address and the QR code (the image loads: the
  // CSP allows it); then the header's switch to French, remembered on the next page.
  await page.setViewportSize({ width: 1280, height: 860 });
  await nav('Payment links').click();
  await page.getByLabel('Amount', { exact: true }).fill('5000');
  await page.getByLabel('Description', { exact: true }).fill('Wax dress, size M');
  await page.getByRole('button', { name: 'Create payment link' }).click();
  await page.waitForURL(/\/dashboard\/links\/[0-9a-f-]{36}\?done=link_created$/);
  t.match(await page.locator('#link-url').textContent(), /\/pay\/[0-9a-f-]{36}$/);
  await page.locator('img.qr').waitFor();
  t.ok(await page.locator('img.qr').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), 'the QR code image loads');
  await shot('payment-link');
  await page.locator('a.lang').click();
  await page.waitForURL(/lang=fr$/);
  t.equal(await page.locator('html').getAttribute('lang'), 'fr');
  t.match(await page.locator('h1').textContent(), /^Lien de paiement /);
  await shot('payment-link-fr');
  await page.goto(`${h.url}/dashboard`);
  t.equal(await page.locator('h1').textContent(), 'Accueil', 'the choice is remembered');
});
