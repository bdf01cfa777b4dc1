// @ts-check
/**
 * The test command's reporter (`npm test` runs scripts/run-tests.mjs, which passes `--test-reporter=./test/helpers/reporter.mjs`;
 * plain JavaScript: node loads reporters before `--import tsx` applies). It is node's own default
 * reporter (spec on a terminal, tap otherwise, as without the option) with two changes:
 *
 * - known third-party warnings the test processes print (ADK's "SECURITY WARNING: Mounting the A2A
 *   server WITHOUT authentication" of every `allowUnauthenticated` test server, …: the table
 *   {@link KNOWN_THIRD_PARTY}) are not printed inline, only counted. Any other line a test
 *   process prints, a new warning included, is printed as before;
 * - after node's own summary (`tests`, `suites`, `pass`, `fail`, … `duration_ms`, untouched, as are
 *   the `not ok` lines), a summary a person reads: the counts in one line, what was skipped and why
 *   (by file and reason), the ten slowest test files (each file's wall time, as node measures its
 *   process), the hidden third-party warnings in one line, and every failed or cancelled test by
 *   file and name, so the last screen of a failing run names what failed:
 *
 *     # summary: 2206 tests: 2204 passed, 1 failed, 0 cancelled, 1 skipped, 0 todo; 24 min 50 s
 *     # skipped: 1 suite or test
 *     # skipped: test/replicas/fence.test.ts: PostgreSQL binaries (initdb, pg_ctl, postgres) not found: … (1)
 *     # slowest files:
 *     #   3 min 02 s  test/replicas/rolling-upgrade.test.ts
 *     #   …
 *     # third-party warnings: 150 hidden (ADK: allowUnauthenticated test servers 54; …)
 *     # failed: 1 test
 *     # failed: test/cli/probe.test.ts: probe <file> > an accepted card exits 0: Expected values to be strictly equal: …
 *
 * In tap (stdout not a terminal: CI) these are TAP comment lines (`# …`) after `# duration_ms`; on a
 * terminal they follow spec's own output (`ℹ …`). The skips node makes for what a run did not
 * select (`--test-name-pattern`, `--test-only`) are not listed. Why a suite skips is decided in one
 * place, test/helpers/skip.ts. The exit code is node's.
 */
