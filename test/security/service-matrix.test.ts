/**
 * The security matrix, inbound half (issue #12; docs/security.md "Security matrix"): one row per
 * attack on the running service's HTTP port and on the CLI's local inputs. Every HTTP request is
 * raw `node:http` on loopback, so each row controls `Host`, `Origin` and framing exactly.
 *
 * Each row states the answer that must come back and checks that nothing ran or was kept: no
 * session pinned, no refresh run, no stream opened, no turn taken on someone else's session,
 * nothing read from /dev/zero, no connection to the probe's trap.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { runCli } from '../helpers/cli.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { metric as sampleOf, request } from '../helpers/raw-http.js';

const JSON_TYPE = { 'content-type': 'application/json' };
const LIMITS = { maxBodyBytes: 1024, maxStreams: 4, maxStreamsPerClient: 3 };
const MAX_SESSIONS = 3;

let s: RunningService;
let port: string;
/** Calls of the loop's refreshNow made through the API (the route's only effect). */
let refreshes = 0;
/** Session ids pinned over the whole run, from the event stream. */
const pinned: string[] = [];

before(async () => {
  s = await startService({
    port: 0,
    policy: { allow: [] },
    vocabulary: [],
    needs: [],
    logger: createLogger({ level: 'silent' }),
    limits: LIMITS,
    sessions: { maxSessions: MAX_SESSIONS },
  });
  port = new URL(s.url).port;
  const original = s.loop.refreshNow.bind(s.loop);
  s.loop.refreshNow = () => {
    refreshes++;
    return original();
  };
  s.events.subscribe((e) => {
    if (e.type === 'session.pinned') pinned.push((e as { sessionId: string }).sessionId);
  });
});
after(() => s.close());

/** The state every "nothing happened" check compares. */
function state(): { sessions: number; refreshes: number; pinned: number } {
  return { sessions: s.trees.sessions().length, refreshes, pinned: pinned.length };
}

/** A sample of the service's `/metrics`. */
function metric(name: string, labels = ''): Promise<number> {
  return sampleOf(s.url, name, labels);
}

interface HttpRow {
  attack: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  status: number;
}

