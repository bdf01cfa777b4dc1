/**
 * End to end: `a2a-discovery serve` run as a child process with `OTEL_EXPORTER_OTLP_ENDPOINT`
 * pointing at a loopback OTLP/HTTP receiver (node:http, decoding the OTLP JSON encoding the
 * service's exporter sends). A `/api/chat` turn with a `traceparent` exports the spans of that
 * trace from the HTTP request down, and the service's metrics are exported; what is buffered is flushed on SIGTERM; the collector's
 * headers are sent; no secret (admin token, session secret, a peer's credential, an OIDC bearer,
 * the collector's own header) appears anywhere in what is exported. Without the variable (or with
 * OTEL_SDK_DISABLED) nothing is sent; a malformed endpoint stops the start, naming the variable.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OAuth2Server } from 'oauth2-mock-server';
import { stringify } from 'yaml';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { runCli } from '../helpers/cli.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { startServe } from '../helpers/serve-process.js';
import { waitFor } from '../helpers/wait-for.js';

// ---- A loopback OTLP/HTTP receiver -------------------------------------------------------------

interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: unknown;
}

/** An OTLP AnyValue (JSON encoding) as a plain value. */
type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };
function plain(v: AnyValue): unknown {
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue !== undefined) return (v.arrayValue.values ?? []).map(plain);
  return undefined;
}
function attrs(list: Array<{ key: string; value: AnyValue }> | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map((a) => [a.key, plain(a.value)]));
}

/** A span as the receiver decoded it (OTLP JSON: ids in hex, kind 1 internal, 2 server, 3 client). */
interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  status: { code?: number; message?: string };
  scope: string;
  resource: Record<string, unknown>;
}

function spansOf(received: readonly Received[]): ExportedSpan[] {
  const out: ExportedSpan[] = [];
  for (const r of received) {
    if (r.path !== '/v1/traces') continue;
    const body = r.body as { resourceSpans?: Array<{ resource?: { attributes?: [] }; scopeSpans?: Array<{ scope?: { name?: string }; spans?: Array<Record<string, unknown>> }> }> };
    for (const rs of body.resourceSpans ?? []) {
      const resource = attrs(rs.resource?.attributes);
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          out.push({
            traceId: String(s.traceId),
            spanId: String(s.spanId),
            parentSpanId: typeof s.parentSpanId === 'string' ? s.parentSpanId : '',
            name: String(s.name),
            kind: Number(s.kind),
            attributes: attrs(s.attributes as []),
            status: (s.status ?? {}) as ExportedSpan['status'],
            scope: ss.scope?.name ?? '',
            resource,
          });
        }
      }
    }
  }
  return out;
}

/** The names of the metrics the receiver got (OTLP JSON `resourceMetrics`), from our scope only. */
function metricsOf(received: readonly Received[]): Set<string> {
  const names = new Set<string>();
  for (const r of received) {
    if (r.path !== '/v1/metrics') continue;
    const body = r.body as { resourceMetrics?: Array<{ scopeMetrics?: Array<{ scope?: { name?: string }; metrics?: Array<{ name: string }> }> }> };
    for (const rm of body.resourceMetrics ?? []) for (const sm of rm.scopeMetrics ?? []) if (sm.scope?.name === 'a2a-discovery') for (const m of sm.metrics ?? []) names.add(m.name);
  }
  return names;
}

interface Receiver {
  url: string;
  received: Received[];
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      received.push({ path: req.url ?? '', headers: req.headers, raw, body });
      // An ExportTraceServiceResponse / ExportMetricsServiceResponse with nothing rejected.
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

// ---- serve as a child process -------------------------------------------------------------------

/** Only the OTEL_* variables a test gives: none inherited from the machine running the tests. */
function envWith(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('OTEL_')) env[k] = v;
  return { ...env, ...vars };
}

const serve = (config: string, vars: Record<string, string>): Promise<ServeProcess> => startServe({ config, env: envWith(vars), startTimeoutMs: 60_000 });

// ---- the scene: one peer behind a credential, an admin token, people with OIDC bearers ----------

