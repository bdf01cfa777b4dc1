/**
 * One metric definition, two outputs: after real discovery (two loopback A2A peers fetched,
 * revalidated, a snapshot published, a chat turn pinning a session), the OpenTelemetry metrics a
 * real SDK MeterProvider collects carry the same series and values as the Prometheus scrape of
 * `/metrics`, once converted by the documented mapping (docs/observability.md "Metrics": dots to
 * underscores, `_seconds` for unit `s`, `_total` for a monotonic sum). Without a MeterProvider the
 * OpenTelemetry side is a no-op and `/metrics` is unchanged.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { metrics } from '@opentelemetry/api';
import { AggregationTemporality, DataPointType, MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import type { Histogram, MetricData } from '@opentelemetry/sdk-metrics';
import type { TwoAgentService } from '../helpers/two-agent-service.js';
import { startTwoAgentService } from '../helpers/two-agent-service.js';
import { waitFor } from '../helpers/wait-for.js';

/** A reader the test collects from by hand (no timer, no exporter). */
class ManualReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** `name{a="x",b="y"}` → value: one line per series, labels sorted. */
type Series = Map<string, number>;

function key(name: string, labels: Readonly<Record<string, unknown>>): string {
  const l = Object.entries(labels)
    .map(([k, v]) => [k, String(v)] as const)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  return `${name}{${l}}`;
}

/** The Prometheus text exposition, parsed (the values of this service never need escapes). */
function parseProm(text: string): Series {
  const out: Series = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (m[2] ?? '').match(/[a-zA-Z_][a-zA-Z0-9_]*="[^"]*"/g) ?? []) {
      const eq = pair.indexOf('=');
      labels[pair.slice(0, eq)] = pair.slice(eq + 2, -1);
    }
    out.set(key(m[1]!, labels), Number(m[3]));
  }
  return out;
}

/** The OpenTelemetry → Prometheus name of an instrument (the compatibility spec's rules we rely on). */
function promName(metric: MetricData): string {
  let name = metric.descriptor.name.replace(/[^a-zA-Z0-9_:]/g, '_');
  if (metric.descriptor.unit === 's' && !name.endsWith('_seconds')) name += '_seconds';
  if (metric.dataPointType === DataPointType.SUM && metric.isMonotonic && !name.endsWith('_total')) name += '_total';
  return name;
}

/** The OpenTelemetry metrics as the Prometheus series they export to (histograms: cumulative `le` buckets, `_sum`, `_count`). */
function fromOtel(all: readonly MetricData[]): { series: Series; help: Map<string, string> } {
  const series: Series = new Map();
  const help = new Map<string, string>();
  for (const metric of all) {
    const name = promName(metric);
    help.set(name, metric.descriptor.description);
    assert.equal(metric.aggregationTemporality, AggregationTemporality.CUMULATIVE);
    for (const point of metric.dataPoints) {
      if (metric.dataPointType === DataPointType.HISTOGRAM) {
        const h = point.value as Histogram;
        let cumulative = 0;
        h.buckets.boundaries.forEach((le, i) => {
          cumulative += h.buckets.counts[i]!;
          series.set(key(`${name}_bucket`, { ...point.attributes, le }), cumulative);
        });
        series.set(key(`${name}_bucket`, { ...point.attributes, le: '+Inf' }), h.count);
        series.set(key(`${name}_sum`, point.attributes), h.sum ?? 0);
        series.set(key(`${name}_count`, point.attributes), h.count);
      } else {
        series.set(key(name, point.attributes), point.value as number);
      }
    }
  }
  return { series, help };
}

let reader: ManualReader;
let provider: MeterProvider;
let svc: TwoAgentService;

before(async () => {
  reader = new ManualReader();
  provider = new MeterProvider({ readers: [reader] });
  // Registered before the service starts: its instruments come from this provider's meter.
  metrics.setGlobalMeterProvider(provider);
  svc = await startTwoAgentService();
});

after(async () => {
  await svc?.close();
  metrics.disable();
  await provider.shutdown();
});

