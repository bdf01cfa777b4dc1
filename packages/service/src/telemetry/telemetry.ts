/**
 * The service's OpenTelemetry SDK, started from the standard `OTEL_*` environment variables:
 * traces (NodeTracerProvider, BatchSpanProcessor, OTLP/HTTP exporter), metrics (MeterProvider,
 * PeriodicExportingMetricReader, OTLP/HTTP exporter) and the W3C trace-context propagator.
 *
 * `a2a-discovery serve` and `demo` call {@link startTelemetry} before the service starts; an
 * application that embeds `startService` calls it itself (the library never starts an SDK).
 * Without an endpoint (or with `OTEL_SDK_DISABLED=true`) nothing is registered and nothing is
 * exported: the library's spans stay no-ops. A malformed value is refused at start, naming its
 * variable. docs/observability.md "The service: exporting with `OTEL_*`".
 *
 * The exporters send with the SDK's own `node:http` transport, not through the guarded
 * connection: the collector is the operator's own infrastructure named in the environment, not a
 * peer discovered from a card.
 *
 * @module
 */
import { diag, DiagLogLevel, metrics, propagation, trace, context } from '@opentelemetry/api';
import { DiscoveryError } from 'a2a-discovery';
import type { Logger } from './logger.js';
import { VERSION } from '../version.js';

/** `OTEL_SERVICE_NAME` when unset. */
const DEFAULT_SERVICE_NAME = 'a2a-discovery';

type Env = Readonly<Record<string, string | undefined>>;

/** The sampler named by `OTEL_TRACES_SAMPLER` (the specification's names). */
type SamplerName = 'always_on' | 'always_off' | 'traceidratio' | 'parentbased_always_on' | 'parentbased_always_off' | 'parentbased_traceidratio';
const SAMPLERS: readonly SamplerName[] = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'];

/** What the environment asks for; {@link readTelemetryEnv} returns it, {@link startTelemetry} starts it. */
export interface TelemetrySettings {
  /** The OTLP/HTTP traces URL (`…/v1/traces`), or undefined: no traces exported. */
  readonly tracesUrl: string | undefined;
  /** The OTLP/HTTP metrics URL (`…/v1/metrics`), or undefined: no metrics exported. */
  readonly metricsUrl: string | undefined;
  /** Headers sent to the collector (`OTEL_EXPORTER_OTLP_HEADERS`): may hold a credential, never logged. */
  readonly tracesHeaders: Readonly<Record<string, string>>;
  readonly metricsHeaders: Readonly<Record<string, string>>;
  readonly serviceName: string;
  /** `OTEL_RESOURCE_ATTRIBUTES`, decoded. */
  readonly resourceAttributes: Readonly<Record<string, string>>;
  readonly sampler: SamplerName;
  /** The ratio of the `traceidratio` samplers, 0..1 (`OTEL_TRACES_SAMPLER_ARG`, default 1). */
  readonly samplerRatio: number;
  /** `OTEL_METRIC_EXPORT_INTERVAL`, default 60 000 ms. */
  readonly metricIntervalMs: number;
}

function refuse(variable: string, message: string): never {
  throw new DiscoveryError('ERR_CONFIG_INVALID', `${variable} ${message}`, { path: variable });
}

function value(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

/** An absolute http(s) URL, or a refusal naming the variable (the value is not echoed: it may carry a credential). */
function endpointUrl(variable: string, raw: string): URL {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    refuse(variable, 'is not a URL: it must be the collector\'s absolute http:// or https:// URL, for example http://127.0.0.1:4318');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') refuse(variable, `must be an http:// or https:// URL (OTLP/HTTP), not ${u.protocol}`);
  return u;
}

/** The signal's URL: its own variable as is, else the base endpoint with `v1/<signal>` appended (the specification's rule). */
function signalUrl(env: Env, signal: 'TRACES' | 'METRICS'): string | undefined {
  const own = `OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`;
  const specific = value(env, own);
  if (specific !== undefined) return endpointUrl(own, specific).href;
  const base = value(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (base === undefined) return undefined;
  const u = endpointUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base);
  return `${u.href.endsWith('/') ? u.href : `${u.href}/`}v1/${signal.toLowerCase()}`;
}

/** `key1=value1,key2=value2`, values percent-decoded (the W3C Baggage octets the specification uses). */
function keyValues(variable: string, raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (raw === undefined) return out;
  for (const item of raw.split(',')) {
    if (item.trim() === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) refuse(variable, 'must be a list of key=value pairs separated by commas');
    const key = item.slice(0, eq).trim();
    let v: string;
    try {
      v = decodeURIComponent(item.slice(eq + 1).trim());
    } catch {
      refuse(variable, `has a value that is not valid percent-encoding (key ${key})`);
    }
    if (key === '') refuse(variable, 'has an empty key');
    out[key] = v;
  }
  return out;
}

function ratio(env: Env): number {
  const raw = value(env, 'OTEL_TRACES_SAMPLER_ARG');
  if (raw === undefined) return 1;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1) refuse('OTEL_TRACES_SAMPLER_ARG', 'must be a ratio between 0 and 1');
  return n;
}

