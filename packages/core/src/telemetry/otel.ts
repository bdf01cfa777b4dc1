/**
 * The OpenTelemetry API, when the application has it. `@opentelemetry/api` is an optional peer
 * dependency: without it (or without an SDK registered by the application) every span here is a
 * no-op that costs one branch. The library never installs an SDK; the service does (`serve` with
 * `OTEL_EXPORTER_OTLP_ENDPOINT`).
 *
 * One facade for every span the library and the service start, so that the span names, the
 * attribute rules (no secrets, bounded text: `./attributes.ts`) and error recording live in one
 * place. docs/observability.md lists every span.
 *
 * @module
 */
import type * as OtelApi from '@opentelemetry/api';
import { VERSION } from '../version.js';

// Resolved once at load. A missing optional peer is not an error: telemetry is then off.
const api: typeof OtelApi | undefined = await import('@opentelemetry/api').catch(() => undefined);

/** The instrumentation scope of every span and instrument of this project. */
export const INSTRUMENTATION_SCOPE = 'a2a-discovery';

/** An attribute value as OpenTelemetry accepts it; `undefined` members are left out. */
type SpanAttributeValue = string | number | boolean | readonly string[] | readonly number[];
export type SpanAttributes = Readonly<Record<string, SpanAttributeValue | undefined>>;

/** The span kinds we use. */
type SpanKindName = 'internal' | 'client' | 'server' | 'producer' | 'consumer';

export interface SpanOptions {
  readonly kind?: SpanKindName;
  readonly attributes?: SpanAttributes;
  /** Start a new trace instead of a child of the active span (the discovery loop's cycles). */
  readonly root?: boolean;
  /** Links to other spans (for example the cycle that published the snapshot a turn is pinned to). */
  readonly links?: readonly TraceIds[];
}

/** A trace and span id pair (W3C hex: 32 and 16 characters). */
export interface TraceIds {
  readonly traceId: string;
  readonly spanId: string;
}

/** The span a {@link withSpan} callback is given. Every method is safe when telemetry is off. */
export interface SpanScope {
  /** False when nothing records this span (no SDK, or not sampled): skip computing attributes. */
  readonly recording: boolean;
  /** This span's ids, when it is recorded (for a journal entry or a response to name its trace). */
  readonly ids: TraceIds | undefined;
  set(attributes: SpanAttributes): void;
  /** A timestamped event on the span (for example `cache.decision`). */
  event(name: string, attributes?: SpanAttributes): void;
  /**
   * Marks the span failed: status ERROR with the message, `error.type` (the DiscoveryError code
   * or the error's name, unless `errorType` is given) and an exception event. Does not end it.
   */
  fail(error: unknown, errorType?: string): void;
}

const KINDS: Record<SpanKindName, number> = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 };

const NOOP_SCOPE: SpanScope = {
  recording: false,
  ids: undefined,
  set() {},
  event() {},
  fail() {},
};

/** Whether `@opentelemetry/api` could be loaded (an SDK may still be absent). */
export const telemetryAvailable: boolean = api !== undefined;

let tracerMemo: OtelApi.Tracer | undefined;
/** Set once a tracer provider was found registered: from then on every span goes to the tracer. */
let providerSeen = false;
/**
 * The tracer, or undefined while no tracer provider is registered. The API's tracer then makes
 * a span that records nothing and carries the parent's context unchanged, through a context
 * switch and a promise for each span; a span skipped costs a check instead (issue 43: the card
 * cache's 304 path starts one per refresh).
 */
function tracer(): OtelApi.Tracer | undefined {
  if (api === undefined) return undefined;
  if (!providerSeen) {
    const provider = api.trace.getTracerProvider();
    // The global provider is a proxy until an SDK registers a delegate (a provider set directly
    // is used as it is).
    if (provider instanceof api.ProxyTracerProvider && provider.getDelegateTracer(INSTRUMENTATION_SCOPE, VERSION) === undefined) return undefined;
    providerSeen = true;
  }
  // The global provider is a proxy: a tracer taken before the SDK registers still follows it.
  tracerMemo ??= api.trace.getTracer(INSTRUMENTATION_SCOPE, VERSION);
  return tracerMemo;
}

