/**
 * Chat-turn telemetry cost (#27; see docs/observability.md "Cost"): the wall time of one chat
 * turn through a remote agent — `SessionRunner.run` → routed root → `V1RemoteAgent` → a real
 * @a2a-js/sdk 1.x peer on 127.0.0.1 (blocking `SendMessage`), the policy fetch in between — in
 * three settings of the same run:
 *
 * 1. no OpenTelemetry SDK registered (the library's spans are no-ops; ADK's too);
 * 2. an SDK registered (NodeTracerProvider, BatchSpanProcessor, an exporter that discards),
 *    sampling OFF: every span is a non-recording one, trace context is still injected;
 * 3. the same provider, sampling ON: every span recorded and handed to the batch processor.
 *
 * Each round runs every setting once, in a fresh child process each (a tracer, once it has seen
 * a provider, keeps it, so "none" cannot share a process with the others), the order rotated
 * round by round; each child warms up with the same number of turns before it measures. The peer
 * runs in the child, so its own work is in every turn (the ratios are of whole turns as a user
 * sees them). Both the CPU time of the child (client and peer; steadier on a shared machine) and
 * the wall time per turn are reported; ratios are of medians of per-round means.
 *
 * Environment: BENCH_ROUNDS (default 7), BENCH_TURNS (turns per round, default 150).
 * Run: `node --import tsx bench/chat-telemetry.ts`. Writes bench/results/chat-telemetry.json.
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { context, propagation, trace } from '@opentelemetry/api';
import type { Attributes, Context, Link, SpanKind } from '@opentelemetry/api';
import { BatchSpanProcessor, SamplingDecision } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan, Sampler, SamplingResult, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { SessionRunner, snapshotTreeBuilder, TreeFactory } from '../packages/core/src/adk/index.js';
import { parseAgentCard } from '../packages/core/src/card/index.js';
import { HostPolicy } from '../packages/core/src/fetch/index.js';
import { buildSnapshot, SnapshotStore } from '../packages/core/src/snapshot/index.js';
import { startV1Server } from '../test/helpers/a2a-v1-server.js';
import { machineMeta, writeResults } from './lib/results.js';
import { fmt, summarize, table } from './lib/stats.js';
import { envCount } from './lib/env.js';

const ROUNDS = envCount('BENCH_ROUNDS', 7, 100);
const TURNS = envCount('BENCH_TURNS', 150, 100_000);
const WARMUP_TURNS = 100;

/** A sampler switched between OFF and ON by the bench (one provider for both settings). */
class SwitchedSampler implements Sampler {
  on = false;
  shouldSample(_context: Context, _traceId: string, _name: string, _kind: SpanKind, _attributes: Attributes, _links: Link[]): SamplingResult {
    return { decision: this.on ? SamplingDecision.RECORD_AND_SAMPLED : SamplingDecision.NOT_RECORD };
  }
  toString(): string {
    return `SwitchedSampler(${this.on ? 'on' : 'off'})`;
  }
}

