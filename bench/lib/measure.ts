/** One timed sweep: wall time, client CPU, and what the server saw (requests, new connections, CPU). */
import type { ServerHandle } from './server.js';
import type { Side, SweepCounts } from './sides.js';

export interface SweepResult extends SweepCounts {
  side: string;
  seconds: number;
  /** Requests the server received during the sweep. */
  requests: number;
  requestsPerSecond: number;
  /** TCP connections the server accepted during the sweep (0 = keep-alive held). */
  newConnections: number;
  /** Client process CPU (user + system) per request, microseconds. */
  clientCpuUsPerRequest: number;
  /** Server process CPU per request, microseconds (same work for every side: a sanity check). */
  serverCpuUsPerRequest: number;
}

export async function timedSweep(server: ServerHandle, side: Side, timeLimitMs: number): Promise<SweepResult> {
  await side.prepare();
  const s0 = await server.stats();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const counts = await side.sweep(t0 + timeLimitMs);
  const t1 = performance.now();
  const c1 = process.cpuUsage(c0);
  const s1 = await server.stats();
  const requests = s1.hits - s0.hits;
  const seconds = (t1 - t0) / 1000;
  const per = Math.max(1, requests);
  return {
    side: side.name,
    ...counts,
    seconds,
    requests,
    requestsPerSecond: requests / seconds,
    newConnections: s1.connections - s0.connections,
    clientCpuUsPerRequest: (c1.user + c1.system) / per,
    serverCpuUsPerRequest: (s1.cpuUserUs - s0.cpuUserUs + s1.cpuSystemUs - s0.cpuSystemUs) / per,
  };
}

/** Throws when a warm-up or sweep did not do what the benchmark assumes (every number would lie). */
export function assertClean(what: string, c: SweepCounts, expected: number): void {
  if (c.ok !== expected || c.errors > 0 || c.unexpected > 0 || c.timedOut) {
    throw new Error(`${what}: ${c.ok}/${expected} as expected, ${c.unexpected} unexpected, ${c.errors} errors${c.timedOut ? ', timed out' : ''}; first: ${c.firstProblem ?? '-'}`);
  }
}
