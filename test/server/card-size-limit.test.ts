/**
 * One card-size setting: `cache.maxBodyBytes` (the service) and `probe --max-bytes` (the CLI)
 * bound the fetcher, the content check and the JSON reader alike. A ~107 KB valid card, served by
 * a real loopback server, is admitted and selected by the service, accepted by its inspector and
 * by `a2a-discovery probe` when the setting allows it; below the setting, all of them refuse it
 * with the same message.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import type { InspectResult } from '../../packages/service/src/http/inspector.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { cardFor } from '../helpers/cards.js';
import { runCli } from '../helpers/cli.js';
import type { FaultEndpoint, FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { request } from '../helpers/raw-http.js';

/** A valid card of about 107 KB: 192 skills with long descriptions (every JSON structure limit is met). */
function bigCard(fs: FaultServer): Record<string, unknown> {
  const skills = Array.from({ length: 192 }, (_, i) => ({ id: `big-${i}`, name: `Big ${i}`, description: `Skill ${i}: ${'lorem ipsum '.repeat(40)}`, tags: i === 0 ? ['big'] : [`big-${i}`] }));
  return cardFor(fs, 'big', { skills });
}

let fs: FaultServer;
let ep: FaultEndpoint;
before(async () => {
  fs = await startFaultServer();
  ep = fs.endpoint('big', { card: bigCard(fs), cacheControl: 'max-age=300' });
  assert.ok(ep.body.byteLength > 100_000 && ep.body.byteLength < 115_000, `the card is ~107 KB (${ep.body.byteLength} bytes)`);
});
after(async () => {
  await fs?.close();
});

function service(maxBodyBytes: number | undefined): Promise<RunningService> {
  return startService({
    port: 0,
    policy: { allow: [fs.origin], allowLoopback: true },
    vocabulary: [{ tag: 'big', description: 'The big agent.' }],
    needs: [{ tag: 'big' }],
    static: [{ name: 'big_agent', url: ep.baseUrl, description: 'Has many skills.', tags: ['big'] }],
    cache: { minTtlMs: 0, ...(maxBodyBytes !== undefined && { maxBodyBytes }) },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
}

async function inspect(s: RunningService, body: unknown): Promise<InspectResult> {
  const r = await request(s.url, 'POST', '/api/inspect', { 'content-type': 'application/json', origin: s.url }, JSON.stringify(body));
  assert.equal(r.status, 200, r.body);
  return JSON.parse(r.body) as InspectResult;
}

/** `a2a-discovery probe <base URL> --json`, run as a user runs it. */
async function probe(...flags: string[]): Promise<{ code: number; report: { accepted: boolean; stage: string; problems: Array<{ message: string }> } }> {
  const r = await runCli(['probe', ep.baseUrl, '--allow-loopback', '--json', ...flags]);
  return { code: r.code, report: JSON.parse(r.stdout) as { accepted: boolean; stage: string; problems: Array<{ message: string }> } };
}

describe('cache.maxBodyBytes 200000 and probe --max-bytes 200000: the ~107 KB card is accepted', () => {
  let s: RunningService;
  before(async () => {
    s = await service(200_000);
  });
  after(async () => {
    await s?.close();
  });

  test('the service admits the card and selects the agent', async () => {
    const status = (await s.loop.status()).find((e) => e.baseUrl === ep.baseUrl);
    assert.ok(status, 'the endpoint is known');
    assert.equal(status.admitted, true);
    assert.deepEqual(status.verdict, { verdict: 'selected', localName: 'big_agent' }, JSON.stringify(status.lastFailure ?? status.cache?.lastError));
    assert.deepEqual(s.loop.current()?.agents.map((a) => a.localName), ['big_agent']);
  });

  test('the inspector accepts it by URL and pasted, under the same setting', async () => {
    const byUrl = await inspect(s, { url: ep.baseUrl });
    assert.equal(byUrl.report?.accepted, true, JSON.stringify(byUrl.report?.problems));
    const pasted = await inspect(s, { card: ep.body.toString('utf8') });
    assert.equal(pasted.report?.accepted, true, JSON.stringify(pasted.report?.problems));
  });

  test('probe --max-bytes 200000 accepts it', async () => {
    const { code, report } = await probe('--max-bytes', '200000');
    assert.equal(code, 0, JSON.stringify(report.problems));
    assert.equal(report.accepted, true);
  });
});

for (const limit of [undefined, 100_000]) {
  describe(`${limit === undefined ? 'the default 64 KiB' : `a limit of ${limit}`}: the service, its inspector and probe refuse it with one message`, () => {
    const bound = limit ?? 65_536;
    let s: RunningService;
    before(async () => {
      s = await service(limit);
    });
    after(async () => {
      await s?.close();
    });

    test('refused everywhere at the fetch, naming the limit', async () => {
      const status = (await s.loop.status()).find((e) => e.baseUrl === ep.baseUrl);
      assert.ok(status?.lastFailure, 'the service failed to fetch the card');
      assert.equal(status.lastFailure.code, 'ERR_BODY_TOO_LARGE');
      const message = status.lastFailure.message;
      assert.match(message, new RegExp(`exceeds maxBodyBytes ${bound}$`));
      assert.equal(s.loop.current()?.agents.length ?? 0, 0, 'no agent is selected');

      const byUrl = await inspect(s, { url: ep.baseUrl });
      assert.equal(byUrl.report?.accepted, false);
      assert.equal(byUrl.report?.stage, 'fetch');
      assert.deepEqual(byUrl.report?.problems.map((p) => p.message), [message]);

      const cli = await probe(...(limit === undefined ? [] : ['--max-bytes', String(limit)]));
      assert.equal(cli.code, 1);
      assert.equal(cli.report.stage, 'fetch');
      assert.deepEqual(cli.report.problems.map((p) => p.message), [message]);
    });

    test('a pasted card is held to the same limit by the content check', async () => {
      const pasted = await inspect(s, { card: ep.body.toString('utf8') });
      assert.equal(pasted.report?.accepted, false);
      assert.equal(pasted.report?.stage, 'parse');
      assert.match(pasted.report?.problems[0]?.message ?? '', new RegExp(`the limit is ${bound} bytes`));
    });
  });
}