test('after real discovery and a chat turn, the OpenTelemetry metrics equal the Prometheus scrape, series by series', async () => {
  const { service } = svc;
  // The first cycle fetched both cards (changed); a second one revalidates them.
  assert.ok(service.loop.current(), 'a snapshot is published');
  await service.loop.refreshNow();
  const turn = await service.sessions.run('s-metrics', 'Where is my invoice?');
  assert.equal(turn.author, 'billing_agent', 'the turn reached the billing peer');

  // The registry index follows a publish asynchronously: wait until it holds both admitted cards,
  // or the scrape and the collection below could read it on either side of its update.
  const text = await waitFor(async () => {
    const body = await (await fetch(`${service.url}/metrics`)).text();
    return /^a2a_discovery_registry_entries 2$/m.test(body) ? body : undefined;
  }, 'the registry index to hold both cards', 10_000);
  const { resourceMetrics, errors } = await reader.collect();
  assert.deepEqual(errors, []);
  const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'a2a-discovery');
  assert.ok(scope, 'the instruments are in the a2a-discovery scope');

  const prom = parseProm(text);
  const otel = fromOtel(scope.metrics);
  // What real discovery produced, so the comparison is not one of zeros.
  const fetched = [...prom].filter(([k]) => k.startsWith('a2a_discovery_card_fetches_total{')).reduce((n, [, v]) => n + v, 0);
  assert.ok(fetched >= 2, `card fetches counted: ${fetched}`);
  assert.ok((prom.get('a2a_discovery_card_fetch_duration_seconds_count{}') ?? 0) >= 2, 'fetch durations observed');
  assert.equal(prom.get('a2a_discovery_session_events_total{event="pinned"}'), 1);
  assert.equal(prom.get('a2a_discovery_pinned_sessions{}'), 1);
  assert.ok((prom.get('a2a_discovery_snapshot_version{}') ?? 0) >= 1);
  // The lookalike index holds the two admitted agents: what its lists reserve, as the loop reads it.
  assert.equal(prom.get('a2a_discovery_lookalike_index_bytes{}'), service.loop.lookalikeBytes);

  // Every Prometheus series has its OpenTelemetry twin with the same value, and none more. The one
  // exception is documented: a label-less Prometheus gauge always shows a value (0), while the
  // OpenTelemetry routing accuracy is absent when routing is not evaluated (it is not here).
  const onlyProm = new Set(['a2a_discovery_routing_accuracy{}']);
  for (const [k, v] of prom) {
    if (onlyProm.has(k)) {
      assert.equal(v, 0, k);
      assert.equal(otel.series.has(k), false, `${k}: absent in OpenTelemetry`);
      continue;
    }
    assert.ok(otel.series.has(k), `${k} (${v}) exported by OpenTelemetry`);
    assert.ok(Math.abs(otel.series.get(k)! - v) < 1e-9, `${k}: Prometheus ${v}, OpenTelemetry ${otel.series.get(k)}`);
  }
  for (const k of otel.series.keys()) assert.ok(prom.has(k), `${k}: OpenTelemetry only`);

  // The same help text (a labelled counter nothing counted yet has no series in either output, and
  // the SDK leaves such an instrument out), and the OpenTelemetry names in our namespace without
  // the Prometheus suffixes.
  let helps = 0;
  for (const m of text.matchAll(/^# HELP (\S+) (.*)$/gm)) {
    if (!otel.help.has(m[1]!)) continue;
    assert.equal(otel.help.get(m[1]!), m[2]!.replace(/\\n/g, '\n').replace(/\\\\/g, '\\'), `${m[1]}: help`);
    helps++;
  }
  assert.equal(helps, otel.help.size, 'every OpenTelemetry metric is on /metrics');
  assert.ok(helps >= 25, `${helps} metrics compared`);
  const names = scope.metrics.map((m) => m.descriptor.name);
  assert.ok(names.includes('a2a_discovery.card_fetches'), 'a counter has no _total');
  assert.ok(names.includes('a2a_discovery.card_fetch_duration'), 'seconds are a unit, not a suffix');
  assert.equal(scope.metrics.find((m) => m.descriptor.name === 'a2a_discovery.card_fetch_duration')?.descriptor.unit, 's');
  assert.ok(!names.some((n) => n.endsWith('_total') || n.endsWith('_seconds')), names.join(', '));

  // docs/observability.md lists each with both names.
  const doc = await readFile(new URL('../../docs/observability.md', import.meta.url), 'utf8');
  for (const m of scope.metrics) assert.ok(doc.includes(`| \`${promName(m)}\` | \`${m.descriptor.name}\` |`), `docs/observability.md lists ${promName(m)} as ${m.descriptor.name}`);
});
