/**
 * `a2a-discovery doctor` (docs/cli.md): what a new operator gets wrong, checked in order with
 * stable ids, against real loopback peers (an ADK JS agent, an A2A 1.0 server): a good
 * configuration passes; planted mistakes (a port in use, a token file others can read, a source
 * that does not answer, loopback without allowLoopback, a URL the allowlist does not admit) are
 * each reported with their fix.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startTwoAgentService, type TwoAgentService } from '../helpers/two-agent-service.js';

let stand: TwoAgentService;
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-doctor-'));
  stand = await startTwoAgentService();
});
after(async () => {
  await stand?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('doctor', () => {
  async function config(name: string, text: string): Promise<string> {
    const file = join(dir, name);
    await writeFile(file, text);
    return file;
  }
  const origins = () => [stand.billing.baseUrl, stand.warranty.baseUrl].map((u) => new URL(u).origin);

  test('a good configuration passes: every check ok or warn, each source reached (exit 0)', async () => {
    const port = await freePort();
    const file = await config(
      'good.yaml',
      `server:\n  port: ${port}\nallowLoopback: true\nallow:\n${origins().map((o) => `  - ${o}\n`).join('')}store: memory\nvocabulary:\n  - tag: billing\n    description: Invoices.\nstatic:\n  - name: billing_agent\n    url: ${stand.billing.baseUrl}\n    description: Billing.\n    tags: [billing]\n`,
    );
    const run = await runCli(['doctor', '--config', file, '--json']);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const body = JSON.parse(run.stdout) as { ok: boolean; checks: Array<{ id: string; status: string; message: string }> };
    assert.equal(body.ok, true);
    const ids = body.checks.map((c) => c.id);
    assert.deepEqual(ids.slice(0, 6), ['config', 'store', 'token-file', 'port', 'loopback', 'allowlist']);
    const reach = body.checks.find((c) => c.id === 'reach:static[0].url');
    assert.equal(reach?.status, 'ok', JSON.stringify(body.checks));
    assert.equal(body.checks.find((c) => c.id === 'clock')?.status, 'ok', JSON.stringify(body.checks));
    const text = await runCli(['doctor', '--config', file]);
    assert.match(text.stdout, /^ok {4}config {2}/m);
  });

  test('planted mistakes: each reported with its fix (exit 1)', async () => {
    const busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    const busyPort = (busy.address() as { port: number }).port;
    const token = join(dir, 'token');
    await writeFile(token, 'a-long-enough-secret-token-value-0123456789\n');
    await chmod(token, 0o644);
    const dead = await freePort();
    try {
      const file = await config(
        'bad.yaml',
        `server:\n  port: ${busyPort}\n  tokenFile: ${token}\nallowLoopback: true\nallow:\n  - http://127.0.0.1:${dead}\nstore: memory\nvocabulary:\n  - tag: gone\n    description: Gone.\nstatic:\n  - name: gone_agent\n    url: http://127.0.0.1:${dead}/\n    description: Gone.\n    tags: [gone]\n`,
      );
      const run = await runCli(['doctor', '--config', file, '--json']);
      assert.equal(run.code, 1, run.stdout + run.stderr);
      const body = JSON.parse(run.stdout) as { ok: boolean; checks: Array<{ id: string; status: string; message: string }> };
      assert.equal(body.ok, false);
      const check = (id: string) => body.checks.find((c) => c.id === id) ?? assert.fail(`no check ${id}: ${JSON.stringify(body.checks)}`);
      assert.equal(check('config').status, 'ok');
      assert.equal(check('port').status, 'fail');
      assert.match(check('port').message, /EADDRINUSE.*set server\.port/);
      assert.equal(check('token-file').status, 'warn');
      assert.match(check('token-file').message, /chmod 600/);
      assert.equal(check('loopback').status, 'warn');
      assert.equal(check('reach:static[0].url').status, 'fail');
      assert.match(check('reach:static[0].url').message, /ERR_FETCH_NETWORK.*check the host/);
      const text = await runCli(['doctor', '--config', file]);
      assert.equal(text.code, 1);
      assert.match(text.stdout, /^fail {2}port {2}127\.0\.0\.1:\d+ cannot be bound/m);
    } finally {
      await new Promise((r) => busy.close(r));
    }
  });

  test('a URL the allowlist does not admit fails the configuration check, naming the fix', async () => {
    const file = await config('allow.yaml', `allowLoopback: true\nallow:\n  - https://agents.example.com\nstore: memory\nvocabulary:\n  - tag: warranty\n    description: Warranty.\nstatic:\n  - name: warranty_agent\n    cardUrl: ${stand.warranty.cardUrl}\n    description: Warranty.\n    tags: [warranty]\n`);
    const run = await runCli(['doctor', '--config', file, '--json']);
    assert.equal(run.code, 1, run.stdout);
    const body = JSON.parse(run.stdout) as { ok: boolean; checks: Array<{ id: string; status: string; message: string }> };
    assert.equal(body.checks[0]!.id, 'config');
    assert.equal(body.checks[0]!.status, 'fail');
    assert.match(body.checks[0]!.message, /static\[0\]\.cardUrl: .* is not in the allowlist; add its origin to allow/);
  });

  test('http: URLs without allowLoopback are named, with the setting that admits them', async () => {
    const file = await config('loopback.yaml', `allow:\n  - https://agents.example.com\nstore: memory\nstatic:\n  - name: local_agent\n    url: http://127.0.0.1:9/\n    description: Local.\n`);
    const run = await runCli(['doctor', '--config', file, '--json']);
    const body = JSON.parse(run.stdout) as { ok: boolean; checks: Array<{ id: string; status: string; message: string }> };
    assert.equal(run.code, 1, run.stdout);
    const first = body.checks[0]!;
    // The configuration's own cross-checks may already refuse it; either way the fix is named.
    assert.match(body.checks.map((c) => `${c.id} ${c.status} ${c.message}`).join('\n'), /(config|loopback) fail .*allowLoopback/);
    assert.ok(first.id === 'config');
  });
});

/** A port nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}
