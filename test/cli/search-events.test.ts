/**
 * `a2a-discovery search` and `a2a-discovery events` (docs/cli.md) as a user runs them, against
 * a real service over real A2A peers (an ADK JS agent, an A2A 1.0 server), with its admin token:
 *
 * - `search` prints the ranked agents, `--json` is the documented object, a missing token is a
 *   refusal that says how to give one, an unreachable URL names it;
 * - `events --follow -o jsonl` prints each event as one JSON line as it happens, and when its
 *   connection is cut (a loopback proxy between the two drops every socket) it reconnects with
 *   `Last-Event-ID` and goes on: no event twice, none missing.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningService } from '../../packages/service/src/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startTwoAgentService } from '../helpers/two-agent-service.js';
import type { TwoAgentService } from '../helpers/two-agent-service.js';
import { CLI, runCli } from '../helpers/cli.js';
import { waitFor } from '../helpers/wait-for.js';

const TOKEN = 'cli-admin-token-0123456789abcdef';
let stand: TwoAgentService;
let service: RunningService;
let billing: RunningPeer;
let dir: string;
let tokenFile: string;

before(async () => {
  stand = await startTwoAgentService({ token: TOKEN, catalog: { enabled: true } });
  ({ service, billing } = stand);
  await waitFor(async () => (service.loop.current()?.agents.length === 2 ? true : undefined), 'both agents admitted');
  dir = await mkdtemp(join(tmpdir(), 'a2a-cli-'));
  tokenFile = join(dir, 'token');
  await writeFile(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
});

after(async () => {
  await stand?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

test('search prints the ranked agents; --json is the documented object; refusals and an unreachable URL say what to do', async () => {
  const text = await runCli(['search', 'is serial 123 under warranty?', '--url', service.url, '--token-file', tokenFile]);
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout.split('\n')[0]!, /^\s*\d+\s+warranty_agent\s+urn:air:\S+\s+\[/);
  assert.ok(!text.stdout.includes(TOKEN) && !text.stderr.includes(TOKEN), 'the token is never printed');

  const json = await runCli(['search', 'invoice', '--url', service.url, '--json'], { env: { ...process.env, A2A_DISCOVERY_TOKEN: TOKEN } });
  assert.equal(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout) as { query: string; service: string; results: Array<{ score: number | null; name: string; identifier: string; tags: string[]; url: string | null }>; more: boolean };
  assert.equal(report.query, 'invoice');
  assert.equal(report.service, service.url);
  assert.equal(report.results[0]!.name, 'billing_agent');
  assert.deepEqual(Object.keys(report.results[0]!).sort(), ['identifier', 'name', 'score', 'tags', 'url']);
  assert.equal(report.more, false);

  const noToken = await runCli(['search', 'invoice', '--url', service.url], { env: { ...process.env, A2A_DISCOVERY_TOKEN: '' } });
  assert.equal(noToken.code, 1);
  assert.match(noToken.stderr, /answered 401: .*--token-file <file> or A2A_DISCOVERY_TOKEN/);

  // Usage errors: a token file that is not a regular file (read as every secret file is), an event id that is not a number.
  const dirToken = await runCli(['search', 'invoice', '--url', service.url, '--token-file', dir]);
  assert.equal(dirToken.code, 2);
  assert.match(dirToken.stderr, /cannot read --token-file .*: .*(directory|regular)/i);
  const badSince = await runCli(['events', '--url', service.url, '--since', 'abc']);
  assert.equal(badSince.code, 2);
  assert.match(badSince.stderr, /--since.*must be a whole number/);

  const nowhere = await runCli(['search', 'invoice', '--url', 'http://127.0.0.1:9', '--json']);
  assert.equal(nowhere.code, 1);
  assert.match((JSON.parse(nowhere.stdout) as { error: { message: string } }).error.message, /cannot reach http:\/\/127\.0\.0\.1:9\/api\/registry\/search/);
});

/** A loopback TCP proxy to `port` whose connections the test can cut. */
async function proxyTo(port: number): Promise<{ url: string; cut(): void; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

test('events --follow -o jsonl prints each event as it happens, and resumes after a cut connection with nothing twice and nothing missing', async () => {
  const proxy = await proxyTo(Number(new URL(service.url).port));
  const child = spawn(process.execPath, [...CLI, 'events', '--follow', '-o', 'jsonl', '--url', proxy.url, '--token-file', tokenFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const ids = (): number[] => stdout.split('\n').filter((l) => l !== '').map((l) => (JSON.parse(l) as { id: number; seq: number }).id);
  try {
    // A new reader starts at the newest event: a refresh's events reach it live (refreshed until one does).
    const refresh = (): Promise<Response> => fetch(`${service.url}/api/refresh`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    await waitFor(async () => (ids().length > 0 ? true : (await refresh(), undefined)), 'the first events', 30_000, 300).catch((err: Error) => assert.fail(`${err.message}: stderr ${stderr}, stdout ${stdout}`));
    const before = ids().at(-1)!;
    await refresh();
    await waitFor(async () => (ids().at(-1)! > before ? true : undefined), 'a live event after the refresh');

    // Cut every connection, then make events while the reader is away.
    proxy.cut();
    const cutAt = ids().at(-1)!;
    await fetch(`${service.url}/api/refresh`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    (billing as RunningPeer & { card: Record<string, unknown> }).card['name'] = 'Billing Agent v2';
    await fetch(`${service.url}/api/refresh`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    const newest = ((await (await fetch(`${service.url}/api/events`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { events: Array<{ seq: number }> }).events.at(-1)!.seq;
    assert.ok(newest > cutAt, 'events happened while the reader was cut off');
    await waitFor(async () => (ids().at(-1)! >= newest ? true : undefined), 'the reader caught up after reconnecting', 30_000);
    assert.match(stderr, /reconnecting in \d+ ms from event \d+/);

    const seen = ids();
    assert.deepEqual(seen, [...new Set(seen)], 'no event twice');
    const all = ((await (await fetch(`${service.url}/api/events`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { events: Array<{ seq: number }> }).events.map((e) => e.seq);
    assert.deepEqual(seen, all.filter((s) => s >= seen[0]! && s <= newest), 'every event, in order');
    for (const l of stdout.split('\n').filter((x) => x !== '')) assert.equal(typeof (JSON.parse(l) as { type: unknown }).type, 'string', 'one event object per line');
  } finally {
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
    await proxy.close();
  }
  assert.equal(child.exitCode, 0, stderr);
});
