/**
 * The policy fetch every remote-agent request goes through, against real loopback servers: what
 * it refuses (before any I/O), redirects, credentials per origin, streaming bodies, bounds; and a
 * card that points at a host the policy refuses can never be used to reach it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import express from 'express';
import { InMemoryRunner, LlmAgent, RemoteA2AAgent, toA2a } from '@google/adk';
import type { Event } from '@google/adk';
import { isDiscoveryError } from '../../../packages/core/src/errors.js';
import { parseAgentCard, toAdkCard } from '../../../packages/core/src/card/index.js';
import type { AgentCardModel } from '../../../packages/core/src/card/index.js';
import { HostPolicy } from '../../../packages/core/src/fetch/index.js';
import { V1RemoteAgent, createAdkClientFactory, createPolicyFetch, remoteAgentFor } from '../../../packages/core/src/adk/remote/index.js';
import { ScriptedLlm } from '../../helpers/a2a-peers.js';
import { startV1Server } from '../../helpers/a2a-v1-server.js';

interface Counting {
  url: string;
  origin: string;
  port: number;
  /** Requests received, with method, path and selected headers. */
  seen: { method: string; path: string; authorization?: string; userAgent?: string }[];
  close(): Promise<void>;
}

/** A plain loopback server that records every request and answers with `handler`. */
async function startCounting(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Counting> {
  const seen: Counting['seen'] = [];
  const server = http.createServer((req, res) => {
    seen.push({
      method: req.method ?? '',
      path: req.url ?? '',
      ...(req.headers.authorization !== undefined && { authorization: req.headers.authorization }),
      ...(req.headers['user-agent'] !== undefined && { userAgent: req.headers['user-agent'] }),
    });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    origin: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function rejectsWith(promise: Promise<unknown>, code: string): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    assert.ok(isDiscoveryError(err), `expected a DiscoveryError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}, but it resolved`);
}

function ok(text = 'ok'): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(text);
  };
}

describe('createPolicyFetch', () => {
  let allowed: Counting;
  let outside: Counting;
  let policy: HostPolicy;
  before(async () => {
    allowed = await startCounting(ok('allowed'));
    outside = await startCounting(ok('outside'));
    policy = HostPolicy.from({ allow: [allowed.origin], allowLoopback: true });
  });
  after(async () => {
    await allowed.close();
    await outside.close();
  });

  test('fetches an allowlisted URL with our user agent', async () => {
    const f = createPolicyFetch({ policy });
    try {
      const res = await f(`${allowed.url}x`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 200);
      assert.equal(await res.text(), 'allowed');
      assert.match(allowed.seen.at(-1)?.userAgent ?? '', /^a2a-discovery\//);
    } finally {
      await f.close();
    }
  });

  test('refuses a URL outside the allowlist before any request', async () => {
    const f = createPolicyFetch({ policy });
    try {
      await rejectsWith(f(`${outside.url}a2a`, { method: 'POST', body: '{}' }), 'ERR_HOST_NOT_ALLOWED');
      await rejectsWith(f(`https://evil.example/`), 'ERR_HOST_NOT_ALLOWED');
      await rejectsWith(f(`http://user:pw@127.0.0.1:${allowed.port}/`), 'ERR_HOST_NOT_ALLOWED');
      await rejectsWith(f(`ftp://127.0.0.1:${allowed.port}/`), 'ERR_INSECURE_URL');
      assert.equal(outside.seen.length, 0, 'the server outside the allowlist saw nothing');
    } finally {
      await f.close();
    }
  });

  test('resolves names through the guarded lookup: an allowlisted name resolving to a blocked address is refused', async () => {
    const strict = HostPolicy.from({ allow: [`https://agents.example.test:${allowed.port}`] });
    const f = createPolicyFetch({ policy: strict, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    const metadata = createPolicyFetch({ policy: HostPolicy.from({ allow: ['https://169.254.169.254'] }) });
    try {
      await rejectsWith(f(`https://agents.example.test:${allowed.port}/`), 'ERR_ADDRESS_BLOCKED');
      // IP literals never reach a lookup function: judged before dispatch.
      await rejectsWith(metadata('https://169.254.169.254/latest/meta-data'), 'ERR_ADDRESS_BLOCKED');
    } finally {
      await f.close();
      await metadata.close();
    }
  });

  test('refuses a redirect and never follows it', async () => {
    const redirecting = await startCounting((_req, res) => {
      res.writeHead(307, { location: `${outside.url}stolen` });
      res.end();
    });
    const both = HostPolicy.from({ allow: [redirecting.origin, outside.origin], allowLoopback: true });
    const f = createPolicyFetch({ policy: both });
    const before = outside.seen.length;
    try {
      const err = await rejectsWith(f(`${redirecting.url}a2a`, { method: 'POST', body: '{}' }), 'ERR_REDIRECT_REFUSED');
      assert.match(err.message, /307/);
      assert.match(err.message, /stolen/);
      assert.equal(outside.seen.length, before, 'the redirect target was never contacted, even though allowlisted');
    } finally {
      await f.close();
      await redirecting.close();
    }
  });

  test('attaches credentials only to their own origin', async () => {
    const other = await startCounting(ok());
    const both = HostPolicy.from({ allow: [allowed.origin, other.origin], allowLoopback: true });
    const asked: string[] = [];
    const f = createPolicyFetch({
      policy: both,
      credentials: (origin) => {
        asked.push(origin);
        return origin === allowed.origin ? { authorization: 'Bearer for-allowed' } : undefined;
      },
    });
    try {
      await (await f(`${allowed.url}a`)).text();
      await (await f(`${other.url}b`, { headers: { authorization: 'Bearer caller-set' } })).text();
      assert.deepEqual(asked, [allowed.origin, other.origin]);
      assert.equal(allowed.seen.at(-1)?.authorization, 'Bearer for-allowed');
      assert.equal(other.seen.at(-1)?.authorization, 'Bearer caller-set', 'the other origin gets only what the caller set');
    } finally {
      await f.close();
      await other.close();
    }
  });

  test('streams SSE bodies chunk by chunk', async () => {
    let secondWritten = false;
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const sse = await startCounting((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('data: {"n":1}\n\n');
      void gate.then(() => {
        secondWritten = true;
        res.end('data: {"n":2}\n\n');
      });
    });
    const f = createPolicyFetch({ policy: HostPolicy.from({ allow: [sse.origin], allowLoopback: true }) });
    try {
      const res = await f(sse.url, { headers: { accept: 'text/event-stream' } });
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      const reader = res.body!.getReader();
      const first = new TextDecoder().decode((await reader.read()).value);
      assert.match(first, /"n":1/);
      assert.equal(secondWritten, false, 'the first event arrived while the server still held the second');
      release();
      let rest = '';
      for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
      assert.match(rest, /"n":2/);
    } finally {
      release();
      await f.close();
      await sse.close();
    }
  });

  test('bounds the wait for headers and the size of a body', async () => {
    const silent = await startCounting(() => undefined);
    const big = await startCounting((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('x'.repeat(5000));
    });
    // The same bytes with no length given, and as an event stream (passed on chunk by chunk).
    const chunked = await startCounting((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('x'.repeat(600));
      res.end('x'.repeat(600));
    });
    const stream = await startCounting((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${'x'.repeat(600)}\n\n`);
      setTimeout(() => res.end(`data: ${'x'.repeat(600)}\n\n`), 20);
    });
    const all = HostPolicy.from({ allow: [silent.origin, big.origin, chunked.origin, stream.origin], allowLoopback: true });
    const f = createPolicyFetch({ policy: all, timeoutMs: 150, maxResponseBytes: 1000 });
    // The caps on a deadline a loaded machine always meets: with 150 ms, a first connection there
    // sometimes had no headers in time, and the call failed on the deadline instead of the cap.
    const capped = createPolicyFetch({ policy: all, timeoutMs: 10_000, maxResponseBytes: 1000 });
    try {
      await rejectsWith(f(silent.url), 'ERR_FETCH_TIMEOUT');
      // A JSON answer is read before the Response is handed back: past the cap, the call fails.
      await rejectsWith(capped(big.url), 'ERR_BODY_TOO_LARGE');
      await rejectsWith(capped(chunked.url), 'ERR_BODY_TOO_LARGE');
      // An event stream is handed back at once; its reader fails once the cap is passed.
      const res = await capped(stream.url);
      assert.equal(res.headers.get('content-type'), 'text/event-stream');
      await rejectsWith(res.text(), 'ERR_BODY_TOO_LARGE');
    } finally {
      await f.close();
      await capped.close();
      await silent.close();
      await big.close();
      await chunked.close();
      await stream.close();
    }
  });

  test('asks for the answer unencoded and refuses an encoded one (nothing is inflated); sends bodies as fetch does', async () => {
    const heard: Array<{ method: string; accept?: string; acceptEncoding?: string; contentType?: string; body: string }> = [];
    const server = await startCounting((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        heard.push({
          method: req.method ?? '',
          ...(req.headers.accept !== undefined && { accept: req.headers.accept }),
          ...(req.headers['accept-encoding'] !== undefined && { acceptEncoding: req.headers['accept-encoding'] }),
          ...(req.headers['content-type'] !== undefined && { contentType: req.headers['content-type'] }),
          body: Buffer.concat(chunks).toString('utf8'),
        });
        if (req.url === '/bomb') {
          // 20 KB that would inflate to 20 MB, sent whatever was asked.
          res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
          res.end(gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x20)));
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'set-cookie': ['a=1', 'b=2'] });
        res.end('{"ok":true}');
      });
    });
    const f = createPolicyFetch({ policy: HostPolicy.from({ allow: [server.origin], allowLoopback: true }) });
    try {
      await rejectsWith(f(`${server.url}bomb`, { headers: { 'accept-encoding': 'gzip, br' } }), 'ERR_CONTENT_ENCODING');
      assert.equal(heard[0]!.acceptEncoding, 'identity', 'identity is asked even when the caller asked for gzip');
      assert.equal(heard[0]!.accept, '*/*');

      const form = await f(server.url, { method: 'post', body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'a b' }) });
      assert.deepEqual(await form.json(), { ok: true });
      assert.deepEqual(form.headers.getSetCookie(), ['a=1', 'b=2'], 'a repeated response header keeps each value');
      assert.equal(form.statusText, 'OK');
      assert.deepEqual(heard[1], { method: 'POST', accept: '*/*', acceptEncoding: 'identity', contentType: 'application/x-www-form-urlencoded;charset=UTF-8', body: 'grant_type=client_credentials&scope=a+b' });

      await (await f(server.url, { method: 'POST', body: 'plain' })).arrayBuffer();
      assert.equal(heard[2]!.contentType, 'text/plain;charset=UTF-8', 'text without a type is sent as fetch sends it');
      await (await f(server.url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json', accept: 'application/json' } })).arrayBuffer();
      assert.equal(heard[3]!.contentType, 'application/json', "the caller's type is kept");
      assert.equal(heard[3]!.accept, 'application/json');
      const bytes = new TextEncoder().encode('{"x":1}');
      await (await f(new Request(server.url, { method: 'PUT', body: bytes, headers: { 'content-type': 'application/json' } }))).arrayBuffer();
      assert.deepEqual({ method: heard[4]!.method, body: heard[4]!.body }, { method: 'PUT', body: '{"x":1}' }, 'a Request is sent with its method and body');
    } finally {
      await f.close();
      await server.close();
    }
  });

  test('a caller abort rejects with the caller reason; close() refuses further use', async () => {
    const f = createPolicyFetch({ policy });
    const controller = new AbortController();
    controller.abort(new Error('caller gave up'));
    await assert.rejects(f(allowed.url, { signal: controller.signal }), /caller gave up/);
    await f.close();
    await rejectsWith(f(allowed.url), 'ERR_USAGE');
  });

  test('bad options are a config error', () => {
    assert.throws(() => createPolicyFetch({} as never), (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID');
    assert.throws(() => createPolicyFetch({ policy, timeoutMs: -1 }), /timeoutMs/);
  });
});

describe('a card pointing at a host the policy refuses cannot be used to reach it', () => {
  let target: Counting;
  let adkPeer: { port: number; url: string; close(): Promise<void> };
  before(async () => {
    target = await startCounting(ok());
    const agent = new LlmAgent({ name: 'billing_peer', description: 'Billing.', model: new ScriptedLlm('billing over rest', 'fake-billing-rest') });
    const app = express();
    app.use(express.json());
    const server = await new Promise<http.Server>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const port = (server.address() as AddressInfo).port;
    await toA2a(agent, { app, host: '127.0.0.1', port, allowUnauthenticated: true });
    adkPeer = {
      port,
      url: `http://127.0.0.1:${port}`,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  });
  after(async () => {
    await target.close();
    await adkPeer.close();
  });

  function legacyCard(url: string, additional: { url: string; transport: string }[] = []): AgentCardModel {
    const raw = {
      name: 'Billing',
      description: 'Billing.',
      url,
      version: '1.0.0',
      protocolVersion: '0.3.0',
      preferredTransport: 'JSONRPC',
      additionalInterfaces: additional,
      capabilities: { streaming: true },
      defaultInputModes: ['text'],
      defaultOutputModes: ['text'],
      skills: [{ id: 'billing', name: 'Billing', description: 'Billing.', tags: ['billing'] }],
    };
    const r = parseAgentCard(JSON.stringify(raw), { allowLoopback: true });
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    return r.card as AgentCardModel;
  }

  test('remoteAgentFor refuses to build it, for a 0.3 card and for a 1.0 card', async () => {
    const policy = HostPolicy.from({ allow: [adkPeer.url], allowLoopback: true });
    assert.throws(
      () => remoteAgentFor({ name: 'billing', description: 'Billing.', card: legacyCard(`${target.url}jsonrpc`), policy }),
      (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_HOST_NOT_ALLOWED' && err.stage === 'build',
    );
    const v1 = await startV1Server();
    try {
      const r = parseAgentCard(JSON.stringify(v1.card), { allowLoopback: true });
      assert.throws(
        () => remoteAgentFor({ name: 'warranty', description: 'Warranty.', card: r.card!, policy }),
        (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_HOST_NOT_ALLOWED',
      );
      assert.throws(() => new V1RemoteAgent({ name: 'warranty', description: 'Warranty.', card: r.card!, policy }), /refuses every interface/);
      assert.equal(v1.httpRequests, 0);
    } finally {
      await v1.close();
    }
    assert.equal(target.seen.length, 0);
  });

  test('with one refused and one admitted interface, the admitted one is used (ADK REST transport)', async () => {
    const policy = HostPolicy.from({ allow: [adkPeer.url], allowLoopback: true });
    const card = legacyCard(`${target.url}jsonrpc`, [{ url: `${adkPeer.url}/rest`, transport: 'HTTP+JSON' }]);
    const agent = remoteAgentFor({ name: 'billing', description: 'Billing.', card, policy });
    assert.ok(agent instanceof RemoteA2AAgent);
    const runner = new InMemoryRunner({ agent, appName: 'steer_app' });
    await runner.sessionService.createSession({ appName: 'steer_app', userId: 'u', sessionId: 's' });
    const events: Event[] = [];
    for await (const ev of runner.runAsync({ userId: 'u', sessionId: 's', newMessage: { role: 'user', parts: [{ text: 'hi' }] } })) events.push(ev);
    const final = events.filter((e) => e.author === 'billing' && !e.partial && e.content !== undefined).at(-1);
    assert.equal(final?.content?.parts?.map((p) => p.text).join(''), 'billing over rest', JSON.stringify(events.map((e) => e.errorMessage)));
    assert.equal(target.seen.length, 0, 'the refused interface was never contacted');
  });

  test('even a RemoteA2AAgent built by hand over the policy fetch cannot reach a refused URL', async () => {
    const policy = HostPolicy.from({ allow: [adkPeer.url], allowLoopback: true });
    const adkCard = toAdkCard(legacyCard(`${target.url}jsonrpc`));
    assert.equal(adkCard.kind, 'adk');
    if (adkCard.kind !== 'adk') return;
    const f = createPolicyFetch({ policy });
    const agent = new RemoteA2AAgent({ name: 'billing', description: 'Billing.', agentCard: adkCard.card, clientFactory: createAdkClientFactory({ fetchImpl: f }) });
    const runner = new InMemoryRunner({ agent, appName: 'bypass_app' });
    await runner.sessionService.createSession({ appName: 'bypass_app', userId: 'u', sessionId: 's' });
    const events: Event[] = [];
    for await (const ev of runner.runAsync({ userId: 'u', sessionId: 's', newMessage: { role: 'user', parts: [{ text: 'hi' }] } })) events.push(ev);
    assert.equal(events.length, 1);
    assert.match(events[0]!.errorMessage ?? '', /not in the allowlist/);
    assert.equal(target.seen.length, 0);
    await f.close();
  });
});

test('NODE_TLS_REJECT_UNAUTHORIZED=0 refuses to create a policy fetch, as it does a card fetcher', () => {
  const saved = process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
  process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = '0';
  try {
    assert.throws(() => createPolicyFetch({ policy: HostPolicy.from({ allow: [] }) }), { code: 'ERR_CONFIG_INVALID', stage: 'config' });
  } finally {
    if (saved === undefined) delete process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
    else process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = saved;
  }
});
