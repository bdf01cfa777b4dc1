/**
 * axe-core in the browser tests: `expectNoAxeViolations(page)` checks the page as it is now
 * against the WCAG 2.0 and 2.1 level A and AA rules and fails with one readable line per
 * violation and element (rule, impact, CSS target, axe's summary of what to fix).
 *
 * The dashboard runs under `script-src 'self'`, so a `<script>` element with axe's source inline
 * (`page.addScriptTag({ content })`) is refused and reported as a CSP violation — which the
 * pages opened by `openPage` count as a problem. The source is evaluated through the DevTools
 * protocol instead (`page.evaluate`), which the page's policy does not govern, and only once
 * per document.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/** The rule tags checked: WCAG 2.0 and 2.1, levels A and AA. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] as const;

let source: Promise<string> | undefined;
function axeSource(): Promise<string> {
  source ??= readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  return source;
}

/** One element failing one rule, as `axe.run` reports it (the fields used here). */
interface AxeNode {
  target: unknown[];
  failureSummary?: string;
}
interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  helpUrl: string;
  nodes: AxeNode[];
}

/**
 * Runs axe-core on `page` (the whole document) and throws when any WCAG 2.0/2.1 A or AA rule is
 * violated. `context` names the page in the message (for example `endpoints at 390×844`).
 *
 * @example await expectNoAxeViolations(page, 'timeline at 1366 px');
 */
export async function expectNoAxeViolations(page: Page, context?: string): Promise<void> {
  await loadAxe(page);
  const violations = (await page.evaluate(
    `window.axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ['violations'] }).then((r) => r.violations)`,
  )) as AxeViolation[];
  if (violations.length === 0) return;
  throw new Error(formatViolations(violations, context));
}

/**
 * Loads axe once per page, then lets the page settle for two frames: a viewport change made just
 * before is laid out, its resize observers have run and the renders they asked for are done —
 * what a user meets, who cannot act within a frame of resizing.
 */
async function loadAxe(page: Page): Promise<void> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) {
    // Wrapped in a function body so axe's top-level declarations stay out of the page's scope
    // apart from the `window.axe` it assigns itself.
    await page.evaluate(`(() => { ${await axeSource()}\n })()`);
  }
  await page.evaluate('new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(undefined))))');
}

/**
 * Like {@link expectNoAxeViolations}, but with EVERY rule axe-core has — best practices
 * (`landmark-unique`, `region`, `heading-order`, …), AAA (`color-contrast-enhanced`) and the
 * experimental rules too, not only the WCAG A/AA tags. `exclude` leaves parts of the document
 * out (CSS selectors), e.g. the shell around a view when only the view is under test; landmark
 * rules still see the whole document.
 *
 * @example await expectNoAxeViolationsAllRules(page, 'explorer at rest', ['.sidebar']);
 */
export async function expectNoAxeViolationsAllRules(page: Page, context?: string, exclude: readonly string[] = []): Promise<void> {
  await loadAxe(page);
  const where = exclude.length === 0 ? 'document' : JSON.stringify({ include: [['html']], exclude: exclude.map((s) => [s]) });
  const violations = (await page.evaluate(
    `window.axe.run(${where}, { runOnly: { type: 'rule', values: window.axe.getRules().map((r) => r.ruleId) }, resultTypes: ['violations'] }).then((r) => r.violations)`,
  )) as AxeViolation[];
  if (violations.length === 0) return;
  throw new Error(formatViolations(violations, `${context ?? 'page'}, every axe rule`));
}

/** The message: a heading line, then per rule its id, impact and help, and each element. */
export function formatViolations(violations: readonly AxeViolation[], context?: string): string {
  const count = violations.reduce((n, v) => n + v.nodes.length, 0);
  const lines = [`axe-core: ${violations.length} rule(s) violated on ${count} element(s)${context ? ` (${context})` : ''}`];
  for (const v of violations) {
    lines.push(`- ${v.id} [${v.impact ?? 'unknown'}]: ${v.help} (${v.helpUrl})`);
    for (const n of v.nodes) {
      const summary = (n.failureSummary ?? '').replace(/\s+/g, ' ').trim();
      lines.push(`    ${n.target.map((t) => (Array.isArray(t) ? t.join(' >>> ') : String(t))).join(', ')}${summary ? ` — ${summary}` : ''}`);
    }
  }
  return lines.join('\n');
}