function exporterOn(env: Env, variable: string): boolean {
  const v = value(env, variable);
  if (v === undefined || v === 'otlp') return true;
  if (v === 'none') return false;
  return refuse(variable, `must be otlp or none: this service exports OTLP/HTTP only (not ${v})`);
}

/**
 * Reads the `OTEL_*` variables. Undefined when telemetry is off: `OTEL_SDK_DISABLED=true`, or no
 * endpoint for either signal. Throws `ERR_CONFIG_INVALID` (its `path` the variable) for a
 * malformed value.
 */
export function readTelemetryEnv(env: Env = process.env): TelemetrySettings | undefined {
  if (value(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const tracesUrl = exporterOn(env, 'OTEL_TRACES_EXPORTER') ? signalUrl(env, 'TRACES') : undefined;
  const metricsUrl = exporterOn(env, 'OTEL_METRICS_EXPORTER') ? signalUrl(env, 'METRICS') : undefined;
  if (tracesUrl === undefined && metricsUrl === undefined) return undefined;
  for (const variable of ['OTEL_EXPORTER_OTLP_PROTOCOL', 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_METRICS_PROTOCOL']) {
    const p = value(env, variable);
    // The installed exporters (exporter-*-otlp-http 0.205) send OTLP/HTTP JSON only. JSON is a
    // MAY for receivers (the Collector and Jaeger accept it, some vendors' endpoints do not), so a
    // request for protobuf is refused rather than answered with JSON.
    if (p !== undefined && p !== 'http/json') refuse(variable, `must be http/json: this service exports OTLP/HTTP with JSON bodies only (not ${p}); unset it or set http/json`);
  }
  const sampler = (value(env, 'OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on') as SamplerName;
  if (!SAMPLERS.includes(sampler)) refuse('OTEL_TRACES_SAMPLER', `must be one of ${SAMPLERS.join(', ')} (not ${String(sampler)})`);
  const intervalRaw = value(env, 'OTEL_METRIC_EXPORT_INTERVAL');
  const metricIntervalMs = intervalRaw === undefined ? 60_000 : Number(intervalRaw);
  if (!Number.isInteger(metricIntervalMs) || metricIntervalMs <= 0) refuse('OTEL_METRIC_EXPORT_INTERVAL', 'must be a positive whole number of milliseconds');
  const headers = keyValues('OTEL_EXPORTER_OTLP_HEADERS', value(env, 'OTEL_EXPORTER_OTLP_HEADERS'));
  const resourceAttributes = keyValues('OTEL_RESOURCE_ATTRIBUTES', value(env, 'OTEL_RESOURCE_ATTRIBUTES'));
  return {
    tracesUrl,
    metricsUrl,
    tracesHeaders: { ...headers, ...keyValues('OTEL_EXPORTER_OTLP_TRACES_HEADERS', value(env, 'OTEL_EXPORTER_OTLP_TRACES_HEADERS')) },
    metricsHeaders: { ...headers, ...keyValues('OTEL_EXPORTER_OTLP_METRICS_HEADERS', value(env, 'OTEL_EXPORTER_OTLP_METRICS_HEADERS')) },
    // OTEL_SERVICE_NAME wins over service.name in OTEL_RESOURCE_ATTRIBUTES (the specification's rule).
    serviceName: value(env, 'OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? DEFAULT_SERVICE_NAME,
    resourceAttributes,
    sampler,
    samplerRatio: ratio(env),
    metricIntervalMs,
  };
}

/** A started SDK. */
export interface Telemetry {
  readonly settings: TelemetrySettings;
  /** What is exported where, for a log line (URLs without user info or query; never the headers). */
  describe(): { traces: string | null; metrics: string | null; serviceName: string; sampler: string };
  /** Flushes what is buffered and stops, within `timeoutMs` (default 5 000): what is not sent by then is dropped. Safe to call twice. */
  shutdown(timeoutMs?: number): Promise<void>;
}

function bare(url: string | undefined): string | null {
  if (url === undefined) return null;
  const u = new URL(url);
  u.username = '';
  u.password = '';
  u.search = '';
  return u.href;
}

/**
 * Starts the SDK the environment asks for and registers it globally (tracer provider, meter
 * provider, context manager, W3C trace-context and baggage propagators). Returns undefined, having
 * registered nothing, when telemetry is off. Throws `ERR_CONFIG_INVALID` naming the variable of a
 * malformed value. The SDK's own warnings (an unreachable collector) go to `logger` when given.
 *
 * @example
 * const telemetry = await startTelemetry(process.env, { logger });
 * const service = await startService(options);
 * // on SIGTERM:
 * await service.close(5_000);
 * await telemetry?.shutdown(5_000);
 */
export async function startTelemetry(env: Env = process.env, options: { logger?: Logger } = {}): Promise<Telemetry | undefined> {
  const settings = readTelemetryEnv(env);
  if (settings === undefined) return undefined;
  // Loaded only when telemetry is on: a service without an endpoint pays nothing for the SDK.
  const [{ NodeTracerProvider, BatchSpanProcessor, AlwaysOnSampler, AlwaysOffSampler, TraceIdRatioBasedSampler, ParentBasedSampler }, { OTLPTraceExporter }, { MeterProvider, PeriodicExportingMetricReader }, { OTLPMetricExporter }, { defaultResource, resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/sdk-metrics'),
      import('@opentelemetry/exporter-metrics-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  const resource = defaultResource().merge(resourceFromAttributes({ ...settings.resourceAttributes, 'service.name': settings.serviceName, 'service.version': VERSION }));
  const log = options.logger?.child({ component: 'otel' });
  if (log !== undefined) {
    const text = (args: unknown[]) => args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? a.message : JSON.stringify(a))).join(' ');
    diag.setLogger({ error: (...a) => log.warn(text(a)), warn: (...a) => log.warn(text(a)), info: (...a) => log.debug(text(a)), debug: () => undefined, verbose: () => undefined }, { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  }

  let tracerProvider: InstanceType<typeof NodeTracerProvider> | undefined;
  if (settings.tracesUrl !== undefined) {
    const root =
      settings.sampler === 'always_on' || settings.sampler === 'parentbased_always_on'
        ? new AlwaysOnSampler()
        : settings.sampler === 'always_off' || settings.sampler === 'parentbased_always_off'
          ? new AlwaysOffSampler()
          : new TraceIdRatioBasedSampler(settings.samplerRatio);
    const sampler = settings.sampler.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
    const exporter = new OTLPTraceExporter({ url: settings.tracesUrl, headers: { ...settings.tracesHeaders } });
    tracerProvider = new NodeTracerProvider({ resource, sampler, spanProcessors: [new BatchSpanProcessor(exporter)] });
    // The default propagators: W3C trace context (traceparent, tracestate) and W3C baggage.
    tracerProvider.register();
  }
  let meterProvider: InstanceType<typeof MeterProvider> | undefined;
  if (settings.metricsUrl !== undefined) {
    const exporter = new OTLPMetricExporter({ url: settings.metricsUrl, headers: { ...settings.metricsHeaders } });
    const reader = new PeriodicExportingMetricReader({
      // exporter-metrics-otlp-http 0.205 is typed against sdk-metrics 2.1; the interface is the same.
      exporter: exporter as unknown as ConstructorParameters<typeof PeriodicExportingMetricReader>[0]['exporter'],
      exportIntervalMillis: settings.metricIntervalMs,
      exportTimeoutMillis: Math.min(30_000, settings.metricIntervalMs),
    });
    meterProvider = new MeterProvider({ resource, readers: [reader] });
    metrics.setGlobalMeterProvider(meterProvider);
  }
  log?.info({ traces: bare(settings.tracesUrl), metrics: bare(settings.metricsUrl), serviceName: settings.serviceName, sampler: settings.sampler }, 'exporting OpenTelemetry over OTLP/HTTP');

  let stopping: Promise<void> | undefined;
  return {
    settings,
    describe: () => ({ traces: bare(settings.tracesUrl), metrics: bare(settings.metricsUrl), serviceName: settings.serviceName, sampler: settings.sampler }),
    shutdown(timeoutMs = 5_000) {
      stopping ??= (async () => {
        // shutdown() flushes: the batch processor exports its queue, the reader its last collection.
        const flushed = Promise.allSettled([tracerProvider?.shutdown(), meterProvider?.shutdown()]);
        let timer: NodeJS.Timeout | undefined;
        const bound = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), timeoutMs)));
        const outcome = await Promise.race([flushed, bound]);
        clearTimeout(timer);
        if (outcome === 'timeout') log?.warn({ timeoutMs }, 'OpenTelemetry export did not finish in time; the rest is dropped');
        if (tracerProvider !== undefined) {
          trace.disable();
          context.disable();
          propagation.disable();
        }
        if (meterProvider !== undefined) metrics.disable();
        if (log !== undefined) diag.disable();
      })();
      return stopping;
    },
  };
}
