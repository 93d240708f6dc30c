/**
 * Headless Chromium for the browser tests: Debian's `chromium` (apt-get install chromium; .ci/run
 * installs it) driven by playwright-core, against the dashboard the API under test serves.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';

export { ensureDashboardBuilt } from '../../support/dashboard-build';

const ROOT = path.join(__dirname, '..', '..', '..');
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/** `extraArgs`: more command-line switches, e.g. a fake microphone (web-calls.test.ts). */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install chromium) or set CHROMIUM_PATH`);
  }
  // Playwright gives every launch a fresh profile directory. The networking flags keep Chromium
  // from reaching out (component updates, sync, QUIC), which a closed network refuses anyway.
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--autoplay-policy=no-user-gesture-required',
      ...extraArgs,
    ],
  });
}

/** Collects uncaught page errors, so a test can assert the app never crashed. */
export function watchPageErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(err.message));
  return errors;
}

export async function logIn(page: Page, baseUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByLabel('Email').fill(email);
  await page.getByRole('textbox', { name: 'Password' }).fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await page.getByRole('heading', { name: 'Home' }).waitFor();
}

/**
 * A logged-in dashboard page in a fresh context, with its uncaught errors collected (assert them
 * empty after each test).
 */
export async function openDashboard(
  browser: Browser,
  baseUrl: string,
  login: { email: string; password: string },
  options: { viewport?: { width: number; height: number }; timeoutMs?: number } = {},
): Promise<{ page: Page; pageErrors: string[] }> {
  const page = await (await browser.newContext({ viewport: options.viewport ?? DESKTOP })).newPage();
  page.setDefaultTimeout(options.timeoutMs ?? 10_000);
  const pageErrors = watchPageErrors(page);
  await logIn(page, baseUrl, login.email, login.password);
  return { page, pageErrors };
}

/** Picks `option` in the Mantine select labelled `label`. */
export async function pick(page: Page, label: string, option: string): Promise<void> {
  await page.getByRole('combobox', { name: label, exact: true }).click();
  await page.getByRole('option', { name: option, exact: true }).click();
}

/**
 * Saves a screenshot. With UPDATE_SCREENSHOTS=1 it goes to docs/screenshots/ (shown in docs/dashboard.md);
 * otherwise to a temporary directory, so a test run leaves the repository as it was.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = process.env.UPDATE_SCREENSHOTS === '1' ? path.join(ROOT, 'docs', 'screenshots') : path.join(os.tmpdir(), 'vap-screenshots');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  // Toasts would cover the page header: close them (one may close itself meanwhile).
  const toasts = page.locator('.mantine-Notification-root');
  for (const close of await page.locator('.mantine-Notification-closeButton').all()) await close.click({ timeout: 1000 }).catch(() => undefined);
  for (const deadline = Date.now() + 10_000; (await toasts.count()) > 0 && Date.now() < deadline; ) await page.waitForTimeout(100);
  await page.screenshot({ path: file });
  return file;
}

/** The element's box once it has stopped moving (the canvas re-frames, dialogs fade out). */
export async function stableBox(locator: Locator, timeoutMs = 10_000): Promise<{ x: number; y: number; width: number; height: number }> {
  const deadline = Date.now() + timeoutMs;
  let last = await locator.boundingBox();
  for (;;) {
    await new Promise((r) => setTimeout(r, 150));
    const box = await locator.boundingBox();
    if (box && last && box.x === last.x && box.y === last.y && box.width === last.width && box.height === last.height) return box;
    if (Date.now() > deadline) throw new Error('element kept moving');
    last = box;
  }
}