import { relative, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { spec, tap } from 'node:test/reporters';

/**
 * @typedef {{
 *   name?: string, nesting?: number, file?: string, skip?: string | boolean, message?: string, member?: boolean, group?: boolean,
 *   details?: { duration_ms?: number, error?: { message?: string, failureType?: string, cause?: unknown } }
 * }} EventData
 * @typedef {{ type: string, data: EventData }} TestEvent
 */

/**
 * The third-party output the test processes print that is folded into the summary's count: each
 * entry's `source` and `why` name it in the summary line. `line` matches one line (colours
 * stripped); `block` matches the first line of a multi-line dump (an error printed with its
 * stack and fields), whose indented lines and closing `}` are folded with it. Anything not matched
 * here is printed.
 * @type {ReadonlyArray<{ source: string, why: string, line?: RegExp, block?: RegExp }>}
 */
const KNOWN_THIRD_PARTY = [
  // ADK's toA2a, for every test server mounted with `allowUnauthenticated: true` (test/helpers/a2a-peers.ts).
  { source: 'ADK', why: 'allowUnauthenticated test servers', line: /^WARN: \[ADK\] \S+ SECURITY WARNING: Mounting the A2A server WITHOUT authentication\b/ },
  // ADK's A2A executor, when a test sends a tool confirmation to a remote peer on purpose.
  { source: 'ADK', why: 'tool confirmations over A2A ignored', line: /^WARN: \[ADK\] \S+ Ignoring tool confirmation\(s\) delivered over A2A\b/ },
  // The ADK API server of @google/adk-devtools the interop tests start: its banner and request log.
  { source: 'ADK API server', why: 'its start banner and request log', line: /^(INFO: \[ADK API Server\] \S+ (GET|POST|PUT|PATCH|DELETE) \/|\+-{20,}\+$|\| (ADK API Server (started|stopped)|For local testing, access at http:\/\/\S+)? *\|$)/ },
  // @a2a-js/sdk's express handler, when a test asks a 1.0-only server for 0.3 on purpose.
  { source: '@a2a-js/sdk', why: 'protocol versions refused on purpose', block: /^Unhandled error in JSON-RPC POST handler: VersionNotSupportedError: / },
];

/** A group process's entry (scripts/run-tests.mjs): several test files in one process, one suite each. */
const GROUP_FILE = /\.group\.mjs$/;

/** Node's own skips of what a run did not select (`--test-name-pattern`, `--test-only`): not listed. */
const UNSELECTED = new Set(['test name does not match pattern', "'only' option not set"]);

/** How many slow files the summary lists. */
const SLOWEST = 10;
/** How many failed or cancelled tests the summary lists by name (the rest are counted). */
const MAX_FAILURES_LISTED = 50;
/** Node's summary counts, in its order. */
const COUNTS = ['tests', 'suites', 'pass', 'fail', 'cancelled', 'skipped', 'todo', 'duration_ms'];

// eslint-disable-next-line no-control-regex -- ANSI colour codes (winston colours ADK's levels)
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * The lines listing the skips (none when nothing was skipped).
 * @param {ReadonlyMap<string, number>} skips "<file>: <reason>" → how many suites or tests
 * @returns {string[]}
 */
function skipLines(skips) {
  if (skips.size === 0) return [];
  let total = 0;
  for (const n of skips.values()) total += n;
  return [`skipped: ${total} ${total === 1 ? 'suite or test' : 'suites or tests'}`, ...[...skips].map(([key, n]) => `skipped: ${key} (${n})`)];
}

/**
 * A duration for people: "0.4 s", "12.3 s", "3 min 02 s".
 * @param {number} ms
 * @returns {string}
 */
function formatDuration(ms) {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/** What a run was, gathered from its events. */
class RunSummary {
  /** @type {Map<string, number>} "<file>: <reason>" → how many */
  skips = new Map();
  /** @type {Map<string, number>} file → its process's wall time, ms */
  fileMs = new Map();
  /** @type {Map<string, number>} "<source>: <why>" → lines or dumps hidden */
  hidden = new Map();
  /** @type {Array<{ kind: 'failed' | 'cancelled', text: string }>} */
  failures = [];
  failuresNotListed = 0;
  /** @type {Map<string, number>} node's summary counts */
  counts = new Map();
  /** @type {Map<string, string[]>} file → names of the tests open at each nesting level (freed when the file ends) */
  open = new Map();
  /** @type {Set<string>} files inside a folded multi-line dump (freed when the file ends) */
  inBlock = new Set();
  /** @type {Map<string, string>} group process → the test file it is running (freed when the group ends) */
  members = new Map();
  /**
   * @type {Map<string, string>} test file run in a group process → that process's entry (freed when
   * the group ends: node reports a file's tests in its own order, a file's end may come first)
   */
  grouped = new Map();

  /**
   * Records `event`; returns it, a copy without the hidden lines, or undefined when nothing is left.
   * @param {TestEvent} event
   * @returns {TestEvent | undefined}
   */
  take(event) {
    const { type } = event;
    const { file, isFile, data } = this.#where(event);
    switch (type) {
      case 'test:stdout':
      case 'test:stderr':
        return this.#fold(event, file ?? '');
      case 'test:start':
        if (file !== undefined && !isFile) {
          const names = this.open.get(file) ?? [];
          names.length = data.nesting ?? 0;
          names.push(data.name ?? '');
          this.open.set(file, names);
        }
        return event;
      case 'test:pass':
        if (data.skip !== undefined && data.skip !== false && !(typeof data.skip === 'string' && UNSELECTED.has(data.skip))) {
          const key = `${file ?? '(no file)'}: ${typeof data.skip === 'string' ? data.skip : '(no reason given)'}`;
          this.skips.set(key, (this.skips.get(key) ?? 0) + 1);
        }
        return event;
      case 'test:fail':
        this.#failed(data, file ?? '(no file)', isFile);
        return event;
      case 'test:complete':
        if (isFile && file !== undefined && !data.group) {
          this.fileMs.set(file, data.details?.duration_ms ?? 0);
          this.open.delete(file);
          this.inBlock.delete(file);
        }
        return event;
      case 'test:diagnostic': {
        // Node's own summary: diagnostics of no file, "tests 12", "pass 11", … "duration_ms 123.4".
        const m = data.file === undefined && data.nesting === 0 ? /^(\w+) ([\d.]+)$/.exec(data.message ?? '') : null;
        if (m !== null && COUNTS.includes(/** @type {string} */ (m[1]))) this.counts.set(/** @type {string} */ (m[1]), Number(m[2]));
        return event;
      }
      default:
        return event;
    }
  }

  /**
   * Where an event belongs: its test file, and its data with the nesting within that file. A group
   * process (scripts/run-tests.mjs runs several test files in one process: a `*.group.mjs` entry,
   * one suite per file, named by the file's path) is read as the files it runs: a member's suite
   * is that file (its duration the file's, its failure the file's own), the tests the file declares
   * (node names them by that file) one level up, and what the process prints is the running file's.
   * When the group process itself fails (it exited early), it is named by the file it was running.
   * @param {TestEvent} event
   * @returns {{ file: string | undefined, isFile: boolean, data: EventData }}
   */
  #where({ type, data }) {
    const file = data.file !== undefined ? relative(process.cwd(), data.file) : undefined;
    const isFile = data.nesting === 0 && data.file !== undefined && data.name === data.file;
    if (file === undefined) return { file, isFile, data };
    if (!GROUP_FILE.test(file)) {
      if (!this.grouped.has(file) || data.nesting === undefined || data.nesting === 0) return { file, isFile, data };
      return { file, isFile: false, data: { ...data, nesting: data.nesting - 1 } };
    }
    const running = this.members.get(file);
    if (isFile) {
      if (type === 'test:complete') {
        this.members.delete(file);
        for (const [member, group] of this.grouped) if (group === file) this.grouped.delete(member);
      }
      return { file: running ?? file, isFile: true, data: { ...data, group: true } };
    }
    const suite = type === 'test:start' || type === 'test:pass' || type === 'test:fail' || type === 'test:complete';
    if (!suite || data.nesting !== 0 || data.name === undefined) return { file: running ?? file, isFile: false, data };
    const member = relative(process.cwd(), resolve(data.name));
    if (type === 'test:start') {
      this.members.set(file, member);
      this.grouped.set(member, file);
    }
    return { file: member, isFile: true, data: { ...data, member: true } };
  }

  /**
   * @param {EventData} data
   * @param {string} file
   * @param {boolean} isFile the test file itself failed (it exited early, or did not load)
   */
  #failed(data, file, isFile) {
    const error = data.details?.error;
    // A test that failed only because a subtest did: the subtest is listed.
    if (error?.failureType === 'subtestsFailed') return;
    if (this.failures.length >= MAX_FAILURES_LISTED) {
      this.failuresNotListed++;
      return;
    }
    const kind = error?.failureType === 'cancelledByParent' ? 'cancelled' : 'failed';
    const names = isFile ? ['(the file itself)'] : [...(this.open.get(file) ?? []).slice(0, data.nesting ?? 0), data.name ?? ''];
    const cause = /** @type {{ message?: unknown } | undefined} */ (error?.cause);
    const ended = /** @type {{ exitCode?: number | null, signal?: string | null }} */ (error ?? {});
    const message = isFile && !data.member
      ? `its process ${typeof ended.signal === 'string' ? `was ended by ${ended.signal}` : `exited with code ${ended.exitCode ?? '?'}`} (its output above says why)`
      : typeof cause?.message === 'string'
        ? cause.message
        : (error?.message ?? '');
    const first = message.split('\n').find((l) => l.trim() !== '') ?? '';
    this.failures.push({ kind, text: `${file}: ${names.join(' > ')}${first === '' ? '' : `: ${first.length > 200 ? `${first.slice(0, 200)}…` : first}`}` });
  }

  /**
   * @param {TestEvent} event a test:stdout or test:stderr event
   * @param {string} file
   * @returns {TestEvent | undefined}
   */
  #fold(event, file) {
    const message = event.data.message ?? '';
    const lines = message.split('\n');
    const kept = [];
    for (let i = 0; i < lines.length; i++) {
      const line = /** @type {string} */ (lines[i]);
      if (i === lines.length - 1 && line === '') {
        kept.push(line);
        break;
      }
      const plain = line.replace(ANSI, '').replace(/\r$/, '');
      if (this.inBlock.has(file)) {
        if (/^\s+\S/.test(plain)) continue;
        this.inBlock.delete(file);
        if (plain === '}') continue;
      }
      const known = plain === '' ? undefined : KNOWN_THIRD_PARTY.find((k) => (k.line ?? k.block)?.test(plain));
      if (known === undefined) {
        // The text after the last newline is not a line of its own: kept as it came.
        kept.push(line);
        continue;
      }
      const key = `${known.source}: ${known.why}`;
      this.hidden.set(key, (this.hidden.get(key) ?? 0) + 1);
      if (known.block !== undefined) this.inBlock.add(file);
    }
    const text = kept.join('\n');
    if (text.replace(/\n/g, '') === '') return undefined;
    return text === message ? event : { type: event.type, data: { ...event.data, message: text } };
  }

  /** @returns {string[]} the summary's lines */
  lines() {
    const out = [];
    const c = (/** @type {string} */ k) => this.counts.get(k) ?? 0;
    if (this.counts.has('tests')) {
      const tests = c('tests');
      out.push(`summary: ${tests} ${tests === 1 ? 'test' : 'tests'}: ${c('pass')} passed, ${c('fail')} failed, ${c('cancelled')} cancelled, ${c('skipped')} skipped, ${c('todo')} todo; ${formatDuration(c('duration_ms'))}`);
    }
    out.push(...skipLines(this.skips));
    const slowest = [...this.fileMs].sort((a, b) => b[1] - a[1]).slice(0, SLOWEST);
    if (slowest.length > 0) {
      out.push(`slowest files:`);
      const width = Math.max(...slowest.map(([, ms]) => formatDuration(ms).length));
      for (const [file, ms] of slowest) out.push(`  ${formatDuration(ms).padStart(width)}  ${file}`);
    }
    if (this.hidden.size > 0) {
      let total = 0;
      for (const n of this.hidden.values()) total += n;
      out.push(`third-party warnings: ${total} hidden (${[...this.hidden].map(([key, n]) => `${key} ${n}`).join('; ')})`);
    }
    for (const kind of /** @type {const} */ (['failed', 'cancelled'])) {
      const listed = this.failures.filter((f) => f.kind === kind);
      if (listed.length === 0) continue;
      out.push(`${kind}: ${listed.length} ${listed.length === 1 ? 'test' : 'tests'}${kind === 'failed' && this.failuresNotListed > 0 ? `, and ${this.failuresNotListed} more failed or cancelled not listed` : ''}`);
      for (const f of listed) out.push(`${kind}: ${f.text}`);
    }
    return out;
  }
}

/**
 * The events, recorded into `summary`, without the hidden lines.
 * @param {AsyncIterable<TestEvent>} source
 * @param {RunSummary} summary
 * @returns {AsyncGenerator<TestEvent>}
 */
async function* recorded(source, summary) {
  for await (const event of source) {
    const kept = summary.take(event);
    if (kept !== undefined) yield kept;
  }
}

/**
 * @param {AsyncIterable<TestEvent>} source
 * @returns {AsyncGenerator<string>}
 */
export default async function* reporter(source) {
  const summary = new RunSummary();
  // Node's default reporter: spec on a terminal, tap otherwise; the summary after all of it.
  if (process.stdout.isTTY) {
    yield* Readable.from(recorded(source, summary)).pipe(new spec());
    for (const line of summary.lines()) yield `ℹ ${line}\n`;
  } else {
    yield* /** @type {AsyncGenerator<string>} */ (tap(/** @type {any} */ (recorded(source, summary))));
    for (const line of summary.lines()) yield `# ${line}\n`;
  }
}
