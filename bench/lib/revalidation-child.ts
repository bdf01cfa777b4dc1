/**
 * One side of the revalidation harness (bench/revalidation.ts) in a process of its own: `raw`
 * (`undici.request` with the stored ETag, one keep-alive connection per origin) or `cache`
 * (`CardCache.get()` on a virtual clock moved past max-age before each sweep, so every call is a
 * conditional refresh). Warms once (the 200s, untimed), then times `sweeps` sweeps of every
 * target at concurrency 32 (every answer must be a 304) and prints one JSON line: requests per
 * second and the process's CPU per request, in µs. With `profileDir`, writes the CPU profile of the
 * timed sweeps there (`<side>-<pid>.cpuprofile`).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { cacheSide, rawSide, type Target } from './sides.js';

const input = JSON.parse(process.argv[2] ?? '{}') as { side: 'raw' | 'cache'; origins: string[]; targets: number; sweeps: number; profileDir?: string };
const policy = HostPolicy.from({ allow: input.origins, allowLoopback: true });
const targets: Target[] = [];
for (let j = 0; targets.length < input.targets; j++) for (const o of input.origins) if (targets.length < input.targets) targets.push({ baseUrl: `${o}/a${j}/`, cardUrl: `${o}/a${j}/.well-known/agent-card.json` });
const side = input.side === 'raw' ? rawSide('raw', targets, 32, 1) : cacheSide('cache', targets, { policy, concurrency: 32, connectionsPerOrigin: 1, advanceMs: 400_000 });
const warm = await side.warm(performance.now() + 60_000);
if (warm.ok !== targets.length) throw new Error(`warm-up: ${JSON.stringify(warm)}`);
// The profile covers the timed sweeps only (the warm-up's 200s and module loading left out).
const profiler = input.profileDir === undefined ? undefined : new Session();
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}
const cpu = process.cpuUsage();
const started = performance.now();
for (let i = 0; i < input.sweeps; i++) {
  await side.prepare();
  const r = await side.sweep(performance.now() + 60_000);
  if (r.ok !== targets.length) throw new Error(`sweep ${i + 1}: ${JSON.stringify(r)}`);
}
const used = process.cpuUsage(cpu);
const seconds = (performance.now() - started) / 1000;
const requests = input.sweeps * targets.length;
if (profiler) {
  const { profile } = await profiler.post('Profiler.stop');
  writeFileSync(join(input.profileDir!, `${input.side}-${process.pid}.cpuprofile`), JSON.stringify(profile));
  profiler.disconnect();
}
await side.close();
console.log(JSON.stringify({ requestsPerSecond: requests / seconds, cpuUsPerRequest: (used.user + used.system) / requests }));