/** Counts and drops what the batch processor exports (the OTLP exporter's network is not measured). */
class DiscardingExporter implements SpanExporter {
  spans = 0;
  export(spans: ReadableSpan[], done: (result: { code: number }) => void): void {
    this.spans += spans.length;
    done({ code: 0 });
  }
  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

type Setting = 'none' | 'off' | 'on';
const SETTINGS: readonly Setting[] = ['none', 'off', 'on'];

interface ChildResult {
  /** Mean ms per measured turn. */
  wall: number;
  cpu: number;
  /** Spans exported per measured turn (0 unless sampled). */
  spans: number;
}

/** One child: a peer, a one-agent tree, WARMUP_TURNS then TURNS measured turns under `setting`. */
async function child(setting: Setting): Promise<ChildResult> {
  let exporter: DiscardingExporter | undefined;
  let provider: NodeTracerProvider | undefined;
  if (setting !== 'none') {
    const sampler = new SwitchedSampler();
    sampler.on = setting === 'on';
    exporter = new DiscardingExporter();
    provider = new NodeTracerProvider({ sampler, spanProcessors: [new BatchSpanProcessor(exporter)] });
    provider.register();
  }
  const peer = await startV1Server({ prefix: 'bench peer' });
  const parsed = parseAgentCard(JSON.stringify(peer.card), { allowLoopback: true });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const store = new SnapshotStore();
  store.publish(
    buildSnapshot(
      [
        {
          localName: 'warranty_agent',
          description: 'Reviewed warranty agent.',
          tags: ['warranty'],
          critical: true,
          baseUrl: peer.baseUrl,
          sources: ['config'],
          card: parsed.card!,
          canonicalSha256: parsed.canonicalSha256!,
          rawSha256: parsed.rawSha256,
          protocolVersion: parsed.protocolVersion!,
          degraded: false,
          stale: false,
        },
      ],
      1,
      Date.now(),
    ),
  );
  const policy = HostPolicy.from({ allow: [new URL(peer.baseUrl).origin], allowLoopback: true });
  const buildRoot = snapshotTreeBuilder({ root: { kind: 'routed' }, policy });
  const trees = new TreeFactory({ snapshots: store, buildRoot });
  const sessions = new SessionRunner({ trees });

  let n = 0;
  /** Mean wall and CPU ms per turn, each turn on a new session (ended after, untimed). */
  const round = async (turns: number): Promise<{ wall: number; cpu: number }> => {
    let wall = 0;
    let cpu = 0;
    for (let i = 0; i < turns; i++) {
      const id = `b${n++}`;
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const turn = await sessions.run(id, 'Is serial 123 covered?');
      wall += performance.now() - t0;
      const c = process.cpuUsage(c0);
      cpu += (c.user + c.system) / 1000;
      if (turn.error !== undefined) throw new Error(turn.error);
      await sessions.end(id);
    }
    return { wall: wall / turns, cpu: cpu / turns };
  };

  await round(WARMUP_TURNS);
  await provider?.forceFlush();
  const spansBefore = exporter?.spans ?? 0;
  const measured = await round(TURNS);
  await provider?.forceFlush();
  const spans = ((exporter?.spans ?? 0) - spansBefore) / TURNS;

  await sessions.close();
  trees.close();
  await buildRoot.close();
  await peer.close();
  if (provider !== undefined) {
    trace.disable();
    context.disable();
    propagation.disable();
    await provider.shutdown();
  }
  return { ...measured, spans };
}

function runChild(setting: Setting): ChildResult {
  const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child', setting], {
    encoding: 'utf8',
    env: { ...process.env, BENCH_TURNS: String(TURNS) },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const line = out.trim().split('\n').at(-1) ?? '';
  return JSON.parse(line) as ChildResult;
}

async function main(): Promise<void> {
  const started = new Date();
  const loadBefore = os.loadavg();
  const results: Record<Setting, ChildResult[]> = { none: [], off: [], on: [] };
  for (let r = 0; r < ROUNDS; r++) {
    // Rotate the order, so drift and machine load do not favour one setting.
    for (let k = 0; k < SETTINGS.length; k++) {
      const setting = SETTINGS[(r + k) % SETTINGS.length] as Setting;
      results[setting].push(runChild(setting));
    }
  }
  const stats = (rounds: readonly ChildResult[]) => ({ wall: summarize(rounds.map((x) => x.wall)), cpu: summarize(rounds.map((x) => x.cpu)) });
  const s = { none: stats(results.none), off: stats(results.off), on: stats(results.on) };
  const row = (label: string, x: ReturnType<typeof stats>): string[] => [
    label,
    fmt(x.cpu.median * 1000, 0),
    fmt(x.cpu.median / s.none.cpu.median, 3),
    fmt(x.wall.median * 1000, 0),
    `${fmt(x.wall.min * 1000, 0)}–${fmt(x.wall.max * 1000, 0)}`,
    fmt(x.wall.median / s.none.wall.median, 3),
  ];
  const spansPerTurn = summarize(results.on.map((x) => x.spans)).median;
  console.log(`Chat turn through a remote agent (1.x peer on loopback, in the same child), ${ROUNDS} rounds × ${TURNS} turns per setting`);
  console.log(
    table(
      ['setting', 'CPU µs/turn', 'CPU ratio', 'wall µs/turn', 'wall round means', 'wall ratio'],
      [row('no SDK registered', s.none), row('SDK, sampling off', s.off), row('SDK, sampling on', s.on)],
    ),
  );
  console.log(`sampling on / off: CPU ${fmt(s.on.cpu.median / s.off.cpu.median, 3)}, wall ${fmt(s.on.wall.median / s.off.wall.median, 3)}; spans exported per sampled turn: ${fmt(spansPerTurn, 1)}`);
  const path = writeResults('chat-telemetry.json', {
    meta: machineMeta(started, loadBefore),
    rounds: ROUNDS,
    turnsPerRound: TURNS,
    warmupTurns: WARMUP_TURNS,
    msPerTurn: s,
    ratios: {
      cpu: { offToNone: s.off.cpu.median / s.none.cpu.median, onToNone: s.on.cpu.median / s.none.cpu.median, onToOff: s.on.cpu.median / s.off.cpu.median },
      wall: { offToNone: s.off.wall.median / s.none.wall.median, onToNone: s.on.wall.median / s.none.wall.median, onToOff: s.on.wall.median / s.off.wall.median },
    },
    spansPerSampledTurn: spansPerTurn,
  });
  console.log(`written: ${path}`);
}

const childAt = process.argv.indexOf('--child');
if (childAt >= 0) {
  const setting = process.argv[childAt + 1] as Setting;
  if (!SETTINGS.includes(setting)) throw new Error(`unknown setting ${setting}`);
  console.log(JSON.stringify(await child(setting)));
} else {
  await main();
}
