/**
 * Parent side of benchmark 4 (pipeline CPU): one `--expose-gc` child process
 * (bench/lib/pipeline-child.ts), summarized here, with the n log n growth checks.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { PipelineChildInput, PipelineChildOutput } from './pipeline-child.js';
import { ROOT } from './server.js';
import { summarize, type Summary } from './stats.js';

/**
 * A size's cost per n·log2 n, divided by the smallest size's, may be at most this (issue 16:
 * snapshot build at 100k agents within 1.2× its n log n line). n log n gives 1; from 1,000 to
 * 100,000 agents n^1.15 gives 1.2, n^1.2 gives 1.5 and n² gives 60. See docs/benchmarks.md.
 */
export const NLOGN_THRESHOLD = 1.2;

export interface GrowthRow {
  n: number;
  /** ms per call. */
  ms: Summary;
  /** (t(n) / (n·log2 n)) ÷ (t(n0) / (n0·log2 n0)), n0 the smallest size: ratio of the medians, range over repetitions. */
  normalized: { median: number; min: number; max: number };
}

export interface PipelineReport {
  input: PipelineChildInput;
  raw: PipelineChildOutput;
  build: GrowthRow[];
  digest: GrowthRow[];
  digestSorted: GrowthRow[];
  plainSort: GrowthRow[];
  /** localName reads per n·log2 n, normalized to the smallest size (deterministic). */
  readsNormalized: { build: Record<string, number>; digest: Record<string, number> };
  diffMs: Summary;
  selectMs: Record<string, Summary>;
  resolveMs: Summary;
  snapshotOfSelectionMs: Summary;
  verdicts: {
    /** Time per n·log2 n at every size ≤ NLOGN_THRESHOLD × the smallest size's (medians). */
    buildTimeWithinNLogN: boolean;
    digestTimeWithinNLogN: boolean;
    /** Work (localName reads) per n·log2 n at every size ≤ NLOGN_THRESHOLD × the smallest size's. */
    buildWorkWithinNLogN: boolean;
    digestWorkWithinNLogN: boolean;
    digestsAgree: boolean;
  };
}

function runChild(input: PipelineChildInput, timeoutMs: number): Promise<PipelineChildOutput> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./pipeline-child.ts', import.meta.url)), [JSON.stringify(input)], {
      cwd: ROOT,
      execArgv: ['--expose-gc', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: PipelineChildOutput | undefined;
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`pipeline child: no result within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', (m: PipelineChildOutput) => {
      result = m;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (result !== undefined) resolve(result);
      else reject(new Error(`pipeline child exited with ${code} and no result`));
    });
  });
}

const nlogn = (n: number) => n * Math.log2(n);

function growth(series: Record<string, number[]>, sizes: readonly number[]): GrowthRow[] {
  const n0 = sizes[0]!;
  const base = series[n0]!;
  const per = (t: number, m: number) => t / nlogn(m);
  return sizes.map((n) => {
    const xs = series[n]!;
    const paired = summarize(xs.map((t, i) => per(t, n) / per(base[i]!, n0)));
    return {
      n,
      ms: summarize(xs),
      normalized: { median: per(summarize(xs).median, n) / per(summarize(base).median, n0), min: paired.min, max: paired.max },
    };
  });
}

function normalizedCounts(counts: Record<string, number>, sizes: readonly number[]): Record<string, number> {
  const n0 = sizes[0]!;
  const out: Record<string, number> = {};
  for (const n of sizes) out[n] = counts[n]! / nlogn(n) / (counts[n0]! / nlogn(n0));
  return out;
}

export async function pipelineBenchmark(input: PipelineChildInput): Promise<PipelineReport> {
  const sizes = [...input.sizes].sort((a, b) => a - b);
  const raw = await runChild({ ...input, sizes }, input.limitMs + 60_000);
  if (raw.repsDone === 0) throw new Error('pipeline child: no timed repetition finished within the time limit');
  const build = growth(raw.build, sizes);
  const digest = growth(raw.digest, sizes);
  const readsNormalized = { build: normalizedCounts(raw.reads.build, sizes), digest: normalizedCounts(raw.reads.digest, sizes) };
  const within = (rows: GrowthRow[]) => rows.every((r) => r.normalized.median <= NLOGN_THRESHOLD);
  const workWithin = (x: Record<string, number>) => Object.values(x).every((v) => v <= NLOGN_THRESHOLD);
  const selectMs: Record<string, Summary> = {};
  for (const [name, c] of Object.entries(raw.select)) selectMs[name] = summarize(c.ms);
  return {
    input: { ...input, sizes },
    raw,
    build,
    digest,
    digestSorted: growth(raw.digestSorted, sizes),
    plainSort: growth(raw.plainSort, sizes),
    readsNormalized,
    diffMs: summarize(raw.diff.ms),
    selectMs,
    resolveMs: summarize(raw.resolve.ms),
    snapshotOfSelectionMs: summarize(raw.snapshotOfSelection.ms),
    verdicts: {
      buildTimeWithinNLogN: within(build),
      digestTimeWithinNLogN: within(digest),
      buildWorkWithinNLogN: workWithin(readsNormalized.build),
      digestWorkWithinNLogN: workWithin(readsNormalized.digest),
      digestsAgree: raw.digestsAgree,
    },
  };
}
