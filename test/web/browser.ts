/**
 * Shared helpers of the browser tests: Debian's Chromium driven by playwright-core, a 1366×768
 * laptop viewport, bounded waits, and a record of everything the page complained about (script
 * errors, failed requests, CSP violations).
 */
import { mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Locator, Page } from 'playwright-core';

export const VIEWPORT = { width: 1366, height: 768 } as const;
/**
 * Where screenshots go: docs/images/ when `UPDATE_SCREENSHOTS=1` (to refresh the README's
 * pictures), otherwise a temporary folder, so a test run leaves the working tree unchanged.
 */
export const IMAGES =
  process.env['UPDATE_SCREENSHOTS'] === '1' ? new URL('../../docs/images/', import.meta.url).pathname : join(tmpdir(), 'a2a-discovery-screenshots/');

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    timeout: 20_000,
  });
}

/** Opens a page that records its errors; `problems` lists them (tests assert it stays empty). */
export async function openPage(browser: Browser): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: VIEWPORT });
  page.setDefaultTimeout(10_000);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' || /Content Security Policy/i.test(msg.text())) problems.push(`console ${msg.type()}: ${msg.text()}`);
  });
  page.on('requestfailed', (req) => {
    const error = req.failure()?.errorText ?? '';
    // Streams are aborted on purpose when the page goes away or reconnects; the browser fetches
    // the favicon when it likes and cancels that fetch when the page navigates (net::ERR_ABORTED).
    if (req.url().includes('/api/stream')) return;
    if (new URL(req.url()).pathname === '/favicon.svg' && error === 'net::ERR_ABORTED') return;
    // A navigation (page.goto) cancels the reads the previous page still had in flight: a GET of
    // the API aborted is the browser's doing, not a failure (a failed read shows as an HTTP
    // status or a console error, both still recorded).
    if (error === 'net::ERR_ABORTED' && req.method() === 'GET' && new URL(req.url()).pathname.startsWith('/api/')) return;
    problems.push(`request failed: ${req.url()} ${error}`);
  });
  return { page, problems };
}

/** Saves a viewport screenshot under {@link IMAGES}. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(IMAGES, { recursive: true });
  await page.mouse.move(0, VIEWPORT.height - 1);
  await page.evaluate('document.activeElement instanceof HTMLElement && document.activeElement.blur()');
  await page.evaluate("window.scrollTo(0, 0); document.querySelectorAll('.controls, .table-wrap').forEach((e) => { e.scrollTop = 0; e.scrollLeft = 0; })");
  await page.screenshot({ path: `${IMAGES}${name}.png`, fullPage: false });
}

/** Waits until `read()` satisfies `ok`, polling; fails with the last value read. */
export async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 10_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  for (;;) {
    last = await read();
    if (ok(last)) return last;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The rendered text of a locator (table cells apart), whitespace collapsed. */
export async function text(locator: Locator): Promise<string> {
  return (await locator.innerText({ timeout: 5_000 })).replace(/\s+/g, ' ').trim();
}

/** What has keyboard focus: its id, tag, text and the outline it is drawn with. */
export async function focused(page: Page): Promise<{ id: string; tag: string; text: string; outline: string; outlineWidth: number }> {
  return (await page.evaluate(`(() => {
    const el = document.activeElement;
    if (!el) return { id: '', tag: '', text: '', outline: 'none', outlineWidth: 0 };
    const s = getComputedStyle(el);
    return { id: el.id, tag: el.tagName.toLowerCase(), text: (el.textContent || '').trim().slice(0, 60), outline: s.outlineStyle, outlineWidth: parseFloat(s.outlineWidth) || 0 };
  })()`)) as { id: string; tag: string; text: string; outline: string; outlineWidth: number };
}

/** Presses Tab until the element with `id` has focus (at most `max` times); returns the presses. */
export async function tabTo(page: Page, id: string, max = 60): Promise<number> {
  for (let i = 1; i <= max; i++) {
    await page.keyboard.press('Tab');
    if ((await focused(page)).id === id) return i;
  }
  throw new Error(`#${id} was not reached with ${max} presses of Tab`);
}
