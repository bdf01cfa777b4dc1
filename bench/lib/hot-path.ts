/**
 * Benchmark 6, the hot path: ns per call of `CardCache.get()` on a fresh entry (with and without
 * an event stream) and of `TreeFactory.rootFor()` (1 and 10,000 pinned sessions), against a bare
 * and an awaited `Map.get`, measured in a child process (bench/lib/hot-path-child.ts).
 *
 * Targets (issue 16): `CardCache.get()` with an event stream and a subscriber, wired as the
 * service wires it (`hitEvents: 'counted'`), ≤ 2× an awaited `Map.get`; `rootFor()` ≤ 2× a bare `Map.get` at 1 and at 10,000 sessions.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { HotPathChildInput, HotPathChildOutput } from './hot-path-child.js';
import { ROOT } from './server.js';
import { summarize, type Summary } from './stats.js';

/** The awaited baseline: `await map.get(key)` in an async loop (one await of a plain value per call). */
export const AWAITED_BASELINE = 'await Map.get';
export const BARE_BASELINE = 'Map.get';
/** rootFor against a bare `Map.get` (issue 29). */
export const HOT_PATH_LIMIT = 2;
/** `CardCache.get()` fresh, with the service's counted events, against an awaited `Map.get` (issue 43). */
export const CARD_CACHE_HOT_LIMIT = 1.5;
export const NO_EVENTS_CASE = 'CardCache.get, fresh, no events';
export const EVENTS_EACH_CASE = "CardCache.get, fresh, events + subscriber, hitEvents 'each'";
/** The case of the target: events wired as the service wires them (`hitEvents: 'counted'`). */
export const EVENTS_CASE = "CardCache.get, fresh, events + subscriber, hitEvents 'counted' (service)";

interface HotPathRow {
  name: string;
  ns: Summary;
  /** ns ÷ the bare Map.get's ns in the same round, over rounds (median, min, max). */
  vsMapGet: Summary;
  /** ns ÷ the awaited Map.get's ns in the same round, over rounds. */
  vsAwaitedMapGet: Summary;
}

export interface HotPathReport {
  input: HotPathChildInput;
  raw: HotPathChildOutput;
  rows: HotPathRow[];
  verdicts: {
    cardCacheGetWithEventsAtMost1_5xAwaitedMapGet: boolean;
    rootFor1SessionAtMost2xMapGet: boolean;
    rootFor10kSessionsAtMost2xMapGet: boolean;
    noFetchDuringTiming: boolean;
  };
}

function runChild(input: HotPathChildInput, timeoutMs: number): Promise<HotPathChildOutput> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./hot-path-child.ts', import.meta.url)), [JSON.stringify(input)], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: HotPathChildOutput | undefined;
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`hot-path child: no result within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', (m: HotPathChildOutput) => {
      result = m;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (result !== undefined) resolve(result);
      else reject(new Error(`hot-path child exited with ${code} and no result`));
    });
  });
}

export async function hotPathBenchmark(input: HotPathChildInput): Promise<HotPathReport> {
  const raw = await runChild(input, input.limitMs + 90_000);
  if (raw.roundsDone === 0) throw new Error('hot-path child: no timed round finished within the time limit');
  const bare = raw.nsPerCall[BARE_BASELINE] ?? [];
  const awaited = raw.nsPerCall[AWAITED_BASELINE] ?? [];
  // Paired per round (the batches of one round run back to back), then summarized.
  const paired = (xs: readonly number[], base: readonly number[]) => summarize(xs.map((x, i) => x / base[i]!));
  const rows = Object.entries(raw.nsPerCall).map(([name, xs]) => ({ name, ns: summarize(xs), vsMapGet: paired(xs, bare), vsAwaitedMapGet: paired(xs, awaited) }));
  const row = (prefix: string) => rows.find((r) => r.name.startsWith(prefix));
  const ratio = (r: HotPathRow | undefined, f: (x: HotPathRow) => Summary) => (r === undefined ? Infinity : f(r).median);
  return {
    input,
    raw,
    rows,
    verdicts: {
      cardCacheGetWithEventsAtMost1_5xAwaitedMapGet: ratio(row(EVENTS_CASE), (r) => r.vsAwaitedMapGet) <= CARD_CACHE_HOT_LIMIT,
      rootFor1SessionAtMost2xMapGet: ratio(row('rootFor, 1 session'), (r) => r.vsMapGet) <= HOT_PATH_LIMIT,
      rootFor10kSessionsAtMost2xMapGet: ratio(row(`rootFor, ${input.sessions.toLocaleString('en-US')} sessions`), (r) => r.vsMapGet) <= HOT_PATH_LIMIT,
      noFetchDuringTiming: raw.fetchesDuringTiming === 0,
    },
  };
}
