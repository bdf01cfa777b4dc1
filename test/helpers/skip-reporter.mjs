// @ts-check
/**
 * The test command's reporter (package.json "test": `--test-reporter=./test/helpers/skip-reporter.mjs`;
 * plain JavaScript: node loads reporters before `--import tsx` applies). It is node's own default
 * reporter (spec on a terminal, tap otherwise, as without the option), with the suites and tests
 * that were skipped listed just before node's final summary, by file and reason:
 *
 *     skipped: 2 suites or tests
 *     skipped: test/replicas/fence.test.ts: PostgreSQL binaries (initdb, pg_ctl, postgres) not found: … (1)
 *     skipped: test/sources/dns-source.test.ts: knotd, knotc, keymgr, unbound not found: … (1)
 *
 * The lines are diagnostics of the run (`# skipped: …` in tap, `ℹ skipped: …` in spec), so node's
 * summary (`tests`, `suites`, `pass`, `fail`, … `duration_ms`) stays the output's last lines. A skip
 * without a reason (`skip: true`) is listed as "(no reason given)"; the tests a
 * `--test-name-pattern` or `--test-only` run did not select are not listed. Why a suite skips is decided
 * in one place, test/helpers/skip.ts.
 */
import { relative } from 'node:path';
import { Readable } from 'node:stream';
import { spec, tap } from 'node:test/reporters';

/**
 * @typedef {{ type: string, data: { name?: string, nesting?: number, file?: string, skip?: string | boolean, message?: string } }} TestEvent
 */

/** Node's own skips of what a run did not select (`--test-name-pattern`, `--test-only`): not listed. */
const UNSELECTED = new Set(['test name does not match pattern', "'only' option not set"]);

/**
 * The lines listing the skips (none when nothing was skipped).
 * @param {ReadonlyMap<string, number>} skips "<file>: <reason>" → how many suites or tests
 * @returns {string[]}
 */
export function skipLines(skips) {
  if (skips.size === 0) return [];
  let total = 0;
  for (const n of skips.values()) total += n;
  return [`skipped: ${total} ${total === 1 ? 'suite or test' : 'suites or tests'}`, ...[...skips].map(([key, n]) => `skipped: ${key} (${n})`)];
}

/**
 * The events, with the skip lines inserted before the run's summary.
 * @param {AsyncIterable<TestEvent>} source
 * @returns {AsyncGenerator<TestEvent>}
 */
async function* withSkips(source) {
  /** @type {Map<string, number>} */
  const skips = new Map();
  let listed = false;
  /** @returns {Generator<TestEvent>} */
  const list = function* () {
    listed = true;
    for (const message of skipLines(skips)) yield { type: 'test:diagnostic', data: { nesting: 0, message } };
  };
  for await (const event of source) {
    const { data } = event;
    if (event.type === 'test:pass' && data.skip !== undefined && data.skip !== false && !(typeof data.skip === 'string' && UNSELECTED.has(data.skip))) {
      const file = data.file !== undefined ? relative(process.cwd(), data.file) : '(no file)';
      const key = `${file}: ${typeof data.skip === 'string' ? data.skip : '(no reason given)'}`;
      skips.set(key, (skips.get(key) ?? 0) + 1);
    }
    // The run's summary: diagnostics of no file, the first one "tests <n>".
    if (!listed && event.type === 'test:diagnostic' && data.file === undefined && /^tests \d+$/.test(data.message ?? '')) yield* list();
    yield event;
  }
  if (!listed) yield* list();
}

/**
 * @param {AsyncIterable<TestEvent>} source
 * @returns {AsyncGenerator<string>}
 */
export default async function* skipReporter(source) {
  // Node's default reporter: spec on a terminal, tap otherwise.
  if (process.stdout.isTTY) yield* Readable.from(withSkips(source)).pipe(new spec());
  else yield* /** @type {AsyncGenerator<string>} */ (tap(/** @type {any} */ (withSkips(source))));
}
