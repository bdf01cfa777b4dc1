/**
 * The loop's cycle time as the service itself records it: every discovery cycle is a root span,
 * `a2a_discovery.cycle`, with the endpoints it covered, how many were due and how many were cache
 * hits (packages/core/src/telemetry). Neither /metrics nor the event stream carries a cycle's
 * duration, so the benchmark points `serve`'s OTLP/HTTP trace exporter
 * (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) at this loopback receiver and keeps the cycle spans only.
 * The chat turns are sent with an unsampled `traceparent`, so under the default
 * `parentbased_always_on` sampler they are not recorded: the turns pay only for non-recording spans
 * (docs/observability.md "Cost"), the cycles for their recorded ones.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface CycleSpan {
  /** Start, epoch ms. */
  startMs: number;
  durationMs: number;
  endpoints: number;
  due: number;
  cacheHits: number;
}

export interface CycleReceiver {
  /** The traces URL (`…/v1/traces`). */
  tracesUrl: string;
  cycles: CycleSpan[];
  /** Spans received in all (cycles and their children). */
  spans(): number;
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; doubleValue?: number };
type Nanos = string | number | { low: number; high: number } | undefined;

function nanosToMs(v: Nanos): number {
  if (v === undefined) return NaN;
  if (typeof v === 'object') return (v.high * 2 ** 32 + (v.low >>> 0)) / 1e6;
  // A decimal string of nanoseconds since the epoch: too large for a double's integer range, so
  // through BigInt down to microseconds first.
  return typeof v === 'string' ? Number(BigInt(v) / 1000n) / 1000 : v / 1e6;
}

export async function startCycleReceiver(): Promise<CycleReceiver> {
  const cycles: CycleSpan[] = [];
  let spans = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: Array<{ scopeSpans?: Array<{ spans?: Array<{ name?: string; startTimeUnixNano?: Nanos; endTimeUnixNano?: Nanos; attributes?: Array<{ key: string; value: AnyValue }> }> }> }>;
        };
        for (const rs of body.resourceSpans ?? [])
          for (const ss of rs.scopeSpans ?? [])
            for (const s of ss.spans ?? []) {
              spans++;
              if (s.name !== 'a2a_discovery.cycle') continue;
              const attr = (key: string) => Number(s.attributes?.find((a) => a.key === key)?.value.intValue ?? NaN);
              const startMs = nanosToMs(s.startTimeUnixNano);
              cycles.push({
                startMs,
                durationMs: nanosToMs(s.endTimeUnixNano) - startMs,
                endpoints: attr('a2a_discovery.cycle.endpoints'),
                due: attr('a2a_discovery.cycle.due'),
                cacheHits: attr('a2a_discovery.cycle.cache_hits'),
              });
            }
      } catch {
        // Not ours to judge: a malformed export only loses its cycles.
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    tracesUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`,
    cycles,
    spans: () => spans,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
