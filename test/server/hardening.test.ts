/**
 * The service attacked the way issue #12 did, on the default configuration (loopback, no token):
 * cross-site requests and DNS rebinding (Host, Origin, content type), oversized bodies, SSE floods
 * and slow readers, slow headers, malformed paths. Every request is raw `node:http` on loopback so
 * the test controls the `Host` and `Origin` headers exactly.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { metric, request } from '../helpers/raw-http.js';

const JSON_TYPE = { 'content-type': 'application/json' };

function service(extra: Partial<ServiceOptions> = {}): Promise<RunningService> {
  return startService({ port: 0, policy: { allow: [] }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }), ...extra });
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}


describe('default configuration (loopback, no token)', () => {
  let s: RunningService;
  before(async () => {
    s = await service({ limits: { maxBodyBytes: 1024, maxStreams: 4, maxStreamsPerClient: 3, streamQueueEvents: 8, maxReplayEvents: 5 } });
  });
  after(() => s.close());

  test('cross-site: text/plain and form posts to state-changing routes are refused (415)', async () => {
    const chat = await request(s.url, 'POST', '/api/chat', { 'content-type': 'text/plain', origin: s.url }, '{"message":"hi"}');
    assert.equal(chat.status, 415);
    const form = await request(s.url, 'POST', '/api/refresh', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1');
    assert.equal(form.status, 415);
    const none = await request(s.url, 'POST', '/api/refresh');
    assert.equal(none.status, 415, 'no content type at all');
    const del = await request(s.url, 'DELETE', '/api/sessions/x', { 'content-type': 'text/plain' });
    assert.equal(del.status, 415);
    assert.equal((await request(s.url, 'POST', '/api/refresh', { 'content-type': 'application/json; charset=utf-8' })).status, 200);
    assert.ok((await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="content_type"')) >= 4);
  });

  test('cross-site: a foreign Origin is refused on every non-GET route (403)', async () => {
    for (const [method, path] of [['POST', '/api/chat'], ['POST', '/api/refresh'], ['POST', '/api/trace'], ['DELETE', '/api/sessions/x'], ['POST', '/api/sessions/x/upgrade']] as const) {
      for (const origin of ['http://evil.example', 'null', `${s.url.replace(/:\d+$/, ':1')}`]) {
        const r = await request(s.url, method, path, { ...JSON_TYPE, origin }, method === 'POST' ? '{"message":"hi"}' : undefined);
        assert.equal(r.status, 403, `${method} ${path} from ${origin}`);
      }
    }
    // The service's own origin is fine.
    assert.equal((await request(s.url, 'POST', '/api/refresh', { ...JSON_TYPE, origin: s.url })).status, 200);
  });

  test('DNS rebinding: a Host the service does not serve is refused on every route (421)', async () => {
    const port = new URL(s.url).port;
    for (const path of ['/api/snapshot', '/healthz', '/metrics', '/', '/api/stream']) {
      const r = await request(s.url, 'GET', path, { host: `attacker.example:${port}` });
      assert.equal(r.status, 421, path);
    }
    assert.equal((await request(s.url, 'POST', '/api/refresh', { ...JSON_TYPE, host: `attacker.example:${port}` })).status, 421);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `LOCALHOST.:${port}`]) {
      assert.equal((await request(s.url, 'GET', '/healthz', { host })).status, 200, host);
    }
    assert.equal((await request(s.url, 'GET', '/healthz', { host: 'bad host' })).status, 400);
    assert.ok((await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="host"')) >= 6);
  });

  test('bodies are capped per route with a 413, declared or streamed', async () => {
    const big = JSON.stringify({ message: 'x'.repeat(5_000) });
    const declared = await request(s.url, 'POST', '/api/chat', JSON_TYPE, big);
    assert.equal(declared.status, 413);
    assert.match(declared.body, /1024 bytes/);
    // Chunked: no content-length; the server stops reading at the cap.
    const chunked = await new Promise<number>((resolve, reject) => {
      const url = new URL(s.url);
      const req = http.request({ host: url.hostname, port: url.port, method: 'POST', path: '/api/chat', headers: JSON_TYPE, agent: false }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => undefined);
      let sent = 0;
      const pump = () => {
        while (sent < 200) {
          sent++;
          if (!req.write('x'.repeat(1024))) return void req.once('drain', pump);
        }
        req.end();
      };
      pump();
      setTimeout(() => reject(new Error('no answer to a streamed oversized body')), 10_000).unref();
    });
    assert.equal(chunked, 413);
    assert.ok((await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="body_bytes"')) >= 2);
  });

  test('a body under the cap that arrives in pieces is read whole (chunked, across several writes)', async () => {
    // The service reads a request body off the Node stream itself (no web Request around it):
    // every piece is counted and joined, so the schema sees the whole object.
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const url = new URL(s.url);
      const req = http.request({ host: url.hostname, port: url.port, method: 'POST', path: '/api/chat', headers: JSON_TYPE, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      const pieces = ['{"mess', 'age": ', '42, "sessionId": "', 's'.repeat(200), '"}'];
      const next = (): void => {
        const piece = pieces.shift();
        if (piece === undefined) return void req.end();
        req.write(piece);
        setTimeout(next, 5);
      };
      next();
    });
    assert.equal(answer.status, 400, answer.body);
    const problem = JSON.parse(answer.body) as { problems?: Array<{ path: string }> };
    assert.deepEqual(problem.problems?.map((p) => p.path), ['message'], answer.body);
  });

  test('malformed paths are 400, and static responses carry nosniff and a Referrer-Policy', async () => {
    for (const path of ['/%', '/%ZZ', '/api/%E0%A4%A']) assert.equal((await request(s.url, 'GET', path)).status, 400, path);
    const page = await request(s.url, 'GET', '/');
    assert.equal(page.status, 200);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
  });

  test('SSE: capped per client and overall (503), /healthz still answers, no listener warning', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    const open: http.ClientRequest[] = [];
    const statuses: number[] = [];
    try {
      // Non-reading clients: connect, get headers, never read the body.
      for (let i = 0; i < 6; i++) {
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
      assert.deepEqual(statuses, [200, 200, 200, 503, 503, 503], 'per-client cap 3');
      assert.equal((await request(s.url, 'GET', '/healthz')).status, 200);
      assert.ok((await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="streams_per_client"')) >= 3);
    } finally {
      for (const r of open) r.destroy();
      process.off('warning', onWarning);
    }
    assert.ok(!warnings.includes('MaxListenersExceededWarning'), warnings.join(','));
  });

  test('SSE: a reader that never reads is dropped once its queue is full', async () => {
    const url = new URL(s.url);
    let closed = false;
    const req = http.request({ host: url.hostname, port: url.port, path: '/api/stream', agent: false });
    await new Promise<void>((resolve, reject) => {
      req.on('response', (res) => {
        res.pause();
        res.socket.on('close', () => (closed = true));
        resolve();
      });
      req.on('error', reject);
      req.end();
    });
    try {
      // Large events fill the socket buffers quickly; the queue behind them then overflows.
      const end = Date.now() + 20_000;
      while (!closed && Date.now() < end) {
        for (let i = 0; i < 50; i++) s.events.emit({ type: 'alert', kind: 'soak', message: 'x'.repeat(16_384) });
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.ok(closed, 'the slow reader was disconnected');
      assert.ok((await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="stream_queue"')) >= 1);
    } finally {
      req.destroy();
    }
  });

  test('SSE: a reader that reads nothing is dropped after streamStallMs even while its queue has room', async () => {
    const stall = await service({ limits: { streamQueueEvents: 1_000_000, streamStallMs: 300 } });
    const url = new URL(stall.url);
    const req = http.request({ host: url.hostname, port: url.port, path: '/api/stream', agent: false });
    try {
      await new Promise<void>((resolve, reject) => {
        req.on('response', (res) => {
          res.pause(); // never reads: a paused client does not even see the server close
          resolve();
        });
        req.on('error', reject);
        req.end();
      });
      assert.equal(await metric(stall.url, 'a2a_discovery_sse_streams', ''), 1);
      // Fill the socket buffers; the queue (a million events) never overflows, the stall bound bites.
      const end = Date.now() + 20_000;
      let dropped = 0;
      while (dropped === 0 && Date.now() < end) {
        for (let i = 0; i < 50; i++) stall.events.emit({ type: 'alert', kind: 'soak', message: 'x'.repeat(16_384) });
        await new Promise((r) => setTimeout(r, 20));
        dropped = await metric(stall.url, 'a2a_discovery_http_refusals_total', 'reason="stream_stall"');
      }
      assert.equal(dropped, 1, 'the stalled reader was dropped');
      assert.equal(await metric(stall.url, 'a2a_discovery_http_refusals_total', 'reason="stream_queue"'), 0);
      await waitUntil(async () => (await metric(stall.url, 'a2a_discovery_sse_streams', '')) === 0, 'the stream to be closed on the server');
    } finally {
      req.destroy();
      await stall.close();
    }
  });

  test('SSE: replay after Last-Event-ID is bounded, with a gap notice', async () => {
    for (let i = 0; i < 20; i++) s.events.emit({ type: 'alert', kind: 'replay', message: `m${i}` });
    const url = new URL(s.url);
    const text = await new Promise<string>((resolve, reject) => {
      const req = http.request({ host: url.hostname, port: url.port, path: '/api/stream', headers: { 'last-event-id': '0' }, agent: false }, (res) => {
        let t = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => {
          t += d;
          if ((t.match(/^id: /gm) ?? []).length >= 5) {
            req.destroy();
            resolve(t);
          }
        });
      });
      req.on('error', reject);
      req.end();
    });
    assert.match(text, /^event: gap$/m);
    assert.ok((await metric(s.url, 'a2a_discovery_http_refusals_total', 'reason="replay_events"')) >= 1);
  });

  test('slow headers: a connection that never finishes its headers is closed', async () => {
    const fast = await service({ limits: { headersTimeoutMs: 500, requestTimeoutMs: 1_000 } });
    try {
      const url = new URL(fast.url);
      const socket = net.connect(Number(url.port), url.hostname);
      let reply = '';
      socket.setEncoding('utf8');
      socket.on('data', (d: string) => (reply += d));
      socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${url.port}\r\nX-Slow: `);
      await new Promise<void>((resolve, reject) => {
        socket.on('close', () => resolve());
        socket.on('error', () => resolve());
        setTimeout(() => reject(new Error('the slow-headers connection stayed open')), 15_000).unref();
      });
      assert.match(reply, /^HTTP\/1\.1 408/);
      assert.ok((await metric(fast.url, 'a2a_discovery_http_refusals_total', 'reason="request_timeout"')) >= 1);
    } finally {
      await fast.close();
    }
  });
});

describe('configured names and token mode', () => {
  test('allowedHosts and allowedOrigins admit a reverse proxy name', async () => {
    const s = await service({ allowedHosts: ['discovery.internal'], allowedOrigins: ['https://discovery.internal'] });
    try {
      assert.equal((await request(s.url, 'GET', '/healthz', { host: 'discovery.internal' })).status, 200);
      assert.equal((await request(s.url, 'GET', '/healthz', { host: 'other.internal' })).status, 421);
      assert.equal((await request(s.url, 'POST', '/api/refresh', { ...JSON_TYPE, host: 'discovery.internal', origin: 'https://discovery.internal' })).status, 200);
    } finally {
      await s.close();
    }
  });

  test('with a bearer token, a state-changing call needs no JSON content type, but the Host and Origin rules still hold', async () => {
    const s = await service({ token: 'tok-123' });
    try {
      const auth = { authorization: 'Bearer tok-123' };
      assert.equal((await request(s.url, 'POST', '/api/refresh', auth)).status, 200);
      assert.equal((await request(s.url, 'POST', '/api/refresh')).status, 401);
      assert.equal((await request(s.url, 'POST', '/api/refresh', { ...auth, origin: 'http://evil.example' })).status, 403);
      assert.equal((await request(s.url, 'GET', '/api/snapshots', { ...auth, host: 'attacker.example' })).status, 421);
    } finally {
      await s.close();
    }
  });
});
