/**
 * The service's HTTP server spans (packages/service/src/telemetry/server-spans.ts) with a real
 * OpenTelemetry SDK and its in-memory exporter: one SERVER span per API request named after its
 * route, continuing the caller's `traceparent`, the `/api/chat` response naming its trace, no
 * query value and no header in any attribute, and nothing at all without an SDK.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { context, propagation, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { TwoAgentService } from '../helpers/two-agent-service.js';
import { startTwoAgentService } from '../helpers/two-agent-service.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';

let svc: TwoAgentService;
before(async () => {
  svc = await startTwoAgentService();
});
after(async () => {
  await svc.close();
});

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('HTTP server spans', () => {
  test('without an SDK: no trace id in the chat response, no traceresponse header', async () => {
    const res = await post(`${svc.service.url}/api/chat`, { message: 'Invoice 12?' }, { traceparent: `00-${TRACE}-${PARENT}-01` });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('traceresponse'), null);
    assert.equal(((await res.json()) as { traceId: unknown }).traceId, null);
  });

  describe('with an SDK', () => {
    const exporter = new InMemorySpanExporter();
    let provider: NodeTracerProvider;
    before(() => {
      provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
      provider.register();
    });
    after(async () => {
      trace.disable();
      context.disable();
      propagation.disable();
      await provider.shutdown();
    });

    test('POST /api/chat: a SERVER span in the caller\'s trace, its id in the response and in traceresponse', async () => {
      exporter.reset();
      const res = await post(`${svc.service.url}/api/chat`, { message: 'Invoice 12?' }, { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: 'vendor=x' });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { traceId: string; reply: string };
      assert.equal(body.traceId, TRACE, 'the turn continues the caller\'s trace');
      const spans = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
      assert.equal(spans.length, 1);
      const span = spans[0]!;
      assert.equal(span.name, 'POST /api/chat');
      assert.equal(span.spanContext().traceId, TRACE);
      assert.equal(span.parentSpanContext?.spanId, PARENT);
      assert.equal(span.parentSpanContext?.isRemote, true);
      assert.deepEqual(span.attributes, { 'http.request.method': 'POST', 'http.route': '/api/chat', 'url.path': '/api/chat', 'http.response.status_code': 200 });
      assert.equal(span.status.code, SpanStatusCode.UNSET);
      assert.equal(res.headers.get('traceresponse'), `00-${TRACE}-${span.spanContext().spanId}-01`);
    });

    test('without traceparent: a new trace; route templates, not ids; no query value', async () => {
      exporter.reset();
      const res = await post(`${svc.service.url}/api/chat`, { message: 'Invoice 13?' });
      const { traceId, sessionId, sessionSecret } = (await res.json()) as { traceId: string; sessionId: string; sessionSecret: string };
      assert.match(traceId, /^[0-9a-f]{32}$/);
      assert.notEqual(traceId, TRACE);
      await fetch(`${svc.service.url}/api/snapshot?token=query-secret-1`);
      const ended = await fetch(`${svc.service.url}/api/sessions/${sessionId}`, { method: 'DELETE', headers: { 'content-type': 'application/json', 'x-session-secret': sessionSecret } });
      assert.equal(ended.status, 200);
      const spans = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
      assert.deepEqual(spans.map((s) => s.name), ['POST /api/chat', 'GET /api/snapshot', 'DELETE /api/sessions/:id']);
      assert.equal(spans[0]!.parentSpanContext, undefined, 'a root span');
      assert.equal(spans[1]!.attributes['url.path'], '/api/snapshot');
      assert.equal(spans[2]!.attributes['http.route'], '/api/sessions/:id');
      const recorded = JSON.stringify(exporter.getFinishedSpans().map((s) => [s.attributes, s.events, s.links]));
      for (const secret of ['query-secret-1', sessionSecret]) assert.ok(!recorded.includes(secret), `${secret} is in no attribute`);
    });

    test('a 4xx is the caller\'s error (status unset); a span per request, not for the dashboard\'s files', async () => {
      exporter.reset();
      const bad = await post(`${svc.service.url}/api/chat`, { nomessage: true });
      assert.equal(bad.status, 400);
      await fetch(`${svc.service.url}/healthz`);
      await fetch(`${svc.service.url}/`);
      const spans = exporter.getFinishedSpans().filter((s) => s.kind === SpanKind.SERVER);
      assert.deepEqual(spans.map((s) => [s.name, s.attributes['http.response.status_code'], s.status.code]), [['POST /api/chat', 400, SpanStatusCode.UNSET]]);
    });

    test('an unsampled caller (traceparent flags 00): nothing recorded, no trace id given back', async () => {
      exporter.reset();
      const res = await post(`${svc.service.url}/api/chat`, { message: 'Invoice 14?' }, { traceparent: `00-${TRACE}-${PARENT}-00` });
      assert.equal(((await res.json()) as { traceId: unknown }).traceId, null);
      assert.equal(exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === TRACE).length, 0);
    });
  });
});
