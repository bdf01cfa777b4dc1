import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostPolicy, createCardFetcher, type CardFetcherOptions } from '../../packages/core/src/fetch/index.js';
import { isDiscoveryError, type DiscoveryError, type DiscoveryErrorCode } from '../../packages/core/src/errors.js';
import { startFaultServer, type FaultServer } from '../helpers/fault-server.js';
import { createTestCertificate } from '../helpers/tls.js';

/** Asserts a DiscoveryError with the code, and returns it for further checks. */
async function rejection(promise: Promise<unknown>, code: DiscoveryErrorCode): Promise<DiscoveryError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(isDiscoveryError(err), `expected a DiscoveryError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}, but the fetch succeeded`);
}

describe('card fetcher against a loopback fault server', () => {
  let server: FaultServer;
  let policy: HostPolicy;
  const fetchers: Array<{ close(): Promise<void> }> = [];
  const make = (options: Partial<CardFetcherOptions> = {}) => {
    const fetcher = createCardFetcher({ policy, ...options });
    fetchers.push(fetcher);
    return fetcher;
  };

  before(async () => {
    server = await startFaultServer();
    policy = HostPolicy.from({ allow: [`http://127.0.0.1:${server.port}`, `http://localhost:${server.port}`], allowLoopback: true });
  });
  after(async () => {
    await Promise.all(fetchers.map((f) => f.close()));
    await server.close();
  });

  test('a 200 is returned with body, lower-case headers, duration and peer address', async () => {
    const ep = server.endpoint('ok', { card: { name: 'Billing' }, cacheControl: 'max-age=300', headers: { 'X-Extra': 'a' } });
    const res = await make({ recordRemoteAddress: true }).fetch(ep.cardUrl);
    assert.equal(res.status, 200);
    assert.equal(res.url, ep.cardUrl);
    assert.deepEqual(JSON.parse(res.body.toString()), { name: 'Billing' });
    assert.equal(res.headers['cache-control'], 'max-age=300');
    assert.equal(res.headers['etag'], ep.etag);
    assert.equal(res.headers['x-extra'], 'a');
    assert.equal(res.remoteAddress, '127.0.0.1');
    assert.ok(res.durationMs > 0 && res.durationMs < 2000);
    const sent = ep.requests.at(-1)?.headers ?? {};
    assert.equal(sent['accept'], 'application/json');
    assert.equal(sent['accept-encoding'], 'identity');
    assert.match(String(sent['user-agent']), /^a2a-discovery\/\d/);
    assert.equal(sent['a2a-version'], undefined);
  });

  test('a reload that removes a host from the allowlist refuses a URL the fetcher fetched before, and nothing reaches it', async () => {
    const own = HostPolicy.from({ allow: [`http://127.0.0.1:${server.port}`], allowLoopback: true });
    const ep = server.endpoint('reloaded', { card: { name: 'Reloaded' } });
    const fetcher = make({ policy: own });
    assert.equal((await fetcher.fetch(ep.cardUrl)).status, 200);
    own.update(HostPolicy.from({ allow: ['https://elsewhere.example.com'], allowLoopback: true }));
    const hits = ep.hits;
    await rejection(fetcher.fetch(ep.cardUrl), 'ERR_HOST_NOT_ALLOWED');
    assert.equal(ep.hits, hits, 'no request reached the host the allowlist no longer names');
    own.update(HostPolicy.from({ allow: [`http://127.0.0.1:${server.port}`], allowLoopback: true }));
    assert.equal((await fetcher.fetch(ep.cardUrl)).status, 200, 'named again: fetched again');
  });

  test('a 304 is a result, and the conditional header reaches the server', async () => {
    const ep = server.endpoint('etag', { card: { name: 'Etag' } });
    const fetcher = make();
    const first = await fetcher.fetch(ep.cardUrl);
    const etag = first.headers['etag'];
    assert.ok(etag);
    const second = await fetcher.fetch(ep.cardUrl, { headers: { 'If-None-Match': etag } });
    assert.equal(second.status, 304);
    assert.equal(second.body.length, 0);
    assert.equal(ep.requests.at(-1)?.headers['if-none-match'], etag);
  });

  test('non-redirect statuses (401, 404, 503) are returned for the cache to judge', async () => {
    const fetcher = make();
    for (const status of [401, 404, 503]) {
      const ep = server.endpoint(`status-${status}`, { mode: 'status', status, body: `{"s":${status}}` });
      const res = await fetcher.fetch(ep.cardUrl);
      assert.equal(res.status, status);
      assert.equal(res.body.toString(), `{"s":${status}}`);
    }
  });

  test('caller headers cannot turn on compression', async () => {
    const ep = server.endpoint('ae');
    await make().fetch(ep.cardUrl, { headers: { 'Accept-Encoding': 'gzip, br' } });
    assert.equal(ep.requests.at(-1)?.headers['accept-encoding'], 'identity');
  });

  // T1: a fetch to a loopback server without the exemption never reaches it.
  test('T1: a loopback server is unreachable without the loopback exemption', async (t) => {
    const ep = server.endpoint('t1');
    const strict = HostPolicy.from({ allow: [`https://127.0.0.1:${server.port}`, `https://internal.test:${server.port}`, `https://metadata.test`] });
    const lookups: Record<string, string> = { 'internal.test': '127.0.0.1', 'metadata.test': '169.254.169.254' };
    const fetcher = createCardFetcher({ policy: strict, lookup: async (host) => [{ address: lookups[host] ?? '0.0.0.0', family: 4 }] });
    t.after(() => fetcher.close());
    const connectionsBefore = server.connections;

    const literal = await rejection(fetcher.fetch(`https://127.0.0.1:${server.port}/t1/.well-known/agent-card.json`), 'ERR_ADDRESS_BLOCKED');
    assert.equal(literal.stage, 'address');
    const named = await rejection(fetcher.fetch(`https://internal.test:${server.port}/t1/.well-known/agent-card.json`), 'ERR_ADDRESS_BLOCKED');
    assert.match(named.message, /internal\.test resolved to blocked address 127\.0\.0\.1/);
    await rejection(fetcher.fetch('https://metadata.test/latest/meta-data/'), 'ERR_ADDRESS_BLOCKED');
    await rejection(fetcher.fetch(ep.cardUrl), 'ERR_INSECURE_URL');

    assert.equal(ep.hits, 0);
    assert.equal(server.connections, connectionsBefore);
  });

  // T2: odd spellings of 127.0.0.1 are the canonical address by the time they are judged.
  test('T2: odd IPv4 spellings of a loopback server are blocked before any connection', async (t) => {
    const ep = server.endpoint('t2');
    const strict = HostPolicy.from({ allow: [`https://127.0.0.1:${server.port}`] });
    const fetcher = createCardFetcher({ policy: strict });
    t.after(() => fetcher.close());
    const connectionsBefore = server.connections;
    for (const spelling of ['2130706433', '0x7f000001', '017700000001', '127.1', '%31%32%37.0.0.1', '１２７.０.０.１']) {
      const err = await rejection(fetcher.fetch(`https://${spelling}:${server.port}/t2/.well-known/agent-card.json`), 'ERR_ADDRESS_BLOCKED');
      assert.match(err.message, /127\.0\.0\.1/, spelling);
    }
    assert.equal(ep.hits, 0);
    assert.equal(server.connections, connectionsBefore);
  });

  // T4: redirects are never followed.
  test('T4: a 302 off-host is refused, names its Location, and the target is never hit', async () => {
    const secret = server.endpoint('secret');
    const ep = server.endpoint('t4', { mode: 'redirect', location: `http://localhost:${server.port}/secret/.well-known/agent-card.json` });
    const err = await rejection(make().fetch(ep.cardUrl), 'ERR_REDIRECT_REFUSED');
    assert.ok(err.message.includes(`http://localhost:${server.port}/secret/.well-known/agent-card.json`), err.message);
    assert.equal(err.status, 302);
    assert.equal(err.url, ep.cardUrl);
    assert.equal(ep.hits, 1);
    assert.equal(secret.hits, 0);
    // Same-origin redirects are not followed either.
    ep.set({ mode: 'redirect', location: secret.cardUrl, status: 307 });
    await rejection(make().fetch(ep.cardUrl), 'ERR_REDIRECT_REFUSED');
    assert.equal(secret.hits, 0);
  });

  // T10: bytes are capped with or without content-length, and nothing is decompressed.
  test('T10: a body over maxBodyBytes is refused with a declared content-length', async () => {
    const ep = server.endpoint('big-cl', { mode: 'big', bytes: 1024 * 1024, contentLength: true });
    const err = await rejection(make().fetch(ep.cardUrl), 'ERR_BODY_TOO_LARGE');
    assert.match(err.message, /1048576.*65536/);
  });

  test('T10: a huge body without content-length is cut off at the cap, not read to the end', async () => {
    const ep = server.endpoint('big-chunked', { mode: 'big', bytes: 1024 * 1024 * 1024, contentLength: false });
    const started = performance.now();
    const heapBefore = process.memoryUsage().heapUsed;
    const err = await rejection(make({ maxBodyBytes: 100_000 }).fetch(ep.cardUrl), 'ERR_BODY_TOO_LARGE');
    assert.match(err.message, /100000/);
    assert.ok(performance.now() - started < 2000, 'a 1 GiB body was not read');
    assert.ok(process.memoryUsage().heapUsed - heapBefore < 64 * 1024 * 1024, 'memory stayed bounded');
  });

  test('T10: the cap is exact: maxBodyBytes bytes pass, one more fails', async () => {
    const fetcher = make({ maxBodyBytes: 100 });
    const exact = server.endpoint('cap-100', { card: 'x'.repeat(100) });
    assert.equal((await fetcher.fetch(exact.cardUrl)).body.length, 100);
    const over = server.endpoint('cap-101', { card: 'x'.repeat(101) });
    await rejection(fetcher.fetch(over.cardUrl), 'ERR_BODY_TOO_LARGE');
    const overChunked = server.endpoint('cap-101-chunked', { mode: 'big', bytes: 101, contentLength: false });
    await rejection(fetcher.fetch(overChunked.cardUrl), 'ERR_BODY_TOO_LARGE');
  });

  test('T10: a gzip bomb is refused with ERR_CONTENT_ENCODING, never inflated', async () => {
    const ep = server.endpoint('gzip', { mode: 'gzip', decompressedBytes: 50 * 1024 * 1024 });
    const heapBefore = process.memoryUsage().heapUsed;
    const err = await rejection(make().fetch(ep.cardUrl), 'ERR_CONTENT_ENCODING');
    assert.match(err.message, /gzip/);
    assert.ok(process.memoryUsage().heapUsed - heapBefore < 32 * 1024 * 1024);
    assert.equal(ep.requests.at(-1)?.headers['accept-encoding'], 'identity');
  });

  // T11: time bounds.
  test('T11: a server that never answers fails at the total deadline', async () => {
    const ep = server.endpoint('hang', { mode: 'hang' });
    const started = performance.now();
    const err = await rejection(make({ totalTimeoutMs: 300 }).fetch(ep.cardUrl), 'ERR_FETCH_TIMEOUT');
    const elapsed = performance.now() - started;
    assert.match(err.message, /total deadline of 300 ms/);
    assert.equal(err.stage, 'fetch');
    assert.ok(elapsed >= 290 && elapsed < 1500, `elapsed ${elapsed}`);
  });

  test('T11: the headers timeout is named when it fires first', async () => {
    const ep = server.endpoint('hang-headers', { mode: 'hang' });
    const err = await rejection(make({ headersTimeoutMs: 200, totalTimeoutMs: 5000 }).fetch(ep.cardUrl), 'ERR_FETCH_TIMEOUT');
    assert.match(err.message, /headers timeout of 200 ms/);
  });

  test('T11: a slow-drip body fails at the total deadline even though bytes keep coming', async () => {
    const ep = server.endpoint('drip', { mode: 'drip', intervalMs: 20 });
    const started = performance.now();
    const err = await rejection(make({ totalTimeoutMs: 300, bodyTimeoutMs: 2000 }).fetch(ep.cardUrl), 'ERR_FETCH_TIMEOUT');
    const elapsed = performance.now() - started;
    assert.match(err.message, /total deadline of 300 ms exceeded while reading the body/);
    assert.ok(elapsed >= 290 && elapsed < 1500, `elapsed ${elapsed}`);
  });

  test('T11: a resolver that never answers fails at the connect timeout', async () => {
    const fetcher = make({ connectTimeoutMs: 100, totalTimeoutMs: 3000, lookup: () => new Promise(() => undefined) });
    const started = performance.now();
    const err = await rejection(fetcher.fetch(`http://localhost:${server.port}/x/.well-known/agent-card.json`), 'ERR_FETCH_TIMEOUT');
    assert.match(err.message, /connect timeout of 100 ms/);
    assert.ok(performance.now() - started < 2500);
  });

  // T12: truncation is an error, never a silent partial body.
  test('T12: a body shorter than its content-length is an error', async () => {
    const ep = server.endpoint('truncated', { mode: 'truncated' });
    const err = await rejection(make().fetch(ep.cardUrl), 'ERR_FETCH_NETWORK');
    assert.match(err.message, /truncated/);
    assert.equal(err.status, 200);
    assert.ok(err.cause !== undefined);
  });

  test('a caller abort ends the fetch with ERR_FETCH_NETWORK', async () => {
    const ep = server.endpoint('abort', { mode: 'hang' });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const err = await rejection(make().fetch(ep.cardUrl, { signal: controller.signal }), 'ERR_FETCH_NETWORK');
    assert.match(err.message, /aborted by the caller/);
  });

  test('a refused connection is ERR_FETCH_NETWORK with the url and cause', async () => {
    const gone = await startFaultServer();
    const port = gone.port;
    await gone.close();
    const p = HostPolicy.from({ allow: [`http://127.0.0.1:${port}`], allowLoopback: true });
    const fetcher = createCardFetcher({ policy: p });
    fetchers.push(fetcher);
    const err = await rejection(fetcher.fetch(`http://127.0.0.1:${port}/x`), 'ERR_FETCH_NETWORK');
    assert.match(err.message, /ECONNREFUSED/);
    assert.equal(err.url, `http://127.0.0.1:${port}/x`);
  });

  test('proxy environment variables are ignored', async () => {
    const proxy = await startFaultServer();
    const saved = { HTTP_PROXY: process.env['HTTP_PROXY'], http_proxy: process.env['http_proxy'], HTTPS_PROXY: process.env['HTTPS_PROXY'] };
    try {
      process.env['HTTP_PROXY'] = proxy.origin;
      process.env['http_proxy'] = proxy.origin;
      process.env['HTTPS_PROXY'] = proxy.origin;
      const ep = server.endpoint('no-proxy');
      const res = await make().fetch(ep.cardUrl);
      assert.equal(res.status, 200);
      assert.equal(ep.hits, 1);
      assert.equal(proxy.hits, 0);
      assert.equal(proxy.connections, 0);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await proxy.close();
    }
  });

  test('close() aborts fetches in flight and later fetches are refused', async () => {
    const ep = server.endpoint('close', { mode: 'hang' });
    const fetcher = createCardFetcher({ policy, totalTimeoutMs: 5000 });
    const pending = fetcher.fetch(ep.cardUrl);
    await new Promise((r) => setTimeout(r, 50));
    const started = performance.now();
    const failed = rejection(pending, 'ERR_FETCH_NETWORK');
    await fetcher.close();
    const err = await failed;
    assert.match(err.message, /closed/);
    assert.ok(performance.now() - started < 1000);
    await rejection(fetcher.fetch(ep.cardUrl), 'ERR_USAGE');
    await fetcher.close();
  });
});

