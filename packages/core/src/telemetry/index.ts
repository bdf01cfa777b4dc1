/**
 * Telemetry: spans through the OpenTelemetry API (a no-op without it), their names and attribute
 * keys, and the rules every attribute follows. See docs/observability.md.
 *
 * @module
 */
export { withSpan, activeTraceIds, injectTraceContext, withIncomingTraceContext, telemetryAvailable, INSTRUMENTATION_SCOPE } from './otel.js';
export type { SpanScope, SpanOptions, SpanAttributes, SpanAttributeValue, SpanKindName, TraceIds } from './otel.js';
export { SPAN, ATTR, spanUrl, spanText, serverOf, spanError } from './attributes.js';
