/**
 * `POST /api/inspect` against real loopback peers: the service's allowlist decides what is
 * fetched (a refused host never sees a request, a redirect off the allowlist is not followed, no
 * credential is sent), pasted cards and catalogs get the same stages, and the route is guarded
 * and bounded like the other POST routes (body cap, Origin, content type, Host, token, the
 * concurrency cap and the deadline, each counted in the refusals metric).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import type { InspectResult } from '../../packages/service/src/http/inspector.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { Answer } from '../cache/scripted-server.js';
import { startScriptedServer } from '../cache/scripted-server.js';
import { cardFor } from '../helpers/cards.js';
import { metric, request } from '../helpers/raw-http.js';

const JSON_TYPE = { 'content-type': 'application/json' };
type Scripted = Awaited<ReturnType<typeof startScriptedServer>>;

function service(policy: ServiceOptions['policy'], extra: Partial<ServiceOptions> = {}): Promise<RunningService> {
  return startService({ port: 0, policy, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }), ...extra });
}

async function inspect(s: RunningService, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: InspectResult & { error?: string; message?: string } }> {
  const r = await request(s.url, 'POST', '/api/inspect', { ...JSON_TYPE, origin: s.url, ...headers }, JSON.stringify(body));
  return { status: r.status, json: JSON.parse(r.body) as InspectResult & { error?: string; message?: string } };
}

/** A loopback server that accepts connections and never answers (counts its requests). */
async function startSilentServer(): Promise<{ origin: string; requests: number; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { requests: 0 };
  const server = http.createServer(() => void state.requests++);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return state.requests;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('POST /api/inspect under the service allowlist', () => {
  let allowed: Scripted;
  let outside: Scripted;
  let silent: Awaited<ReturnType<typeof startSilentServer>>;
  let s: RunningService;
  const credentialAsks: string[] = [];

  before(async () => {
    allowed = await startScriptedServer();
    outside = await startScriptedServer();
    silent = await startSilentServer();
    s = await service(
      { allow: [allowed.origin, silent.origin], allowLoopback: true },
      {
        // Discovery's fetcher sends this to the allowed origin; the inspector must not.
        credentials: (origin) => {
          credentialAsks.push(origin);
          return { authorization: 'Bearer peer-secret' };
        },
        limits: { maxInspectBodyBytes: 8 * 1024, maxInspections: 1, inspectTimeoutMs: 1_500 },
      },
    );
  });
  after(async () => {
    await s?.close();
    await Promise.all([allowed?.close(), outside?.close(), silent?.close()]);
  });

  test('an allowlisted endpoint with a valid card passes every stage; caching is described; no credential is sent', async () => {
    allowed.script((req, path): Answer => {
      if (path !== '/good/.well-known/agent-card.json') return { status: 404 };
      if (req.headers['if-none-match'] === '"v1"') return { status: 304, headers: { etag: '"v1"' } };
      return { status: 200, headers: { etag: '"v1"', 'cache-control': 'max-age=300' }, body: cardFor(allowed, 'good') };
    });
    allowed.requests.length = 0;
    const { status, json } = await inspect(s, { url: `${allowed.origin}/good/` });
    assert.equal(status, 200, JSON.stringify(json));
    assert.equal(json.kind, 'url');
    const r = json.report!;
    assert.equal(r.accepted, true, JSON.stringify(r.problems));
    assert.equal(r.stage, 'selected');
    assert.equal(r.source, `${allowed.origin}/good/.well-known/agent-card.json`);
    assert.equal(r.http?.status, 200);
    assert.equal(r.http?.maxAgeSeconds, 300);
    assert.equal(r.http?.etag, '"v1"');
    assert.equal(r.http?.notModifiedSupported, true);
    assert.equal(r.http?.etagStable, true);
    assert.equal(r.http?.remoteAddress, '127.0.0.1');
    assert.deepEqual(r.skills.map((k) => k.id), ['good']);
    assert.equal(r.hostsJudged, true, 'the card interfaces are judged by the service allowlist');
    assert.ok(json.allowlist.some((l) => l.includes(allowed.origin.replace('http://', ''))), json.allowlist.join('\n'));
    assert.equal(json.timedOut, false);
    assert.equal(allowed.requests.length, 3, 'the card, the same again, a conditional request');
    assert.ok(allowed.requests.every((q) => q.headers.authorization === undefined), 'no credential on any inspector request');
  });

  test('a host outside the allowlist is refused at the source stage and never contacted', async () => {
    outside.script(() => ({ status: 200, body: cardFor(outside, 'x') }));
    outside.requests.length = 0;
    for (const url of [`${outside.origin}/`, `${outside.origin}/x/.well-known/agent-card.json`, 'https://example.com/', `http://user@${allowed.origin.slice(7)}/`]) {
      const { status, json } = await inspect(s, { url });
      assert.equal(status, 200);
      assert.equal(json.report?.accepted, false, url);
      assert.equal(json.report?.stage, 'source', url);
      assert.match(json.report!.problems[0]!.message, /allowlist|not allowed|username or password/, url);
      assert.equal(json.report?.http, undefined, 'no HTTP exchange happened');
    }
    assert.equal(outside.requests.length, 0, 'the peer outside the allowlist received no request');
  });

  test('a redirect off the allowlist is not followed: refused at the fetch stage with its Location', async () => {
    allowed.script(() => ({ status: 302, headers: { location: `${outside.origin}/.well-known/agent-card.json` } }));
    outside.requests.length = 0;
    const { json } = await inspect(s, { url: `${allowed.origin}/moved/` });
    assert.equal(json.report?.stage, 'fetch');
    assert.match(json.report!.problems[0]!.message, /refused redirect 302 .*redirects are never followed/);
    assert.ok(json.report!.problems[0]!.message.includes(outside.origin));
    assert.equal(outside.requests.length, 0, 'the redirect target received no request');
  });

  test('a malformed card, pasted or fetched, fails at its stage with the JSON path of each problem', async () => {
    const broken = { ...cardFor(allowed, 'b'), capabilities: undefined, skills: [{ id: 'b', name: 'b', description: 'B.' }] };
    const pasted = await inspect(s, { card: JSON.stringify(broken, null, 2) });
    assert.equal(pasted.json.kind, 'card');
    assert.equal(pasted.json.report?.stage, 'schema');
    const paths = pasted.json.report!.problems.map((p) => p.path);
    assert.ok(paths.includes('skills[0].tags'), paths.join(', '));
    assert.ok(paths.includes('capabilities'), paths.join(', '));
    // The object itself works too.
    assert.equal((await inspect(s, { card: broken })).json.report?.stage, 'schema');
    // Not JSON at all: the parse stage.
    const text = await inspect(s, { card: '{"name": "half' });
    assert.equal(text.json.report?.stage, 'parse');
    // Served by an allowlisted peer: the same verdict, after a fetch.
    allowed.script(() => ({ status: 200, headers: { 'cache-control': 'max-age=60' }, body: broken }));
    const fetched = await inspect(s, { url: `${allowed.origin}/bad/` });
    assert.equal(fetched.json.report?.stage, 'schema');
    assert.equal(fetched.json.report?.http?.status, 200);
    assert.ok(fetched.json.report!.problems.some((p) => p.path === 'skills[0].tags'));
    // A pasted card whose interface is outside the allowlist fails at the policy stage.
    const elsewhere = await inspect(s, { card: cardFor(outside, 'e') });
    assert.equal(elsewhere.json.report?.stage, 'policy');
    assert.ok(elsewhere.json.report!.urls.some((u) => u.allowed === false));
  });

  test('a catalog: each entry gets its own decision (admitted and accepted, refused, invalid, duplicate, dropped)', async () => {
    allowed.script((_req, path) => {
      if (path === '/good/.well-known/agent-card.json') return { status: 200, headers: { etag: '"g"', 'cache-control': 'max-age=60' }, body: cardFor(allowed, 'good') };
      if (path === '/bad/.well-known/agent-card.json') return { status: 200, body: '{ not json' };
      return { status: 404 };
    });
    outside.requests.length = 0;
    const catalog = {
      agents: [
        { name: 'good', url: `${allowed.origin}/good/`, tags: ['good'] },
        { name: 'elsewhere', url: `${outside.origin}/` },
        { name: 'bad', url: `${allowed.origin}/bad/` },
        { name: 'good again', url: `${allowed.origin}/good` },
        { name: 'ftp', url: 'ftp://files.example.com/' },
        { name: 'missing', cardUrl: `${allowed.origin}/none/card.json` },
      ],
      next: '/page/2',
    };
    const { status, json } = await inspect(s, { catalog: JSON.stringify(catalog) });
    assert.equal(status, 200, JSON.stringify(json));
    assert.equal(json.kind, 'catalog');
    const c = json.catalog!;
    assert.deepEqual(c.problems, []);
    assert.ok(c.notes.some((n) => /next page/.test(n)));
    const stages = c.entries.map((e) => [e.name, e.report?.stage]);
    assert.deepEqual(stages, [
      ['good', 'selected'],
      ['elsewhere', 'source'],
      ['bad', 'parse'],
      ['good again', 'selected'],
      ['ftp', 'source'],
      ['missing', 'fetch'],
    ]);
    assert.equal(c.entries[3]!.duplicateOf, 0, 'the same endpoint as the first entry: merged, one probe');
    assert.equal(c.entries[4]!.report!.problems[0]!.path, 'agents[4].url');
    assert.match(c.entries[5]!.report!.problems[0]!.message, /HTTP 404/);
    assert.equal(c.accepted, 2);
    assert.equal(c.refused, 4);
    assert.equal(outside.requests.length, 0, 'the entry outside the allowlist was never contacted');
    // A catalog that is not one: every problem by path, nothing probed.
    const wrong = await inspect(s, { catalog: { agents: [{ url: 'https://a.example.com/' }, 'x'] } });
    assert.deepEqual(
      wrong.json.catalog!.problems.map((p) => p.path),
      ['agents[0].name', 'agents[1]'],
    );
    assert.deepEqual(wrong.json.catalog!.entries, []);
  });

  test('bad requests are 400: nothing to inspect, two things at once, a URL that is not one', async () => {
    for (const body of [{}, { url: 'https://a.example.com/', card: '{}' }, { url: 42 }, { url: 'not a url' }]) {
      const { status, json } = await inspect(s, body);
      assert.equal(status, 400, `${JSON.stringify(body)} → ${JSON.stringify(json)}`);
    }
  });

  test('a body over server.limits.maxInspectBodyBytes is 413 and counted', async () => {
    const before = await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="body_bytes"');
    const r = await request(s.url, 'POST', '/api/inspect', { ...JSON_TYPE, origin: s.url }, JSON.stringify({ card: 'x'.repeat(9 * 1024) }));
    assert.equal(r.status, 413);
    assert.match(r.body, /8192 bytes/);
    assert.equal(await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="body_bytes"'), before + 1);
  });

  test('cross-site and misdirected requests are refused like every POST route (415, 403, 421)', async () => {
    outside.requests.length = 0;
    const body = JSON.stringify({ url: `${outside.origin}/` });
    assert.equal((await request(s.url, 'POST', '/api/inspect', { 'content-type': 'text/plain', origin: s.url }, body)).status, 415);
    assert.equal((await request(s.url, 'POST', '/api/inspect', { 'content-type': 'application/x-www-form-urlencoded' }, 'url=x')).status, 415);
    for (const origin of ['http://evil.example', 'null']) {
      assert.equal((await request(s.url, 'POST', '/api/inspect', { ...JSON_TYPE, origin }, body)).status, 403, origin);
    }
    const port = new URL(s.url).port;
    assert.equal((await request(s.url, 'POST', '/api/inspect', { ...JSON_TYPE, host: `attacker.example:${port}` }, body)).status, 421);
    assert.equal((await request(s.url, 'GET', '/api/inspect')).status, 404, 'GET inspects nothing');
  });

  test('one inspection at a time (server.limits.maxInspections, one per client): the next is 429 and counted; the deadline aborts a slow peer and is counted', async () => {
    const busyBefore = await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="inspections_per_client"');
    const timeoutBefore = await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="inspect_timeout"');
    const started = Date.now();
    const slow = inspect(s, { url: `${silent.origin}/` });
    // Wait until the silent peer holds the first inspection's request.
    while (silent.requests === 0) await new Promise((r) => setTimeout(r, 20));
    const second = await request(s.url, 'POST', '/api/inspect', { ...JSON_TYPE, origin: s.url }, JSON.stringify({ card: '{}' }));
    assert.equal(second.status, 429);
    assert.equal(second.headers['retry-after'], '5');
    // The same client: its own share (one) is what it is refused by; others would wait their turn (fair-pool.test.ts).
    assert.match(second.body, /server\.limits\.maxInspectionsPerClient/);
    const { status, json } = await slow;
    const elapsed = Date.now() - started;
    assert.equal(status, 200);
    assert.equal(json.timedOut, true);
    assert.equal(json.report?.stage, 'fetch');
    assert.ok(elapsed < 4_000, `the 1.5 s deadline bound the inspection (${elapsed} ms), not the 5 s fetch deadline`);
    assert.equal(await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="inspections_per_client"'), busyBefore + 1);
    assert.equal(await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="inspect_timeout"'), timeoutBefore + 1);
    // Free again.
    assert.equal((await inspect(s, { card: '{}' })).status, 200);
  });
});

describe('POST /api/inspect in token mode', () => {
  let s: RunningService;
  before(async () => {
    s = await service({ allow: [], allowLoopback: true }, { token: 'tok-inspect' });
  });
  after(() => s?.close());

  test('needs the bearer token (401 without it, or with a wrong one); with it, it answers', async () => {
    const body = JSON.stringify({ card: '{}' });
    const none = await request(s.url, 'POST', '/api/inspect', JSON_TYPE, body);
    assert.equal(none.status, 401);
    assert.equal(none.headers['www-authenticate'], 'Bearer realm="a2a-discovery"');
    assert.equal((await request(s.url, 'POST', '/api/inspect', { ...JSON_TYPE, authorization: 'Bearer nope' }, body)).status, 401);
    const ok = await request(s.url, 'POST', '/api/inspect', { ...JSON_TYPE, authorization: 'Bearer tok-inspect' }, body);
    assert.equal(ok.status, 200);
    assert.equal((JSON.parse(ok.body) as InspectResult).report?.stage, 'schema');
    // The token does not lift the Origin rule.
    assert.equal((await request(s.url, 'POST', '/api/inspect', { ...JSON_TYPE, authorization: 'Bearer tok-inspect', origin: 'http://evil.example' }, body)).status, 403);
  });
});
