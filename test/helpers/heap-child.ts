/**
 * Memory measured in a child process (so neither the test runner's heap nor this process's blurs
 * it): the child, run with `--expose-gc` by {@link runHeapChild}, reads {@link heapAfterGc} before
 * and after its work and prints one JSON line, which the test reads back.
 */
import { execFile } from 'node:child_process';
import { getHeapSpaceStatistics } from 'node:v8';

/**
 * The JavaScript heap in use after four full collections a turn of the event loop apart, less
 * compiled code (which grows as the JIT warms up, not with what is measured); with `arrayBuffers`,
 * plus the stores of typed arrays (outside the JavaScript heap).
 */
export async function heapAfterGc(o: { arrayBuffers?: boolean } = {}): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  for (let i = 0; i < 4; i++) {
    await new Promise((r) => setImmediate(r));
    gc();
  }
  const spaces = getHeapSpaceStatistics().filter((s) => s.space_name !== 'code_space' && s.space_name !== 'code_large_object_space');
  return spaces.reduce((n, s) => n + s.space_used_size, 0) + (o.arrayBuffers ? process.memoryUsage().arrayBuffers : 0);
}

/** Runs `child` (a TypeScript file) with `--expose-gc` and `env` added, within two minutes; resolves with the last line it printed, parsed as JSON. */
export function runHeapChild<T>(child: string, env: Record<string, string>): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', '--import', 'tsx', child], { env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as T);
    });
  });
}