function clean(attributes: SpanAttributes | undefined): OtelApi.Attributes | undefined {
  if (attributes === undefined) return undefined;
  const out: OtelApi.Attributes = {};
  for (const key in attributes) {
    const v = attributes[key];
    if (v !== undefined) out[key] = v as OtelApi.AttributeValue;
  }
  return out;
}

function scopeOf(span: OtelApi.Span): SpanScope {
  const recording = span.isRecording();
  if (!recording) return NOOP_SCOPE;
  const ctx = span.spanContext();
  return {
    recording,
    ids: { traceId: ctx.traceId, spanId: ctx.spanId },
    set(attributes) {
      const a = clean(attributes);
      if (a !== undefined) span.setAttributes(a);
    },
    event(name, attributes) {
      span.addEvent(name, clean(attributes));
    },
    fail(error, errorType) {
      const err = error instanceof Error ? error : new Error(String(error));
      const code = (error as { code?: unknown } | null)?.code;
      span.setAttribute('error.type', errorType ?? (typeof code === 'string' ? code : err.name));
      span.recordException({ name: err.name, message: err.message });
      span.setStatus({ code: 2, message: err.message });
    },
  };
}

/**
 * Runs `fn` inside a span named `name` (active for everything `fn` awaits, so child spans and
 * log lines see it), ends the span when `fn` settles, and marks it failed when `fn` throws (the
 * error is rethrown unchanged). Without telemetry `fn` runs with a no-op scope.
 *
 * @example
 * const card = await withSpan('a2a_discovery.card.fetch', { kind: 'client', attributes: { 'url.full': spanUrl(url) } },
 *   async (span) => { const r = await fetchIt(); span.set({ 'http.response.status_code': r.status }); return r; });
 */
export function withSpan<T>(name: string, options: SpanOptions, fn: (span: SpanScope) => T): T {
  const t = tracer();
  if (t === undefined) return fn(NOOP_SCOPE);
  const spanOptions: OtelApi.SpanOptions = { kind: KINDS[options.kind ?? 'internal'], attributes: clean(options.attributes), root: options.root };
  if (options.links !== undefined && options.links.length > 0) {
    spanOptions.links = options.links.map((l) => ({ context: { traceId: l.traceId, spanId: l.spanId, traceFlags: 1, isRemote: true } }));
  }
  return t.startActiveSpan(name, spanOptions, (span) => {
    const scope = scopeOf(span);
    let result: T;
    try {
      result = fn(scope);
    } catch (err) {
      scope.fail(err);
      span.end();
      throw err;
    }
    if (result instanceof Promise) {
      return result.then(
        (value: unknown) => {
          span.end();
          return value;
        },
        (err: unknown) => {
          scope.fail(err);
          span.end();
          throw err;
        },
      ) as T;
    }
    span.end();
    return result;
  });
}

/** The ids of the active span when it is sampled (a log line or an event inside it names its trace). */
export function activeTraceIds(): TraceIds | undefined {
  if (api === undefined) return undefined;
  const span = api.trace.getActiveSpan();
  if (span === undefined) return undefined;
  const ctx = span.spanContext();
  // traceFlags bit 0: sampled. An unsampled span's ids lead nowhere.
  if ((ctx.traceFlags & 1) === 0 || !api.isSpanContextValid(ctx)) return undefined;
  return { traceId: ctx.traceId, spanId: ctx.spanId };
}

/**
 * Writes the active context into outgoing request headers (`traceparent`, `tracestate`, through
 * the propagator the application registered: W3C Trace Context by default in the SDK). A no-op
 * without telemetry. Returns the same object.
 */
export function injectTraceContext(headers: Record<string, string>): Record<string, string> {
  if (api === undefined) return headers;
  api.propagation.inject(api.context.active(), headers);
  return headers;
}

/**
 * Runs `fn` in the context carried by incoming request headers (`traceparent`), so a span it
 * starts continues the caller's trace. Without telemetry, or without such a header, `fn` runs as is.
 */
export function withIncomingTraceContext<T>(headers: Readonly<Record<string, string | string[] | undefined>>, fn: () => T): T {
  if (api === undefined || headers['traceparent'] === undefined) return fn();
  const ctx = api.propagation.extract(api.context.active(), headers, {
    get: (carrier, key) => carrier[key],
    keys: (carrier) => Object.keys(carrier),
  });
  return api.context.with(ctx, fn);
}