/** Cross-site requests and DNS rebinding: refused by the request guard before any route runs. */
const GUARD_ROWS: HttpRow[] = [
  { attack: 'cross-site POST /api/chat as text/plain', method: 'POST', path: '/api/chat', headers: { 'content-type': 'text/plain' }, body: '{"message":"hi","sessionId":"xs-1"}', status: 415 },
  { attack: 'cross-site form POST /api/chat', method: 'POST', path: '/api/chat', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'message=hi&sessionId=xs-2', status: 415 },
  { attack: 'cross-site multipart POST /api/chat', method: 'POST', path: '/api/chat', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x\r\nContent-Disposition: form-data; name="message"\r\n\r\nhi\r\n--x--', status: 415 },
  { attack: 'cross-site form POST /api/refresh', method: 'POST', path: '/api/refresh', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1', status: 415 },
  { attack: 'cross-site POST /api/refresh without a content type', method: 'POST', path: '/api/refresh', status: 415 },
  { attack: 'cross-site POST /api/trace as text/plain', method: 'POST', path: '/api/trace', headers: { 'content-type': 'text/plain' }, body: '{}', status: 415 },
  { attack: 'cross-site JSON POST /api/chat from a foreign Origin', method: 'POST', path: '/api/chat', headers: { ...JSON_TYPE, origin: 'http://evil.example' }, body: '{"message":"hi","sessionId":"xs-3"}', status: 403 },
  { attack: 'cross-site JSON POST /api/chat from Origin: null', method: 'POST', path: '/api/chat', headers: { ...JSON_TYPE, origin: 'null' }, body: '{"message":"hi","sessionId":"xs-4"}', status: 403 },
  { attack: 'cross-site JSON POST /api/refresh from another local port', method: 'POST', path: '/api/refresh', headers: { ...JSON_TYPE, origin: 'http://127.0.0.1:1' }, body: '{}', status: 403 },
  { attack: 'cross-site DELETE /api/sessions/:id from a foreign Origin', method: 'DELETE', path: '/api/sessions/xs-5', headers: { ...JSON_TYPE, origin: 'http://evil.example' }, status: 403 },
  { attack: 'rebinding Host: GET /api/snapshot', method: 'GET', path: '/api/snapshot', headers: { host: 'attacker.example:PORT' }, status: 421 },
  { attack: 'rebinding Host: GET /api/sessions', method: 'GET', path: '/api/sessions', headers: { host: 'attacker.example:PORT' }, status: 421 },
  { attack: 'rebinding Host: GET /metrics', method: 'GET', path: '/metrics', headers: { host: 'attacker.example:PORT' }, status: 421 },
  { attack: 'rebinding Host: GET /api/stream', method: 'GET', path: '/api/stream', headers: { host: 'attacker.example:PORT' }, status: 421 },
  { attack: 'rebinding Host: POST /api/chat with JSON', method: 'POST', path: '/api/chat', headers: { ...JSON_TYPE, host: 'attacker.example:PORT' }, body: '{"message":"hi","sessionId":"xs-6"}', status: 421 },
  { attack: 'rebinding Host: POST /api/refresh with JSON and a matching Origin', method: 'POST', path: '/api/refresh', headers: { ...JSON_TYPE, host: 'attacker.example:PORT', origin: 'http://attacker.example:PORT' }, body: '{}', status: 421 },
  { attack: 'rebinding Host: a name ending in a loopback name', method: 'GET', path: '/api/snapshot', headers: { host: '127.0.0.1.nip.io:PORT' }, status: 421 },
  { attack: 'rebinding Host: localhost as a subdomain', method: 'GET', path: '/api/snapshot', headers: { host: 'localhost.attacker.example:PORT' }, status: 421 },
  { attack: 'rebinding Host: userinfo in Host', method: 'GET', path: '/api/snapshot', headers: { host: 'localhost@attacker.example' }, status: 400 },
  { attack: 'malformed path GET /%', method: 'GET', path: '/%', status: 400 },
  { attack: 'cross-site POST /api/registry/search as text/plain', method: 'POST', path: '/api/registry/search', headers: { 'content-type': 'text/plain' }, body: '{"query":{"text":"x"}}', status: 415 },
  { attack: 'cross-site JSON POST /api/registry/explore from a foreign Origin', method: 'POST', path: '/api/registry/explore', headers: { ...JSON_TYPE, origin: 'http://evil.example' }, body: '{"resultType":{"facets":[{"field":"type"}]}}', status: 403 },
  { attack: 'rebinding Host: GET /api/registry/agents', method: 'GET', path: '/api/registry/agents', headers: { host: 'attacker.example:PORT' }, status: 421 },
  { attack: 'registry: a query text past server.registry.maxTextLength', method: 'POST', path: '/api/registry/search', headers: JSON_TYPE, body: JSON.stringify({ query: { text: 'x'.repeat(10_000) } }), status: 400 },
  { attack: 'registry: a body past server.registry.maxBodyBytes', method: 'POST', path: '/api/registry/search', headers: JSON_TYPE, body: JSON.stringify({ query: { text: 'x', pad: 'x'.repeat(20_000) } }), status: 413 },
  { attack: 'registry: pageSize past server.registry.maxPageSize', method: 'GET', path: '/api/registry/agents?pageSize=100000', status: 400 },
  { attack: 'registry: a forged page token', method: 'POST', path: '/api/registry/search', headers: JSON_TYPE, body: JSON.stringify({ query: { text: 'x' }, pageToken: 'eyJrIjoicyJ9.AAAAAAAAAAAAAAAAAAAAAA' }), status: 400 },
  { attack: 'registry: a filter on a field it does not know', method: 'POST', path: '/api/registry/search', headers: JSON_TYPE, body: JSON.stringify({ query: { text: 'x', filter: { '__proto__.polluted': ['1'] } } }), status: 400 },
];

describe('security matrix: the service (request guard)', () => {
  for (const row of GUARD_ROWS) {
    test(`${row.attack} → ${row.status}, nothing runs`, async () => {
      const before = state();
      const streamsBefore = await metric('a2a_discovery_sse_streams');
      const headers = Object.fromEntries(Object.entries(row.headers ?? {}).map(([k, v]) => [k, v.replaceAll('PORT', port)]));
      const r = await request(s.url, row.method, row.path, headers, row.body);
      assert.equal(r.status, row.status, r.body);
      assert.deepEqual(state(), before, 'no session pinned, no refresh run');
      assert.equal(await metric('a2a_discovery_sse_streams'), streamsBefore, 'no stream opened');
    });
  }

  test('control: the same calls from the service\'s own page succeed (the guard refuses only the attacks)', async () => {
    const before = state();
    assert.equal((await request(s.url, 'POST', '/api/refresh', { ...JSON_TYPE, origin: s.url }, '{}')).status, 200);
    const chat = await request(s.url, 'POST', '/api/chat', { ...JSON_TYPE, origin: s.url }, '{"message":"hi","sessionId":"control-1"}');
    assert.equal(chat.status, 200, chat.body);
    assert.equal(state().refreshes, before.refreshes + 1);
    assert.equal(state().sessions, before.sessions + 1);
    assert.equal(state().pinned, before.pinned + 1, 'the pin counter sees pins (so "no pin" checks are not vacuous)');
    assert.equal((await request(s.url, 'DELETE', '/api/sessions/control-1', { ...JSON_TYPE, 'x-session-secret': JSON.parse(chat.body).sessionSecret })).status, 200);
  });
});

describe('security matrix: the service (floods)', () => {
  test('body flood: 50 MB declared in Content-Length → 413 before the body is read, nothing runs', async () => {
    const before = state();
    const reply = await new Promise<string>((resolve, reject) => {
      const url = new URL(s.url);
      const socket = net.connect(Number(url.port), url.hostname);
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (text += d));
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
      // Headers only, then a little of the body: the answer must not wait for 50 MB.
      socket.write(`POST /api/chat HTTP/1.1\r\nHost: 127.0.0.1:${url.port}\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\n\r\n{"message":"`);
      setTimeout(() => reject(new Error('no answer to a declared 50 MB body')), 10_000).unref();
    });
    assert.match(reply, /^HTTP\/1\.1 413/);
    assert.deepEqual(state(), before);
  });

  test('body flood: a chunked body past the cap → 413, the connection is closed, nothing runs', async () => {
    const before = state();
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(s.url);
      const req = http.request({ host: url.hostname, port: url.port, method: 'POST', path: '/api/chat', headers: JSON_TYPE, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => undefined);
      let sent = 0;
      const pump = (): void => {
        while (sent < 200) {
          sent++;
          if (!req.write(sent === 1 ? '{"message":"' : 'x'.repeat(1024))) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
      setTimeout(() => reject(new Error('no answer to a streamed oversized body')), 10_000).unref();
    });
    assert.equal(status, 413);
    assert.deepEqual(state(), before);
  });

  test('SSE flood: 10 readers that never read → 3 accepted (per client), the rest 503, /healthz still answers', async () => {
    const open: http.ClientRequest[] = [];
    const statuses: number[] = [];
    try {
      for (let i = 0; i < 10; i++) {
        statuses.push(
          await new Promise<number>((resolve, reject) => {
            const url = new URL(s.url);
            const req = http.request({ host: url.hostname, port: url.port, path: '/api/stream', agent: false }, (res) => {
              res.pause();
              resolve(res.statusCode ?? 0);
            });
            req.on('error', reject);
            req.end();
            open.push(req);
          }),
        );
      }
      assert.deepEqual(statuses, [200, 200, 200, 503, 503, 503, 503, 503, 503, 503]);
      assert.equal(await metric('a2a_discovery_sse_streams'), LIMITS.maxStreamsPerClient, 'only the accepted streams are open');
      assert.equal((await request(s.url, 'GET', '/healthz')).status, 200);
    } finally {
      for (const r of open) r.destroy();
    }
  });

  // One client holds at most half of sessions.maxSessions (rounded up): it can never take every session.
  const SHARE = Math.ceil(MAX_SESSIONS / 2);
  test(`pin flood: /api/chat with 20 new session ids from one client → ${SHARE} pinned (its share of ${MAX_SESSIONS}), the rest 429, nothing kept for them`, async () => {
    // Start from no pins.
    for (const x of s.trees.sessions()) await s.sessions.end(x.sessionId);
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await request(s.url, 'POST', '/api/chat', JSON_TYPE, JSON.stringify({ message: 'hi', sessionId: `flood-${i}` }));
      statuses.push(r.status);
    }
    assert.deepEqual(statuses, [...new Array(SHARE).fill(200), ...new Array(20 - SHARE).fill(429)]);
    assert.equal(s.trees.sessions().length, SHARE);
    assert.ok(s.trees.sessions().every((x) => Number(x.sessionId.slice(6)) < SHARE), 'only the first ids are pinned');
    // A refused id was not kept as claimed: after one pin is released it can start afresh, for anyone.
    assert.equal((await request(s.url, 'POST', `/api/sessions/flood-${SHARE}/upgrade`, JSON_TYPE, '{}')).status, 404, 'a refused session id holds no pin and no claim');
    // Refused for the client's share, before the global cap is reached.
    assert.ok((await metric('a2a_discovery_http_refusals_total', 'reason="sessions_per_client"')) >= 20 - SHARE);
    for (const x of s.trees.sessions()) await s.sessions.end(x.sessionId);
  });

  test('pin flood: upgrading and ending 100 unknown ids (200 calls) → 404 each, no pin created', async () => {
    const before = state();
    for (let i = 0; i < 100; i++) {
      assert.equal((await request(s.url, 'POST', `/api/sessions/ghost-${i}/upgrade`, JSON_TYPE, '{}')).status, 404);
      assert.equal((await request(s.url, 'DELETE', `/api/sessions/ghost-${i}`, JSON_TYPE)).status, 404);
    }
    assert.deepEqual(state(), before);
  });

  test('pin flood: malformed session ids (markup, 8 KB, empty after decoding) → 400, no pin', async () => {
    const before = state();
    for (const id of ['x%20%3Cscript%3E', 'a'.repeat(8 * 1024), '..%2F..', 'x%00y']) {
      assert.equal((await request(s.url, 'POST', `/api/sessions/${id}/upgrade`, JSON_TYPE, '{}')).status, 400, id.slice(0, 20));
    }
    assert.equal((await request(s.url, 'POST', '/api/chat', JSON_TYPE, JSON.stringify({ message: 'hi', sessionId: 'x <script>' }))).status, 400);
    assert.equal((await request(s.url, 'POST', '/api/chat', JSON_TYPE, JSON.stringify({ message: 'hi', sessionId: 'a'.repeat(129) }))).status, 400);
    assert.deepEqual(state(), before);
  });

  test('typed query parameters: a string where a number belongs → 400 naming the parameter, not a silent default', async () => {
    for (const [path, name] of [
      ['/api/events?since=abc', 'since'],
      ['/api/events?since=-1', 'since'],
      ['/api/events?since=1e3', 'since'],
      ['/api/journal?limit=ten', 'limit'],
      ['/api/activity?bucketMs=soon', 'bucketMs'],
    ] as const) {
      const r = await request(s.url, 'GET', path);
      assert.equal(r.status, 400, `${path}: ${r.body}`);
      assert.match(r.body, new RegExp(name), path);
    }
    assert.equal((await request(s.url, 'GET', '/api/events?since=0')).status, 200);
  });

  test('a stranger drives someone else\'s session (continue → 403; upgrade, end → 404 as for an unknown id); the session is untouched and unlisted', async () => {
    const started = await request(s.url, 'POST', '/api/chat', JSON_TYPE, JSON.stringify({ message: 'hi', sessionId: 'victim-1' }));
    assert.equal(started.status, 200, started.body);
    const secret = JSON.parse(started.body).sessionSecret as string;
    const pinsBefore = pinned.length;
    const sessionsBefore = s.trees.sessions().map((x) => x.sessionId);
    for (const [method, path, body, extra, status] of [
      ['POST', '/api/chat', JSON.stringify({ message: 'take over', sessionId: 'victim-1' }), {}, 403],
      ['POST', '/api/sessions/victim-1/upgrade', '{"force":true}', {}, 404],
      ['DELETE', '/api/sessions/victim-1', undefined, {}, 404],
      ['POST', '/api/chat', JSON.stringify({ message: 'take over', sessionId: 'victim-1' }), { 'x-session-secret': 'A'.repeat(43) }, 403],
      ['DELETE', '/api/sessions/victim-1', undefined, { cookie: `a2ad_client=${'B'.repeat(43)}` }, 404],
    ] as const) {
      const r = await request(s.url, method, path, { ...JSON_TYPE, ...extra }, body);
      assert.equal(r.status, status, `${method} ${path}: ${r.body}`);
    }
    // Upgrading someone else's session reads exactly as upgrading an id nobody holds.
    const foreign = await request(s.url, 'POST', '/api/sessions/victim-1/upgrade', JSON_TYPE, '{}');
    const unknown = await request(s.url, 'POST', '/api/sessions/victim-0/upgrade', JSON_TYPE, '{}');
    assert.deepEqual([foreign.status, foreign.body.replaceAll('victim-1', 'ID')], [unknown.status, unknown.body.replaceAll('victim-0', 'ID')]);
    assert.deepEqual(s.trees.sessions().map((x) => x.sessionId), sessionsBefore, 'the victim is still pinned, nothing else is');
    assert.equal(pinned.length, pinsBefore);
    const listed = JSON.parse((await request(s.url, 'GET', '/api/sessions')).body) as { sessions: unknown[]; others: number };
    assert.deepEqual([listed.sessions, listed.others >= 1], [[], true], 'a stranger sees a count, not the id');
    assert.equal((await request(s.url, 'DELETE', '/api/sessions/victim-1', { ...JSON_TYPE, 'x-session-secret': secret })).status, 200, 'the owner can end it');
  });
});

describe('security matrix: local inputs and the probe CLI', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'security-matrix-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const TOKEN_CONFIG = (field: string): string =>
    `server:\n  ${field}\nallowLoopback: true\nallow: [http://127.0.0.1:9]\nvocabulary:\n  - tag: billing\n    description: Billing.\nneeds:\n  - tag: billing\nstatic:\n  - name: billing_agent\n    url: http://127.0.0.1:9/\n    description: Billing.\n    tags: [billing]\n`;

  const CLI_ROWS: Array<{ attack: string; args: (dir: string) => Promise<string[]>; code: number; output: RegExp }> = [
    { attack: '/dev/zero as the configuration (validate)', args: async () => ['validate', '--config', '/dev/zero'], code: 2, output: /\/dev\/zero: it is not a regular file/ },
    { attack: '/dev/zero as the configuration (serve)', args: async () => ['serve', '--config', '/dev/zero', '--port', '0'], code: 2, output: /not a regular file/ },
    { attack: '/dev/zero as a card (probe)', args: async () => ['probe', '/dev/zero'], code: 2, output: /not a regular file/ },
    { attack: '/dev/zero as a trust key (probe --trust-key)', args: async () => ['probe', 'examples/cards/billing-agent.json', '--trust-key', '/dev/zero'], code: 2, output: /not a regular file/ },
    {
      attack: '/dev/zero as the token file (server.tokenFile)',
      args: async (d) => {
        const file = join(d, 'token.yaml');
        await writeFile(file, TOKEN_CONFIG('tokenFile: /dev/zero'));
        return ['validate', '--config', file];
      },
      code: 1,
      output: /tokenFile: cannot read token file \/dev\/zero: it is not a regular file/,
    },
  ];

  for (const row of CLI_ROWS) {
    test(`${row.attack} → exit ${row.code} at once, nothing read`, async () => {
      const run = await runCli(await row.args(dir));
      assert.equal(run.code, row.code, `${run.stdout}\n${run.stderr}`);
      assert.match(`${run.stdout}\n${run.stderr}`, row.output);
    });
  }

  test('probe CLI: SSRF spellings of a loopback trap are refused at the address stage, the trap sees no connection', async () => {
    const trap = await startFaultServer();
    try {
      trap.endpoint('p');
      for (const host of ['2130706433', '0x7f000001', '127.1', '[::ffff:127.0.0.1]']) {
        const run = await runCli(['probe', `https://${host}:${trap.port}/p/`, '--json']);
        assert.equal(run.code, 1, `${host}: ${run.stdout} ${run.stderr}`);
        const report = JSON.parse(run.stdout) as { accepted: boolean; stage: string };
        assert.deepEqual([report.accepted, report.stage], [false, 'address'], host);
      }
      for (const host of ['2130706433', '0177.0.0.1', '169.254.169.254', '10.0.0.1', '0.0.0.0']) {
        const run = await runCli(['probe', `http://${host}/p/`, '--json']);
        assert.equal(run.code, 1, `${host}: ${run.stdout} ${run.stderr}`);
        assert.equal((JSON.parse(run.stdout) as { stage: string }).stage, 'source', host);
      }
      assert.equal(trap.connections, 0);
      assert.equal(trap.hits, 0);
    } finally {
      await trap.close();
    }
  });
});
