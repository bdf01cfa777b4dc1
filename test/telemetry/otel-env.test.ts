/**
 * The service's `OTEL_*` environment (packages/service/src/telemetry/telemetry.ts): what turns
 * exporting on, the URLs per signal, headers, resource, sampler and interval, and a clear refusal
 * naming the variable of every malformed value; and the stop's bound when the collector hangs.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { trace } from '@opentelemetry/api';
import { readTelemetryEnv, startTelemetry } from '../../packages/service/src/telemetry/telemetry.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { withSpan } from '../../packages/core/src/telemetry/index.js';

function refused(env: Record<string, string>, variable: string, message: RegExp): void {
  assert.throws(
    () => readTelemetryEnv(env),
    (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID' && err.message.startsWith(`${variable} `) && message.test(err.message),
    `${JSON.stringify(env)} is refused, naming ${variable}`,
  );
}

describe('OTEL_* environment of the service', () => {
  test('off without an endpoint, and with OTEL_SDK_DISABLED=true', () => {
    assert.equal(readTelemetryEnv({}), undefined);
    assert.equal(readTelemetryEnv({ OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'always_on' }), undefined);
    assert.equal(readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }), undefined);
    assert.equal(readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none', OTEL_METRICS_EXPORTER: 'none' }), undefined);
    // A malformed value of a disabled SDK does not matter.
    assert.equal(readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url', OTEL_SDK_DISABLED: 'TRUE' }), undefined);
  });

  test('the base endpoint gets /v1/traces and /v1/metrics; a signal\'s own endpoint is used as is', () => {
    const base = readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })!;
    assert.equal(base.tracesUrl, 'http://collector:4318/v1/traces');
    assert.equal(base.metricsUrl, 'http://collector:4318/v1/metrics');
    const prefixed = readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/otlp/' })!;
    assert.equal(prefixed.tracesUrl, 'https://otel.example.com/otlp/v1/traces');
    const own = readTelemetryEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:9000/custom' })!;
    assert.equal(own.tracesUrl, 'http://traces:9000/custom');
    assert.equal(own.metricsUrl, undefined, 'only traces asked for');
    const mixed = readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://m:4318/v1/metrics', OTEL_TRACES_EXPORTER: 'none' })!;
    assert.deepEqual([mixed.tracesUrl, mixed.metricsUrl], [undefined, 'http://m:4318/v1/metrics']);
  });

  test('defaults: service name a2a-discovery, parentbased_always_on, ratio 1, metrics every 60 s', () => {
    const s = readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' })!;
    assert.deepEqual([s.serviceName, s.sampler, s.samplerRatio, s.metricIntervalMs], ['a2a-discovery', 'parentbased_always_on', 1, 60_000]);
    assert.deepEqual([s.tracesHeaders, s.resourceAttributes], [{}, {}]);
  });

  test('headers, resource attributes (percent-decoded), service name, sampler and interval', () => {
    const s = readTelemetryEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-api-key=abc%3D%3D, x-tenant=ops',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=traces',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=prod,service.name=from-resource,team=a%20b',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
      OTEL_METRIC_EXPORT_INTERVAL: '15000',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    })!;
    assert.deepEqual(s.tracesHeaders, { 'x-api-key': 'abc==', 'x-tenant': 'traces' });
    assert.deepEqual(s.metricsHeaders, { 'x-api-key': 'abc==', 'x-tenant': 'ops' });
    assert.equal(s.resourceAttributes.team, 'a b');
    assert.equal(s.serviceName, 'from-resource', 'service.name of OTEL_RESOURCE_ATTRIBUTES without OTEL_SERVICE_NAME');
    assert.equal(readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://h:1', OTEL_RESOURCE_ATTRIBUTES: 'service.name=r', OTEL_SERVICE_NAME: 'named' })!.serviceName, 'named');
    assert.deepEqual([s.sampler, s.samplerRatio, s.metricIntervalMs], ['parentbased_traceidratio', 0.25, 15_000]);
  });

  test('every malformed value is refused at start, naming its variable', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318 ' }, 'OTEL_EXPORTER_OTLP_ENDPOINT', /http:\/\/ or https:\/\//);
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' }, 'OTEL_EXPORTER_OTLP_ENDPOINT', /not a URL/);
    refused({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'grpc://collector:4317' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', /not grpc:/);
    refused({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: '//x' }, 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', /not a URL/);
    refused({ ...on, OTEL_TRACES_SAMPLER: 'sometimes' }, 'OTEL_TRACES_SAMPLER', /parentbased_always_on/);
    refused({ ...on, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG', /between 0 and 1/);
    refused({ ...on, OTEL_TRACES_SAMPLER_ARG: 'half' }, 'OTEL_TRACES_SAMPLER_ARG', /between 0 and 1/);
    refused({ ...on, OTEL_METRIC_EXPORT_INTERVAL: '-5' }, 'OTEL_METRIC_EXPORT_INTERVAL', /positive/);
    refused({ ...on, OTEL_EXPORTER_OTLP_HEADERS: 'no-equals-sign' }, 'OTEL_EXPORTER_OTLP_HEADERS', /key=value/);
    refused({ ...on, OTEL_EXPORTER_OTLP_HEADERS: 'k=%E0%A4%A' }, 'OTEL_EXPORTER_OTLP_HEADERS', /percent-encoding/);
    refused({ ...on, OTEL_RESOURCE_ATTRIBUTES: '=x' }, 'OTEL_RESOURCE_ATTRIBUTES', /key=value/);
    // The installed exporters send JSON only: protobuf or gRPC is refused rather than sent as JSON.
    refused({ ...on, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, 'OTEL_EXPORTER_OTLP_PROTOCOL', /http\/json/);
    refused({ ...on, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }, 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', /http\/json/);
    refused({ ...on, OTEL_TRACES_EXPORTER: 'zipkin' }, 'OTEL_TRACES_EXPORTER', /otlp or none/);
  });

  test('a refusal does not echo the endpoint (it may carry a credential)', () => {
    try {
      readTelemetryEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://user:hunter2@collector' });
      assert.fail('refused');
    } catch (err) {
      assert.ok(isDiscoveryError(err));
      assert.doesNotMatch(err.message, /hunter2/);
    }
  });
});

describe('startTelemetry', () => {
  test('off: nothing registered', async () => {
    assert.equal(await startTelemetry({}), undefined);
    assert.equal(trace.getTracerProvider().getTracer('x').startSpan('s').isRecording(), false);
  });

  test('the stop flushes within its bound even when the collector never answers', { timeout: 60_000 }, async () => {
    // A collector that takes the request and never answers; the exporter's own deadline is 10 minutes.
    const requests: string[] = [];
    const hanging = http.createServer((req) => requests.push(req.url ?? ''));
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const saved = process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
    process.env.OTEL_EXPORTER_OTLP_TIMEOUT = '600000';
    try {
      const telemetry = await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}`, OTEL_METRICS_EXPORTER: 'none' });
      assert.ok(telemetry);
      withSpan('a2a_discovery.test', {}, (span) => assert.equal(span.recording, true));
      await telemetry.shutdown(500);
      assert.deepEqual(requests, ['/v1/traces'], 'the buffered span was sent at the stop');
      assert.equal(trace.getTracerProvider().getTracer('x').startSpan('s').isRecording(), false, 'unregistered after the stop');
    } finally {
      if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_TIMEOUT;
      else process.env.OTEL_EXPORTER_OTLP_TIMEOUT = saved;
      hanging.closeAllConnections();
      hanging.close();
    }
  });
});
