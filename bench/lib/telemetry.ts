/**
 * Benchmark 7, the cost of the discovery spans (issue 27): a conditional refresh sweep through
 * CardCache (every answer a 304, one card-fetch span per refresh) with no tracer provider, with
 * one installed and sampling off (`ParentBased(AlwaysOff)`), and with sampling on
 * (`ParentBased(AlwaysOn)`, batched, spans dropped instead of exported). Each side runs in a child
 * process of its own (bench/lib/telemetry-child.ts: the OpenTelemetry globals cannot be switched
 * back within a process); the sides take turns, in an order rotated per round, against the same
 * fault servers, and each figure is a ratio to the no-provider side of the same round.
 * The fresh-hit path (`CardCache.get` on a fresh entry) has no span at all: benchmark 6 covers it.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { TelemetryChildInput, TelemetryChildOutput, TelemetryMode } from './telemetry-child.js';
import { ROOT } from './server.js';
import { fmtSummary, summarize, table, type Summary } from './stats.js';

const TELEMETRY_MODES: readonly TelemetryMode[] = ['no provider', 'provider, sampling off', 'provider, sampling on'];
const BASELINE: TelemetryMode = 'no provider';

export interface TelemetryReport {
  targets: number;
  concurrency: number;
  rounds: number;
  warmSweepsPerChild: number;
  sweepsPerChild: number;
  raw: TelemetryChildOutput[][];
  summary: Record<string, { cpuUsPerRefresh: Summary; refreshesPerSecond: Summary; cpuRatio?: Summary; throughputRatio?: Summary; spansPerRefresh: number }>;
}

function runChild(input: TelemetryChildInput, timeoutMs: number): Promise<TelemetryChildOutput> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(new URL('./telemetry-child.ts', import.meta.url)), [JSON.stringify(input)], {
      cwd: ROOT,
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let result: TelemetryChildOutput | undefined;
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`telemetry child (${input.mode}): no result within ${timeoutMs} ms`));
    }, timeoutMs);
    child.on('message', (m: TelemetryChildOutput) => {
      result = m;
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (result !== undefined) resolve(result);
      else reject(new Error(`telemetry child (${input.mode}) exited with ${code} and no result`));
    });
  });
}

/** `targets` endpoints `a0`, `a1`, ... spread round-robin over `origins` (as bench/run.ts spreads them). */
export async function telemetryBenchmark(
  origins: string[],
  targets: number,
  o: { concurrency: number; rounds: number; warmSweeps: number; sweeps: number; advanceMs: number; limitMs: number },
): Promise<TelemetryReport> {
  const raw: TelemetryChildOutput[][] = [];
  for (let r = 0; r < o.rounds; r++) {
    const order = TELEMETRY_MODES.map((_, i) => TELEMETRY_MODES[(i + r) % TELEMETRY_MODES.length]!);
    const round: TelemetryChildOutput[] = [];
    for (const mode of order) {
      round.push(await runChild({ mode, origins, targets, concurrency: o.concurrency, warmSweeps: o.warmSweeps, sweeps: o.sweeps, advanceMs: o.advanceMs, limitMs: o.limitMs }, o.limitMs * (o.warmSweeps + o.sweeps + 1) + 60_000));
    }
    raw.push(round);
  }
  // Per child, the median of its sweeps; per round, each side against the baseline of that round.
  const med = (xs: number[]) => summarize(xs).median;
  const of = (round: TelemetryChildOutput[], mode: TelemetryMode) => round.find((x) => x.mode === mode)!;
  const summary: TelemetryReport['summary'] = {};
  for (const mode of TELEMETRY_MODES) {
    const cpu = raw.map((round) => med(of(round, mode).cpuUsPerRefresh));
    const rps = raw.map((round) => med(of(round, mode).refreshesPerSecond));
    const baseCpu = raw.map((round) => med(of(round, BASELINE).cpuUsPerRefresh));
    const baseRps = raw.map((round) => med(of(round, BASELINE).refreshesPerSecond));
    summary[mode] = {
      cpuUsPerRefresh: summarize(cpu),
      refreshesPerSecond: summarize(rps),
      ...(mode !== BASELINE && { cpuRatio: summarize(cpu.map((x, i) => x / baseCpu[i]!)), throughputRatio: summarize(rps.map((x, i) => x / baseRps[i]!)) }),
      spansPerRefresh: med(raw.map((round) => of(round, mode).spansPerRefresh)),
    };
  }
  return { targets, concurrency: o.concurrency, rounds: o.rounds, warmSweepsPerChild: o.warmSweeps, sweepsPerChild: o.sweeps, raw, summary };
}

/** The section's table: per side, CPU and throughput per refresh and their ratios to no provider. */
export function telemetryTable(rep: TelemetryReport): string {
  const opt = (s: Summary | undefined) => (s === undefined ? '1 (baseline)' : fmtSummary(s, 2));
  return table(
    ['side', 'client CPU µs/refresh', 'refreshes/s', `CPU/refresh ÷ ${BASELINE}`, `throughput ÷ ${BASELINE}`, 'spans/refresh'],
    Object.entries(rep.summary).map(([name, s]) => [name, fmtSummary(s.cpuUsPerRefresh, 1), fmtSummary(s.refreshesPerSecond, 0), opt(s.cpuRatio), opt(s.throughputRatio), String(s.spansPerRefresh)]),
  );
}