const ADMIN_TOKEN = 'admin-token-7f3a9c41d2e8b6a0';
const PEER_TOKEN = 'peer-credential-5be1c07d93a2f846';
const COLLECTOR_KEY = 'collector-key-c0ffee5ecret';
const AUDIENCE = 'a2a-discovery-otel-test';
const TRACE = '0af7651916cd43dd8448eb211c80319c';
const PARENT = 'b7ad6b7169203331';
const UNSAMPLED_TRACE = 'e1d2c3b4a5968778695a4b3c2d1e0f00';

let dir: string;
let billing: RunningPeer;
let provider: OAuth2Server;
let configFile: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'otlp-export-'));
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  provider = new OAuth2Server();
  await provider.issuer.keys.generate('RS256');
  await provider.start(0, '127.0.0.1');
  provider.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => {
    token.payload.sub = 'user-ada';
    token.payload.aud = AUDIENCE;
    token.payload.roles = ['ops'];
  });
  configFile = join(dir, 'discovery.yaml');
  await writeFile(
    configFile,
    stringify({
      allow: [new URL(billing.baseUrl).origin],
      allowLoopback: true,
      vocabulary: [{ tag: 'billing', description: 'Invoices and payments.', keywords: ['invoice'] }],
      needs: [{ tag: 'billing' }],
      static: [{ name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
      credentials: [{ origin: new URL(billing.baseUrl).origin, prefix: 'Bearer ', valueEnv: 'BILLING_TOKEN' }],
      server: { tokenEnv: 'SERVICE_TOKEN', oidc: { issuer: provider.issuer.url, audience: AUDIENCE, roles: { ops: 'operator' } } },
      cache: { minTtlMs: 0 },
      loop: { cycleIntervalMs: 600_000 },
    }),
  );
});

after(async () => {
  await Promise.all([billing.close(), provider.stop()]);
  await rm(dir, { recursive: true, force: true });
});

const secrets = { SERVICE_TOKEN: ADMIN_TOKEN, BILLING_TOKEN: PEER_TOKEN };

