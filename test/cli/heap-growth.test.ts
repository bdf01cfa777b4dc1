/**
 * `serve`'s V8 heap growth (`server.heapGrowthPercent`, docs/operations.md "Memory"): the percent
 * reaches V8 as `--heap-growing-percent`, a value outside 0–300 is refused where it is written,
 * and V8 then reserves less heap for the same live objects (a child process with its own heap; no
 * timing, only the heap V8 reserved).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { startServe } from '../helpers/serve-process.js';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { setHeapGrowth } from '../../packages/service/src/cli/heap-growth.js';

const LOADER = new URL('../helpers/ts-loader.mjs', import.meta.url).pathname;
const MODULE = new URL('../../packages/service/src/cli/heap-growth.ts', import.meta.url).pathname;

test('setHeapGrowth gives V8 the percent as --heap-growing-percent (0: its own heuristics), and refuses what is not a whole percent from 0 to 300', () => {
  const flags: string[] = [];
  setHeapGrowth(30, (f) => flags.push(f));
  setHeapGrowth(0, (f) => flags.push(f));
  assert.deepEqual(flags, ['--heap-growing-percent=30', '--heap-growing-percent=0']);
  for (const bad of [-1, 301, 2.5, Number.NaN]) assert.throws(() => setHeapGrowth(bad, (f) => flags.push(f)), /whole percent from 0 to 300/);
  assert.equal(flags.length, 2, 'nothing given to V8 for a refused value');
});

test('server.heapGrowthPercent is 0 (V8\'s own heuristics) unless set, and a value out of range is refused at its line', () => {
  const agent = 'allow: [https://billing.example.com]\nvocabulary: [{ tag: billing, description: Invoices. }]\nstatic:\n  - { name: billing, url: "https://billing.example.com/", description: Bills., tags: [billing] }\n';
  assert.equal(parseConfig(agent).server.heapGrowthPercent, 0);
  assert.equal(parseConfig(`${agent}server:\n  heapGrowthPercent: 30\n`).server.heapGrowthPercent, 30);
  assert.throws(
    () => parseConfig(`${agent}server:\n  heapGrowthPercent: 400\n`),
    (err: Error & { problems?: ReadonlyArray<{ line?: number }> }) => /server\.heapGrowthPercent: must be at most 300, got 400/.test(err.message) && err.problems?.[0]?.line === 6,
  );
});

/** The most heap V8 reserved while a child kept a third of 1.5 million small objects and dropped the rest, and what was live at the end; with `percent` set at start. */
function reserved(percent: number): Promise<{ peakMB: number; liveMB: number }> {
  const script = `
    import { setHeapGrowth } from ${JSON.stringify(MODULE)};
    setHeapGrowth(${percent});
    const keep = []; let junk = []; let peak = 0;
    for (let i = 0; i < 1_500_000; i++) {
      const o = { a: i, b: 'x' + i, c: [i, i + 1] };
      if (i % 3 === 0) keep.push(o); else junk.push(o);
      if (junk.length > 100_000) junk = [];
      if (i % 5_000 === 0) peak = Math.max(peak, process.memoryUsage().heapTotal);
    }
    junk = []; globalThis.gc();
    console.log(JSON.stringify({ peakMB: peak / 2 ** 20, liveMB: process.memoryUsage().heapUsed / 2 ** 20, kept: keep.length }));`;
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['--expose-gc', '--import', LOADER, '--input-type=module', '-e', script], { timeout: 60_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout) as { peakMB: number; liveMB: number });
    });
  });
}

test('with 30 % V8 reserves at most 0.85 of the heap it reserves with 300 % for the same live objects', async () => {
  const tight = await reserved(30);
  const loose = await reserved(300);
  assert.ok(Math.abs(tight.liveMB - loose.liveMB) < 8, `the same live objects: ${tight.liveMB.toFixed(0)} and ${loose.liveMB.toFixed(0)} MB`);
  assert.ok(tight.peakMB <= 0.85 * loose.peakMB, `30 %: at most ${tight.peakMB.toFixed(0)} MB reserved; 300 %: ${loose.peakMB.toFixed(0)} MB`);
});

test('serve sets and logs the growth it is configured with, and leaves V8 alone (no line) by default', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'heap-growth-'));
  try {
    // An agent that never answers (nothing listens on port 9): serve starts all the same.
    const doc = (server: Record<string, unknown>) => ({
      allow: ['http://127.0.0.1:9'],
      allowLoopback: true,
      vocabulary: [{ tag: 'billing', description: 'Invoices.' }],
      static: [{ name: 'billing', url: 'http://127.0.0.1:9/', description: 'Bills.', tags: ['billing'] }],
      dataDir: join(dir, 'data'),
      server,
    });
    await writeFile(join(dir, 'set.yaml'), stringify(doc({ heapGrowthPercent: 45 })));
    await writeFile(join(dir, 'default.yaml'), stringify(doc({})));
    const set = await startServe({ config: join(dir, 'set.yaml'), logLevel: 'info' });
    try {
      const line = await set.waitForLine(/heap grows at most 45 %/, 10_000);
      assert.equal((JSON.parse(line.input) as { heapGrowthPercent: number }).heapGrowthPercent, 45);
    } finally {
      await set.stop();
    }
    const plain = await startServe({ config: join(dir, 'default.yaml'), logLevel: 'info' });
    try {
      assert.doesNotMatch(plain.output(), /heapGrowthPercent/, 'no growth set or logged by default');
    } finally {
      await plain.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

