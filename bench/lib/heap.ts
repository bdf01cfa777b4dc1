/** Parent side of benchmark 3: one `--expose-gc` child per round and size, order rotating. */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { HeapChildInput, HeapChildOutput } from './heap-child.js';
import { ROOT } from './server.js';
import { summarize, type Summary } from './stats.js';

/** Target of issue 16: heap + external bytes per cached card, at every size measured. */
export const BYTES_PER_CARD_LIMIT = 3_000;

export interface HeapReport {
  entries: number;
  bodyBytes: number;
  rounds: HeapChildOutput[];
  summary: {
    cacheBytesPerEntry: Summary;
    /** CardCache heap + external per entry. */
    cacheTotalBytesPerEntry: Summary;
    cacheExternalBytesPerEntry: Summary;
    /** Of the CardCache's heap per entry, the code spaces' growth (compiled once per process, not per card). */
    cacheCodeBytesPerEntry: Summary;
    baselineBytesPerEntry: Summary;
    baselineTotalBytesPerEntry: Summary;
    /** undici's MemoryCacheStore (through its cache interceptor), heap + external per entry. */
    undiciTotalBytesPerEntry: Summary;
    undiciExternalBytesPerEntry: Summary;
    /** cache bytes per entry minus the card body's bytes. */
    overheadAboveBody: Summary;
    ratioToBaseline: Summary;
    populateSecondsCache: Summary;
    breakdown: { entryShape: Summary; card: Summary; cachePolicy: Summary; body: Summary; rest: Summary };
  };
}

function runChild(input: HeapChildInput, timeoutMs: number): Promise<HeapChildOutput> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./heap-child.ts', import.meta.url)), [JSON.stringify(input)], {
      cwd: ROOT,
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: HeapChildOutput | undefined;
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`heap child: no result within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', (m: HeapChildOutput) => {
      result = m;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (result !== undefined) resolve(result);
      else reject(new Error(`heap child exited with ${code} and no result`));
    });
  });
}

const notMeasured = (): HeapChildOutput['baseline'] => ({
  entries: 0,
  heapBefore: NaN,
  heapAfter: NaN,
  bytesPerEntry: NaN,
  externalBytesPerEntry: NaN,
  totalBytesPerEntry: NaN,
  codeBytesPerEntry: NaN,
  populateSeconds: NaN,
  errors: 0,
});

/**
 * `comparisons`: the sides measured besides the cache (default both; a side left out reads NaN,
 * e.g. to keep the 100,000-card process short).
 */
export async function heapBenchmark(
  origins: string[],
  perOrigin: number,
  o: { n: number; concurrency: number; rounds: number; limitMs: number; comparisons?: ReadonlyArray<'baseline' | 'undici'> },
): Promise<HeapReport> {
  const all: HeapChildInput['order'] = ['cache', ...(o.comparisons ?? ['baseline', 'undici'])];
  const rounds: HeapChildOutput[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const order = all.map((_, i) => all[(i + r) % all.length]!);
    const out = await runChild({ origins, perOrigin, n: o.n, concurrency: o.concurrency, order, limitMs: o.limitMs }, o.limitMs * order.length + 30_000);
    // A side left out comes back with NaN, which IPC (JSON) turns into null: make it NaN again.
    if (!order.includes('baseline')) out.baseline = notMeasured();
    if (!order.includes('undici')) out.undici = notMeasured();
    for (const [what, m] of [['cache', out.cache], ['baseline', out.baseline], ['undici', out.undici]] as const) {
      if (!order.includes(what)) continue;
      if (m.entries !== o.n || m.errors > 0) throw new Error(`heap ${what} round ${r + 1}: ${m.entries}/${o.n} entries, ${m.errors} errors`);
    }
    rounds.push(out);
  }
  const pick = (f: (x: HeapChildOutput) => number) => summarize(rounds.map(f));
  return {
    entries: o.n,
    bodyBytes: rounds[0]?.bodyBytes ?? NaN,
    rounds,
    summary: {
      cacheBytesPerEntry: pick((x) => x.cache.bytesPerEntry),
      cacheTotalBytesPerEntry: pick((x) => x.cache.totalBytesPerEntry),
      cacheExternalBytesPerEntry: pick((x) => x.cache.externalBytesPerEntry),
      cacheCodeBytesPerEntry: pick((x) => x.cache.codeBytesPerEntry),
      baselineBytesPerEntry: pick((x) => x.baseline.bytesPerEntry),
      baselineTotalBytesPerEntry: pick((x) => x.baseline.totalBytesPerEntry),
      undiciTotalBytesPerEntry: pick((x) => x.undici.totalBytesPerEntry),
      undiciExternalBytesPerEntry: pick((x) => x.undici.externalBytesPerEntry),
      overheadAboveBody: pick((x) => x.cache.bytesPerEntry - x.bodyBytes),
      ratioToBaseline: pick((x) => x.cache.bytesPerEntry / x.baseline.bytesPerEntry),
      populateSecondsCache: pick((x) => x.cache.populateSeconds),
      breakdown: {
        entryShape: pick((x) => x.breakdown.entryShape),
        card: pick((x) => x.breakdown.card),
        cachePolicy: pick((x) => x.breakdown.cachePolicy),
        body: pick((x) => x.breakdown.body),
        rest: pick((x) => x.breakdown.rest),
      },
    },
  };
}
