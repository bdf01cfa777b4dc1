/**
 * Telemetry: spans through the OpenTelemetry API (a no-op without it), their names and attribute
 * keys, and the rules every attribute follows. See docs/observability.md.
 *
 * @module
 */
export { withSpan, activeTraceIds, withIncomingTraceContext, INSTRUMENTATION_SCOPE } from './otel.js';
export type { SpanScope } from './otel.js';
export { SPAN, ATTR, spanUrl, spanError } from './attributes.js';