async function oidcToken(): Promise<string> {
  const res = await fetch(`${provider.issuer.url}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'client_credentials', scope: 'openid' }),
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

function chat(url: string, body: Record<string, unknown>, headers: Record<string, string>): Promise<Response> {
  return fetch(`${url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

async function ready(s: ServeProcess): Promise<void> {
  await waitFor(async () => ((await fetch(`${s.url}/readyz`)).status === 200 ? true : undefined), 'the first snapshot');
}

describe('serve exports OTLP/HTTP to the collector OTEL_EXPORTER_OTLP_ENDPOINT names', () => {
  test('a chat turn with a traceparent: its trace from the HTTP request down, flushed on SIGTERM, no secret anywhere', async () => {
    const receiver = await startReceiver();
    try {
      const s = await serve(configFile, {
        ...secrets,
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: `x-collector-key=${COLLECTOR_KEY}`,
        OTEL_SERVICE_NAME: 'discovery-under-test',
        OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=e2e',
        // Nothing leaves before the stop: the spans the receiver sees were flushed by the shutdown.
        OTEL_BSP_SCHEDULE_DELAY: '600000',
        OTEL_METRIC_EXPORT_INTERVAL: '600000',
      });
      let sessionSecret: string;
      let bearer: string;
      try {
        await ready(s);
        const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
        const first = await chat(s.url, { message: 'Invoice 12, please?' }, { ...admin, traceparent: `00-${TRACE}-${PARENT}-01` });
        assert.equal(first.status, 200);
        const turn = (await first.json()) as { traceId: string; sessionId: string; sessionSecret: string; author: string; reply: string };
        assert.equal(turn.traceId, TRACE, 'the response names the caller\'s trace');
        assert.equal(turn.author, 'billing_agent');
        assert.match(first.headers.get('traceresponse') ?? '', new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
        sessionSecret = turn.sessionSecret;
        // The session's secret and an OIDC person's bearer are presented too: neither may be exported.
        const second = await chat(s.url, { sessionId: turn.sessionId, message: 'And invoice 13?' }, { ...admin, 'x-session-secret': sessionSecret });
        assert.equal(second.status, 200);
        bearer = await oidcToken();
        const person = await chat(s.url, { message: 'Invoice 14?' }, { authorization: `Bearer ${bearer}` });
        assert.equal(person.status, 200);
        const unsampled = await chat(s.url, { message: 'Invoice 15?' }, { ...admin, traceparent: `00-${UNSAMPLED_TRACE}-${PARENT}-00` });
        assert.equal(((await unsampled.json()) as { traceId: unknown }).traceId, null, 'parentbased: an unsampled caller stays unsampled');
        await fetch(`${s.url}/api/snapshot?apiKey=query-value-91d3`, { headers: admin });
        assert.deepEqual(receiver.received.filter((r) => r.path === '/v1/traces'), [], 'still buffered (OTEL_BSP_SCHEDULE_DELAY)');
      } finally {
        assert.deepEqual(await s.stop(), { code: 0, signal: null }, s.output());
      }

      const traces = receiver.received.filter((r) => r.path === '/v1/traces');
      assert.ok(traces.length >= 1, 'the buffered spans were flushed at the stop');
      for (const r of traces) {
        assert.equal(r.headers['content-type'], 'application/json', 'OTLP/HTTP JSON');
        assert.equal(r.headers['x-collector-key'], COLLECTOR_KEY, 'OTEL_EXPORTER_OTLP_HEADERS sent to the collector');
      }
      const spans = spansOf(receiver.received);
      const server = spans.filter((x) => x.traceId === TRACE && x.kind === 2);
      assert.equal(server.length, 1, 'one SERVER span in the caller\'s trace');
      const request = server[0]!;
      assert.equal(request.name, 'POST /api/chat');
      assert.equal(request.parentSpanId, PARENT, 'a child of the caller\'s span');
      assert.equal(request.scope, 'a2a-discovery');
      assert.deepEqual(
        [request.attributes['http.request.method'], request.attributes['http.route'], request.attributes['url.path'], request.attributes['http.response.status_code']],
        ['POST', '/api/chat', '/api/chat', 200],
      );
      assert.equal(request.resource['service.name'], 'discovery-under-test');
      assert.equal(request.resource['deployment.environment.name'], 'e2e');
      assert.equal(typeof request.resource['service.version'], 'string');
      // Every span of the trace hangs under the HTTP request (T1/T2's chat and A2A spans, when present).
      const ofTrace = spans.filter((x) => x.traceId === TRACE);
      const ids = new Set(ofTrace.map((x) => x.spanId));
      for (const x of ofTrace) if (x !== request) assert.ok(ids.has(x.parentSpanId), `${x.name} is inside the request's trace`);
      // The whole chain, from the caller's span down: HTTP request → chat turn → ADK's invoke_agent → the A2A call.
      const byId = new Map(spans.map((x) => [x.spanId, x]));
      const ancestors = (x: ExportedSpan): string[] => {
        const out: string[] = [];
        for (let p = byId.get(x.parentSpanId); p !== undefined; p = byId.get(p.parentSpanId)) out.push(p.name);
        return out;
      };
      const call = ofTrace.find((x) => x.kind === 3 && (x.name === 'SendMessage' || x.name === 'SendStreamingMessage'));
      assert.ok(call, `an A2A client span in the trace: ${JSON.stringify(ofTrace.map((x) => x.name))}`);
      const chain = ancestors(call);
      assert.equal(chain.at(-1), 'POST /api/chat', chain.join(' < '));
      for (const name of ['a2a_discovery.chat.turn', 'invoke_agent billing_agent']) assert.ok(chain.includes(name), `${name} above ${call.name}: ${chain.join(' < ')}`);
      assert.equal(call.attributes['a2a.method.name'], call.name);
      assert.equal(call.attributes['gen_ai.agent.name'], 'Billing Agent');
      assert.deepEqual([call.attributes['server.address'], call.attributes['server.port']], ['127.0.0.1', Number(new URL(billing.baseUrl).port)], 'the selected interface URL');
      assert.equal(call.attributes['a2a.protocol.version'], '0.3');
      assert.equal(call.attributes['a2a_discovery.agent.local_name'], 'billing_agent');
      const turnSpan = ofTrace.find((x) => x.name === 'a2a_discovery.chat.turn')!;
      assert.equal(turnSpan.attributes['a2a_discovery.snapshot.digest'], call.attributes['a2a_discovery.snapshot.digest'], 'the call carries the digest the session is pinned to');
      assert.match(String(turnSpan.attributes['a2a_discovery.snapshot.digest']), /^[0-9a-f]{64}$/);

      // Discovery: the first cycle (a trace of its own) fetched the card, with its cache decision.
      const cycles = spans.filter((x) => x.name === 'a2a_discovery.cycle');
      assert.ok(cycles.length >= 1 && cycles.every((x) => x.parentSpanId === ''), 'each cycle is a root span');
      const fetches = spans.filter((x) => x.name === 'a2a_discovery.card.fetch');
      const first = fetches.find((x) => x.attributes['a2a_discovery.cache.decision'] === 'changed');
      assert.ok(first, JSON.stringify(fetches.map((x) => x.attributes)));
      assert.ok(ancestors(first).includes('a2a_discovery.cycle'), 'the fetch is a step of a cycle');
      assert.equal(first.kind, 3);
      assert.equal(first.attributes['http.response.status_code'], 200);
      assert.match(String(first.attributes['url.full']), new RegExp(`^${new URL(billing.baseUrl).origin}/`));
      assert.equal(spans.filter((x) => x.traceId === UNSAMPLED_TRACE).length, 0);
      assert.ok(spans.some((x) => x.name === 'GET /api/snapshot' && x.attributes['url.path'] === '/api/snapshot'));

      // Metrics: the same definitions as /metrics, exported at the stop (OTEL_METRIC_EXPORT_INTERVAL not reached).
      const metricNames = metricsOf(receiver.received);
      for (const name of ['a2a_discovery.card_fetches', 'a2a_discovery.snapshot_publications']) assert.ok(metricNames.has(name), `${name} exported: ${[...metricNames].join(', ')}`);
      assert.ok(receiver.received.filter((r) => r.path === '/v1/metrics').every((r) => r.headers['x-collector-key'] === COLLECTOR_KEY));

      const exported = receiver.received.map((r) => r.raw).join('\n');
      for (const [what, secret] of Object.entries({ ADMIN_TOKEN, PEER_TOKEN, COLLECTOR_KEY, sessionSecret: sessionSecret!, oidcBearer: bearer!, queryValue: 'query-value-91d3' })) {
        assert.ok(!exported.includes(secret), `${what} is exported nowhere`);
      }
      assert.doesNotMatch(exported, /"(authorization|cookie|x-session-secret)"/i, 'no header is recorded');
    } finally {
      await receiver.close();
    }
  });

  test('without OTEL_EXPORTER_OTLP_ENDPOINT, or with OTEL_SDK_DISABLED=true: nothing is sent, no trace is continued', async () => {
    const receiver = await startReceiver();
    try {
      const cases: Array<Record<string, string>> = [{ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true', OTEL_BSP_SCHEDULE_DELAY: '10' }];
      for (const vars of cases) {
        const s = await serve(configFile, { ...secrets, ...vars });
        try {
          await ready(s);
          const res = await chat(s.url, { message: 'Invoice 12?' }, { authorization: `Bearer ${ADMIN_TOKEN}`, traceparent: `00-${TRACE}-${PARENT}-01` });
          assert.equal(res.status, 200);
          assert.equal(((await res.json()) as { traceId: unknown }).traceId, null, JSON.stringify(vars));
          assert.equal(res.headers.get('traceresponse'), null);
        } finally {
          assert.deepEqual(await s.stop(), { code: 0, signal: null }, s.output());
        }
      }
      assert.deepEqual(receiver.received, [], 'the receiver saw no request');
    } finally {
      await receiver.close();
    }
  });

  test('a malformed endpoint stops the start with a message naming the variable', async () => {
    const run = await runCli(['serve', '--config', configFile, '--port', '0'], { env: envWith({ ...secrets, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector.internal:4318' }) });
    assert.equal(run.code, 1, run.stderr);
    assert.match(run.stderr, /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/m);
  });
});
