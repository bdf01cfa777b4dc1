/** Where every benchmark writes its raw figures (bench/results/, not tracked), with the machine it ran on. */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

/** The machine and the run's span: node, platform, CPUs, load average before and after. */
export function machineMeta(started: Date, loadBefore: readonly number[]): Record<string, unknown> {
  return {
    started: started.toISOString(),
    finished: new Date().toISOString(),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    loadAvgBefore: loadBefore,
    loadAvgAfter: os.loadavg(),
  };
}

/** Writes `bench/results/<name>` as indented JSON; returns its path relative to the repository. */
export function writeResults(name: string, value: unknown): string {
  const dir = fileURLToPath(new URL('../results/', import.meta.url));
  mkdirSync(dir, { recursive: true });
  writeFileSync(`${dir}${name}`, `${JSON.stringify(value, null, 2)}\n`);
  return `bench/results/${name}`;
}