describe('credentials', () => {
  let a: FaultServer;
  let b: FaultServer;
  before(async () => {
    a = await startFaultServer();
    b = await startFaultServer();
  });
  after(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  test('are sent only to the origin they were issued for', async (t) => {
    const policy = HostPolicy.from({ allow: [a.origin, b.origin], allowLoopback: true });
    const asked: string[] = [];
    const fetcher = createCardFetcher({
      policy,
      credentials: async (origin) => {
        asked.push(origin);
        return origin === a.origin ? { Authorization: 'Bearer secret-a' } : undefined;
      },
    });
    t.after(() => fetcher.close());
    const epA = a.endpoint('billing', { mode: 'unauthorized', value: 'Bearer secret-a' });
    const epB = b.endpoint('billing', { mode: 'unauthorized', value: 'Bearer secret-a' });

    assert.equal((await fetcher.fetch(epA.cardUrl)).status, 200);
    assert.equal((await fetcher.fetch(epB.cardUrl)).status, 401);
    assert.deepEqual(asked, [a.origin, b.origin]);
    assert.equal(epA.requests.at(-1)?.headers['authorization'], 'Bearer secret-a');
    assert.equal(epB.requests.at(-1)?.headers['authorization'], undefined);

    // A redirect from A to B is refused, so the header cannot travel with it either.
    epA.set({ mode: 'redirect', location: epB.cardUrl });
    await rejection(fetcher.fetch(epA.cardUrl), 'ERR_REDIRECT_REFUSED');
    assert.equal(epB.hits, 1);
  });

  test('a failing provider fails the fetch before anything is sent', async (t) => {
    const policy = HostPolicy.from({ allow: [a.origin], allowLoopback: true });
    const fetcher = createCardFetcher({ policy, credentials: () => Promise.reject(new Error('vault down')) });
    t.after(() => fetcher.close());
    const ep = a.endpoint('cred-fail');
    const err = await rejection(fetcher.fetch(ep.cardUrl), 'ERR_FETCH_NETWORK');
    assert.match(err.message, /credentials provider failed/);
    assert.equal((err.cause as Error).message, 'vault down');
    assert.equal(ep.hits, 0);
  });
});

// T8: TLS only, certificates verified.
describe('T8: TLS', () => {
  test('http:// is refused without the loopback exemption', async (t) => {
    const server = await startFaultServer();
    t.after(() => server.close());
    const ep = server.endpoint('plain');
    const fetcher = createCardFetcher({ policy: HostPolicy.from({ allow: [`https://127.0.0.1:${server.port}`] }) });
    t.after(() => fetcher.close());
    const err = await rejection(fetcher.fetch(ep.cardUrl), 'ERR_INSECURE_URL');
    assert.equal(err.stage, 'policy');
    assert.equal(ep.hits, 0);
  });

  test('a self-signed loopback HTTPS server is refused by default, accepted only with its CA', async (t) => {
    const cert = await createTestCertificate();
    const server = await startFaultServer({ tls: cert, hostname: 'localhost' });
    t.after(() => server.close());
    const ep = server.endpoint('tls');
    const policy = HostPolicy.from({ allow: [`https://localhost:${server.port}`], allowLoopback: true });
    const lookup = async () => [{ address: '127.0.0.1', family: 4 as const }];
    const strict = createCardFetcher({ policy, lookup });
    t.after(() => strict.close());
    const err = await rejection(strict.fetch(ep.cardUrl), 'ERR_FETCH_NETWORK');
    assert.match(err.message, /certificate/i);
    assert.equal(ep.hits, 0);

    const trusting = createCardFetcher({ policy, lookup, ca: cert.cert });
    t.after(() => trusting.close());
    assert.equal((await trusting.fetch(ep.cardUrl)).status, 200);
    assert.equal(ep.hits, 1);
  });

  test('NODE_TLS_REJECT_UNAUTHORIZED=0 refuses to create a fetcher', () => {
    const saved = process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
    process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = '0';
    try {
      assert.throws(() => createCardFetcher({ policy: HostPolicy.from({ allow: [] }) }), { code: 'ERR_CONFIG_INVALID', stage: 'config' });
    } finally {
      if (saved === undefined) delete process.env['NODE_TLS_REJECT_UNAUTHORIZED'];
      else process.env['NODE_TLS_REJECT_UNAUTHORIZED'] = saved;
    }
  });
});

describe('createCardFetcher options', () => {
  test('every bad option is reported in one ERR_CONFIG_INVALID', () => {
    assert.throws(
      () =>
        createCardFetcher({
          policy: undefined as unknown as HostPolicy,
          totalTimeoutMs: -1,
          maxBodyBytes: 1.5,
          maxConnectionsPerOrigin: 0,
          connectTimeoutMs: Number.NaN,
        }),
      (err: unknown) => {
        assert.ok(isDiscoveryError(err));
        assert.equal(err.code, 'ERR_CONFIG_INVALID');
        assert.deepEqual(
          err.problems.map((p) => p.path).sort(),
          ['connectTimeoutMs', 'maxBodyBytes', 'maxConnectionsPerOrigin', 'policy', 'totalTimeoutMs'],
        );
        return true;
      },
    );
  });

  test('a URL outside the allowlist is refused before any I/O, with the policy code and stage', async (t) => {
    const fetcher = createCardFetcher({ policy: HostPolicy.from({ allow: ['https://agents.example.com'] }), lookup: () => assert.fail('no DNS for refused hosts') });
    t.after(() => fetcher.close());
    const err = await rejection(fetcher.fetch('https://evil.test/.well-known/agent-card.json'), 'ERR_HOST_NOT_ALLOWED');
    assert.equal(err.stage, 'resolve');
    await rejection(fetcher.fetch('https://agents.example.com@evil.test/'), 'ERR_HOST_NOT_ALLOWED');
  });
});
