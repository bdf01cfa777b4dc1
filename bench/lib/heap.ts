/** Parent side of benchmark 3: one `--expose-gc` child per round, order alternating. */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { HeapChildInput, HeapChildOutput } from './heap-child.js';
import { ROOT } from './server.js';
import { summarize, type Summary } from './stats.js';

export interface HeapReport {
  entries: number;
  bodyBytes: number;
  rounds: HeapChildOutput[];
  summary: {
    cacheBytesPerEntry: Summary;
    baselineBytesPerEntry: Summary;
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

export async function heapBenchmark(origins: string[], perOrigin: number, o: { n: number; concurrency: number; rounds: number; limitMs: number }): Promise<HeapReport> {
  const rounds: HeapChildOutput[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const out = await runChild({ origins, perOrigin, n: o.n, concurrency: o.concurrency, cacheFirst: r % 2 === 0, limitMs: o.limitMs }, o.limitMs * 2 + 30_000);
    for (const [what, m] of [['cache', out.cache], ['baseline', out.baseline]] as const) {
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
      baselineBytesPerEntry: pick((x) => x.baseline.bytesPerEntry),
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
