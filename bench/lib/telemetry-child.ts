/**
 * One side of the telemetry-cost benchmark (bench/lib/telemetry.ts), in a process of its own: the
 * OpenTelemetry API keeps its global provider and context manager for the life of a process, so
 * "no provider", "provider, sampling off" and "provider, sampling on" cannot take turns in one.
 *
 * Registers the mode's provider (none; `ParentBased(AlwaysOff)`; `ParentBased(AlwaysOn)` with a
 * BatchSpanProcessor whose exporter drops the spans: their creation, attributes and queueing are
 * measured, not an export), warms a CardCache over the targets (200s), then times `sweeps`
 * conditional refresh sweeps (every entry due, every answer a 304: one `a2a_discovery.card.fetch`
 * span each) after `warmSweeps` untimed ones. Input as argv[2] (JSON), the result over IPC.
 */
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { assertClean } from './measure.js';
import { cacheSide, type Target } from './sides.js';

export type TelemetryMode = 'no provider' | 'provider, sampling off' | 'provider, sampling on';

export interface TelemetryChildInput {
  mode: TelemetryMode;
  /** The fault-server origins; the targets are endpoints `a0`, `a1`, ... spread round-robin over them (too many for argv as a list). */
  origins: string[];
  targets: number;
  concurrency: number;
  /** Untimed 304 sweeps before the timed ones (the JIT is still settling after the first 200s). */
  warmSweeps: number;
  sweeps: number;
  advanceMs: number;
  limitMs: number;
}

export interface TelemetryChildOutput {
  mode: TelemetryMode;
  /** Client CPU (user + system) per refresh, µs, one figure per timed sweep. */
  cpuUsPerRefresh: number[];
  refreshesPerSecond: number[];
  /** Spans the exporter received per timed refresh (1 with sampling on, else 0). */
  spansPerRefresh: number;
}

const input = JSON.parse(process.argv[2] ?? '{}') as TelemetryChildInput;

/** Counts and drops what it is given. */
class DroppingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: Parameters<SpanExporter['export']>[1]): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

const exporter = new DroppingExporter();
let provider: NodeTracerProvider | undefined;
if (input.mode !== 'no provider') {
  const root = input.mode === 'provider, sampling on' ? new AlwaysOnSampler() : new AlwaysOffSampler();
  provider = new NodeTracerProvider({ sampler: new ParentBasedSampler({ root }), spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register();
}

const targets: Target[] = [];
for (let j = 0; targets.length < input.targets; j++) {
  for (const o of input.origins) if (targets.length < input.targets) targets.push({ baseUrl: `${o}/a${j}/`, cardUrl: `${o}/a${j}/.well-known/agent-card.json` });
}
const policy = HostPolicy.from({ allow: input.origins, allowLoopback: true });
const side = cacheSide(input.mode, targets, { policy, concurrency: input.concurrency, connectionsPerOrigin: 1, advanceMs: input.advanceMs });
const cpuUsPerRefresh: number[] = [];
const refreshesPerSecond: number[] = [];
let spansBefore: number;
try {
  assertClean(`${input.mode} warm-up`, await side.warm(performance.now() + input.limitMs), input.targets);
  for (let i = 0; i < input.warmSweeps; i++) {
    await side.prepare();
    assertClean(`${input.mode} warm sweep ${i + 1}`, await side.sweep(performance.now() + input.limitMs), input.targets);
  }
  await provider?.forceFlush();
  spansBefore = exporter.spans;
  for (let i = 0; i < input.sweeps; i++) {
    await side.prepare();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const counts = await side.sweep(t0 + input.limitMs);
    const seconds = (performance.now() - t0) / 1000;
    const c1 = process.cpuUsage(c0);
    assertClean(`${input.mode} sweep ${i + 1}`, counts, input.targets);
    cpuUsPerRefresh.push((c1.user + c1.system) / input.targets);
    refreshesPerSecond.push(input.targets / seconds);
  }
  await provider?.forceFlush();
} finally {
  await side.close();
  await provider?.shutdown();
}
const out: TelemetryChildOutput = { mode: input.mode, cpuUsPerRefresh, refreshesPerSecond, spansPerRefresh: (exporter.spans - spansBefore) / (input.targets * input.sweeps) };
process.send?.(out);
