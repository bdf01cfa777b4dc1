/**
 * Benchmark 1: a conditional refresh sweep (every answer a 304) through CardCache against raw
 * `undici.request`, same targets, same concurrency, same server, interleaved rounds.
 */
import type { ServerHandle } from './server.js';
import { assertClean, timedSweep, type SweepResult } from './measure.js';
import type { Side } from './sides.js';
import { summarize, type Summary } from './stats.js';

interface RefreshRound {
  round: number;
  order: string[];
  results: Record<string, SweepResult>;
  /** sides[i] throughput / baseline throughput, and baseline CPU per request / sides[i]'s. */
  throughputRatio: Record<string, number>;
  cpuRatio: Record<string, number>;
  /** sides[i] client CPU per request / the baseline's (the inverse of cpuRatio: lower is better). */
  cpuPerRequestRatio: Record<string, number>;
}

export interface RefreshReport {
  name: string;
  targets: number;
  concurrency: number;
  baseline: string;
  rounds: RefreshRound[];
  summary: Record<string, { requestsPerSecond: Summary; clientCpuUsPerRequest: Summary; serverCpuUsPerRequest: Summary; throughputRatio?: Summary; cpuRatio?: Summary; cpuPerRequestRatio?: Summary }>;
}

/**
 * Warms every side once (but those in `alreadyWarm`), then runs `rounds` rounds; in each round every side does one timed
 * sweep, in an order rotated per round so no side always runs first (or right after another).
 */
export async function refreshBenchmark(
  name: string,
  server: ServerHandle,
  sides: Side[],
  baseline: string,
  o: { targets: number; concurrency: number; rounds: number; sweepLimitMs: number; alreadyWarm?: ReadonlySet<string> },
): Promise<RefreshReport> {
  for (const side of sides) if (!o.alreadyWarm?.has(side.name)) assertClean(`${name} / ${side.name} warm-up`, await side.warm(performance.now() + o.sweepLimitMs), o.targets);
  const rounds: RefreshRound[] = [];
  for (let r = 0; r < o.rounds; r++) {
    const order = sides.map((_, i) => sides[(i + r) % sides.length]!);
    const results: Record<string, SweepResult> = {};
    for (const side of order) {
      const res = await timedSweep(server, side, o.sweepLimitMs);
      assertClean(`${name} / ${side.name} round ${r + 1}`, res, o.targets);
      if (res.requests !== o.targets) throw new Error(`${name} / ${side.name}: the server saw ${res.requests} requests for ${o.targets} targets`);
      results[side.name] = res;
    }
    const base = results[baseline]!;
    const throughputRatio: Record<string, number> = {};
    const cpuRatio: Record<string, number> = {};
    const cpuPerRequestRatio: Record<string, number> = {};
    for (const side of sides) {
      if (side.name === baseline) continue;
      throughputRatio[side.name] = results[side.name]!.requestsPerSecond / base.requestsPerSecond;
      cpuRatio[side.name] = base.clientCpuUsPerRequest / results[side.name]!.clientCpuUsPerRequest;
      cpuPerRequestRatio[side.name] = results[side.name]!.clientCpuUsPerRequest / base.clientCpuUsPerRequest;
    }
    rounds.push({ round: r + 1, order: order.map((s) => s.name), results, throughputRatio, cpuRatio, cpuPerRequestRatio });
  }
  const summary: RefreshReport['summary'] = {};
  for (const side of sides) {
    const pick = (f: (x: SweepResult) => number) => summarize(rounds.map((r) => f(r.results[side.name]!)));
    summary[side.name] = {
      requestsPerSecond: pick((x) => x.requestsPerSecond),
      clientCpuUsPerRequest: pick((x) => x.clientCpuUsPerRequest),
      serverCpuUsPerRequest: pick((x) => x.serverCpuUsPerRequest),
      ...(side.name !== baseline && {
        throughputRatio: summarize(rounds.map((r) => r.throughputRatio[side.name]!)),
        cpuRatio: summarize(rounds.map((r) => r.cpuRatio[side.name]!)),
        cpuPerRequestRatio: summarize(rounds.map((r) => r.cpuPerRequestRatio[side.name]!)),
      }),
    };
  }
  return { name, targets: o.targets, concurrency: o.concurrency, baseline, rounds, summary };
}
