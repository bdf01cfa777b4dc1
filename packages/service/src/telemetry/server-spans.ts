/**
 * HTTP server spans for the service's API: one SERVER span per request under `/api/` (and the
 * AI Catalog), named `{method} {route}` after the OpenTelemetry HTTP conventions
 * (`POST /api/chat`), continuing the caller's trace when it sends `traceparent`. The response
 * names the span in a `traceresponse` header (W3C Trace Context Level 2 draft) when it is sampled.
 *
 * What a span records: the method, the route template, the path (never the query), the status.
 * Never a header: no cookie, no authorization, no session secret. The event stream
 * (`/api/stream`) gets one span for opening the connection, none per event.
 *
 * Without an SDK (telemetry off) every span is a no-op.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { ATTR, withIncomingTraceContext, withSpan } from 'a2a-discovery/internal';

/** The route template that answers `c` (`/api/sessions/:id`), or undefined for the catch-all. */
function routeOf(c: Context): string | undefined {
  // Middleware is registered with `use` (method ALL); the first handler matched is the one that answers.
  const path = matchedRoutes(c).find((r) => r.method !== 'ALL')?.path;
  return path === undefined || path === '*' || path === '/*' ? undefined : path;
}

/** A middleware that wraps each request `traced(path)` accepts in a SERVER span. */
export function serverSpans(traced: (path: string) => boolean): MiddlewareHandler {
  return async (c, next) => {
    if (!traced(c.req.path)) return next();
    const method = c.req.method;
    const route = routeOf(c);
    // Only the trace context is taken from the caller: not its baggage.
    const carrier = { traceparent: c.req.header('traceparent'), tracestate: c.req.header('tracestate') };
    await withIncomingTraceContext(carrier, () =>
      withSpan(
        route !== undefined ? `${method} ${route}` : method,
        { kind: 'server', attributes: { [ATTR.httpMethod]: method, [ATTR.httpRoute]: route, [ATTR.urlPath]: c.req.path } },
        async (span) => {
          await next();
          const status = c.res.status;
          span.set({ [ATTR.httpStatus]: status });
          // The HTTP conventions: a server span fails on 5xx only (a 4xx is the caller's error).
          if (status >= 500) span.fail(new Error(`${method} ${route ?? c.req.path} answered ${status}`), String(status));
          if (span.ids !== undefined) {
            try {
              c.res.headers.set('traceresponse', `00-${span.ids.traceId}-${span.ids.spanId}-01`);
            } catch {
              // A response whose headers are immutable (proxied from the leader) goes without it.
            }
          }
        },
      ),
    );
  };
}
