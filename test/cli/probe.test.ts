/**
 * `a2a-discovery probe`, run as a real child process, as a user runs it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { cardFor } from '../helpers/cards.js';
import type { CliRun } from '../helpers/cli.js';
import { runCli } from '../helpers/cli.js';

const cli = (...args: string[]): Promise<CliRun> => runCli(args);

async function json(...args: string[]): Promise<{ code: number; report: Record<string, unknown> }> {
  const r = await cli(...args, '--json');
  return { code: r.code, report: JSON.parse(r.stdout) as Record<string, unknown> };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'probe-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('probe <file>', () => {
  test('an accepted card exits 0 and lists skills with their effective modes', async () => {
    const { code, report } = await json('probe', 'examples/cards/billing-agent.json', '--allow', 'https://billing.example.com');
    assert.equal(code, 0);
    assert.equal(report.accepted, true);
    assert.equal(report.stage, 'selected');
    assert.equal(report.protocolVersion, '0.3');
    assert.deepEqual(report.problems, []);
    const skills = report.skills as Array<{ id: string; inputModes: string[]; outputModes: string[] }>;
    assert.deepEqual(skills[0], { id: 'invoice-lookup', name: 'Invoice lookup', tags: ['billing', 'invoices'], inputModes: ['text'], outputModes: ['text', 'application/json'] });
  });

  test('the text report names every stage', async () => {
    const r = await cli('probe', 'examples/cards/warranty-agent.json');
    assert.equal(r.code, 0);
    for (const stage of ['parse', 'schema', 'policy', 'signature', 'skills', 'ACCEPTED']) assert.match(r.stdout, new RegExp(stage));
    assert.match(r.stdout, /hosts listed, not judged/);
  });

  test('a broken card exits 1 with every schema problem and its path', async () => {
    const { code, report } = await json('probe', 'examples/cards/broken-agent.json');
    assert.equal(code, 1);
    assert.equal(report.accepted, false);
    assert.equal(report.stage, 'schema');
    const paths = (report.problems as Array<{ path: string }>).map((p) => p.path);
    assert.deepEqual(paths, ['capabilities', 'defaultInputModes[0]', 'skills[0].tags', 'skills[1].id', 'skills[1].tags']);
  });

  test('an interface host outside --allow is a policy refusal', async () => {
    const { code, report } = await json('probe', 'examples/cards/billing-agent.json', '--allow', 'https://other.example.com');
    assert.equal(code, 1);
    assert.equal(report.stage, 'policy');
  });

  test('input that is too large, too deep or not JSON is a refusal (exit 1), never a crash', async () => {
    const cases: Array<[string, string]> = [
      ['big.json', JSON.stringify({ name: 'x'.repeat(80_000) })],
      ['deep.json', `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`],
      ['text.json', 'this is not json'],
    ];
    for (const [name, body] of cases) {
      await writeFile(join(dir, name), body);
      const { code, report } = await json('probe', join(dir, name));
      assert.equal(code, 1, name);
      assert.equal(report.stage, 'parse', name);
      assert.ok((report.problems as unknown[]).length > 0);
    }
  });

  test('usage errors exit 2: no target, an unknown flag, a missing file, a bad --allow entry', async () => {
    assert.equal((await cli('probe')).code, 2);
    assert.equal((await cli('probe', 'examples/cards/billing-agent.json', '--frobnicate')).code, 2);
    const missing = await cli('probe', join(dir, 'nope.json'));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read .*ENOENT/);
    const badAllow = await cli('probe', 'examples/cards/billing-agent.json', '--allow', 'ftp://x');
    assert.equal(badAllow.code, 2);
  });

  test('--help and --version exit 0', async () => {
    const help = await cli('probe', '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Exit codes: 0 accepted, 1 refused/);
    assert.equal((await cli('--version')).code, 0);
  });
});

describe('probe <url>', () => {
  let fs: FaultServer;
  let adk: RunningPeer;
  before(async () => {
    fs = await startFaultServer();
    adk = await startAdkPeer({ name: 'returns', description: 'Returns.' });
  });
  after(async () => {
    await fs.close();
    await adk.close();
  });

  test('a well-behaved endpoint: caching headers, a stable ETag and a 304 are reported', async () => {
    const ep = fs.endpoint('good', { card: cardFor(fs, 'good'), cacheControl: 'public, max-age=300' });
    const { code, report } = await json('probe', ep.baseUrl, '--allow-loopback');
    assert.equal(code, 0, JSON.stringify(report.problems));
    const http = report.http as Record<string, unknown>;
    assert.equal(http.status, 200);
    assert.equal(http.maxAgeSeconds, 300);
    assert.equal(http.etag, ep.etag);
    assert.equal(http.notModifiedSupported, true);
    assert.equal(http.etagStable, true);
    assert.equal(ep.hits, 3, 'one fetch, one repeat, one conditional request');
  });

  test('an ETag that changes every time is called out', async () => {
    const ep = fs.endpoint('churn', { card: cardFor(fs, 'churn'), mode: 'etag-churn' });
    const { report } = await json('probe', ep.cardUrl, '--allow-loopback');
    const http = report.http as { etagStable: boolean; notes: string[] };
    assert.equal(http.etagStable, false);
    assert.ok(http.notes.some((n) => /derive the ETag from the content/.test(n)));
  });

  test('an ADK toA2a endpoint is accepted, and its missing max-age is reported', async () => {
    const { code, report } = await json('probe', adk.baseUrl, '--allow-loopback');
    assert.equal(code, 0, JSON.stringify(report.problems));
    const http = report.http as { maxAgeSeconds?: number; notes: string[]; notModifiedSupported: boolean };
    assert.equal(http.maxAgeSeconds, undefined);
    assert.ok(http.notes.some((n) => /no Cache-Control max-age/.test(n)));
    assert.equal(http.notModifiedSupported, true);
  });

  test('a 404 is refused at the fetch stage', async () => {
    const ep = fs.endpoint('gone', { mode: 'status', status: 404 });
    const { code, report } = await json('probe', ep.baseUrl, '--allow-loopback');
    assert.equal(code, 1);
    assert.equal(report.stage, 'fetch');
    assert.equal((report.http as { status: number }).status, 404);
  });

  test('loopback is refused without the development exemption, before any request', async () => {
    const ep = fs.endpoint('private', { card: cardFor(fs, 'private') });
    const { code, report } = await json('probe', ep.baseUrl);
    assert.equal(code, 1);
    assert.ok(['source', 'policy', 'address'].includes(report.stage as string), String(report.stage));
    assert.equal(ep.hits, 0);
  });

  test('a redirect is refused and names its Location', async () => {
    const ep = fs.endpoint('moved', { mode: 'redirect', location: 'http://169.254.169.254/latest/meta-data' });
    const { code, report } = await json('probe', ep.baseUrl, '--allow-loopback');
    assert.equal(code, 1);
    assert.match(JSON.stringify(report.problems), /169\.254\.169\.254/);
  });
});
