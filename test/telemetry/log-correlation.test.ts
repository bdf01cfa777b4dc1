/**
 * Logs correlated with traces: a line the service's logger writes inside a sampled span carries
 * that span's `trace_id` and `span_id` (its child loggers' lines too, and the lines it writes for
 * discovery events emitted in the span); a line outside any span, or inside an unsampled one,
 * carries neither. A real OpenTelemetry SDK records the spans.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { context, propagation, trace } from '@opentelemetry/api';
import { AlwaysOffSampler, InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { EventStream } from '../../packages/core/src/index.js';
import { withSpan } from '../../packages/core/src/telemetry/index.js';
import { createLogger, logEvents } from '../../packages/service/src/telemetry/logger.js';

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

/** A logger writing JSON lines into an array. */
function capture(): { log: ReturnType<typeof createLogger>; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: 'debug', destination, pretty: false }), lines };
}

/** Lets the destination stream take what pino wrote. */
const tick = () => new Promise((r) => setTimeout(r, 10));

test('a line inside a span carries its trace_id and span_id; outside, neither', async () => {
  const { log, lines } = capture();
  log.info('before any span');
  const ids = await withSpan('test.outer', {}, async (span) => {
    log.info('inside, at once');
    await tick();
    log.child({ component: 'adk' }).debug('inside, from a child logger after an await');
    return span.ids;
  });
  log.info('after the span');
  await tick();

  assert.ok(ids, 'the span is recorded');
  const [beforeLine, inside, child, afterLine] = lines;
  assert.equal(lines.length, 4);
  for (const l of [inside, child]) {
    assert.equal(l?.['trace_id'], ids.traceId, `${String(l?.['msg'])}: trace_id`);
    assert.equal(l?.['span_id'], ids.spanId, `${String(l?.['msg'])}: span_id`);
  }
  for (const l of [beforeLine, afterLine]) {
    assert.equal('trace_id' in (l ?? {}), false, `${String(l?.['msg'])}: no trace_id`);
    assert.equal('span_id' in (l ?? {}), false, `${String(l?.['msg'])}: no span_id`);
  }
  const exported = exporter.getFinishedSpans().find((s) => s.name === 'test.outer');
  assert.equal(exported?.spanContext().traceId, ids.traceId, 'the ids are the exported span\'s');
});

test('a nested span: the line names the innermost span, in the same trace', async () => {
  const { log, lines } = capture();
  const [outer, inner] = await withSpan('test.parent', {}, (parent) =>
    withSpan('test.child', {}, async (child) => {
      log.warn('in the child');
      return [parent.ids, child.ids] as const;
    }),
  );
  await tick();
  assert.ok(outer && inner);
  assert.equal(lines[0]?.['trace_id'], outer.traceId);
  assert.equal(lines[0]?.['span_id'], inner.spanId);
});

test('the lines the service writes for discovery events emitted in a span carry the span (and the event the same ids)', async () => {
  const { log, lines } = capture();
  const events = new EventStream();
  const off = logEvents(events, log);
  const [event, ids] = withSpan('test.cycle', { root: true }, (span) => [
    events.emit({ type: 'snapshot.published', version: 3, digest: 'd'.repeat(64), agents: ['billing_agent'] }),
    span.ids,
  ] as const);
  events.emit({ type: 'health.changed', endpoint: 'https://a.example', from: 'healthy', to: 'degraded', failures: 2, successes: 0 });
  off();
  await tick();
  assert.ok(ids);
  const published = lines.find((l) => l['msg'] === 'snapshot published');
  assert.equal(published?.['trace_id'], ids.traceId);
  assert.equal(published?.['span_id'], ids.spanId);
  assert.equal(event.traceId, ids.traceId, 'the journaled event names the same trace');
  const outside = lines.find((l) => l['msg'] === 'health changed');
  assert.ok(outside);
  assert.equal('trace_id' in outside, false);
});

test('an unsampled span: no ids on the line (they would lead nowhere)', async () => {
  const off = new NodeTracerProvider({ sampler: new AlwaysOffSampler() });
  const { log, lines } = capture();
  off.getTracer('t').startActiveSpan('unsampled', (span) => {
    log.info('inside an unsampled span');
    span.end();
  });
  await tick();
  await off.shutdown();
  assert.equal(lines.length, 1);
  assert.equal('trace_id' in lines[0]!, false);
});
