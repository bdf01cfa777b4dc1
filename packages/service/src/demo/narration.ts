/**
 * What the demo's terminal says: the clock its lines carry (the scenario's model clock and the
 * wall clock the dashboard shows while the morning plays, then the wall clock only), the header
 * with every address, and the running service's events told as lines: new snapshots, alerts,
 * routing evaluations, health changes, staged rollouts and their decisions, and failing endpoints
 * once (notices.ts).
 */
import type { DiscoveryEvent, EventStream } from 'a2a-discovery';
import type { AlertEvent } from 'a2a-discovery/internal';
import type { RunningService } from '../assembly/service.js';
import type { failureNotices } from './notices.js';

/** A staged rollout's decision, as the event stream carries it. */
type RolloutEvent = Extract<DiscoveryEvent, { type: `rollout.${string}` }>;

const pad = (n: number): string => String(n).padStart(2, '0');

/** The wall clock as the dashboard shows it (local time), to the second. */
export function wallClock(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/**
 * The demo's clock, started when made: during the scenario its model clock (10:00 at the start,
 * `minuteMs` real milliseconds per model minute) and the wall clock; after it, or without it, the
 * wall clock only.
 */
export class DemoClock {
  /** The wall clock when the scenario's clock started. */
  readonly start = Date.now();
  readonly minuteMs: number;
  #modelTime: boolean;

  constructor(minuteMs: number, modelTime: boolean) {
    this.minuteMs = minuteMs;
    this.#modelTime = modelTime;
  }

  /** Whether lines still carry the model clock. */
  get modelTime(): boolean {
    return this.#modelTime;
  }

  /** The time a line carries now, `10:07 (model) · 16:42:03` or `16:42:03`. */
  at(): string {
    const now = Date.now();
    if (!this.#modelTime) return wallClock(now);
    const m = Math.floor((now - this.start) / this.minuteMs);
    return `${10 + Math.floor(m / 60)}:${pad(m % 60)} (model) · ${wallClock(now)}`;
  }

  /** From now on, the wall clock only. */
  endModelTime(): void {
    this.#modelTime = false;
  }

  /** Resolves `minutes` model minutes after the start (at once when that is past). */
  async until(minutes: number): Promise<void> {
    await sleep(Math.max(0, this.start + minutes * this.minuteMs - Date.now()));
  }
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise<void>((r) => setTimeout(r, ms));

/** A published snapshot as a line: its version, the start of its digest, its agents. */
export function snapshotLine(at: string, s: { version: number; digest: string }, agents: readonly string[]): string {
  return `[${at}] snapshot v${s.version} ${s.digest.slice(0, 12)}: ${agents.join(', ') || '(no agents)'}`;
}

/** A snapshot the downstream instance published (through the first one's AI Catalog) as a line. */
export function downstreamLine(at: string, s: { version: number; digest: string }, agents: readonly string[]): string {
  return `[${at}] downstream snapshot v${s.version} ${s.digest.slice(0, 12)} (through the catalog): ${agents.join(', ') || '(no agents)'}`;
}

/** The dashboard's line of the header, said again after the morning. */
export const dashboardLine = (url: string): string => `  dashboard   ${url}/`;

/**
 * The chat hint of the header, said again after the morning: a command that works every time it
 * is run (no `sessionId`, so each run starts a session of its own; continuing one takes the
 * `sessionSecret` its first answer returned, as the README shows).
 */
export const chatLine = (url: string): string =>
  `  chat        curl -s ${url}/api/chat -H 'content-type: application/json' -d '{"message":"Is serial 123 under warranty?"}'   # a new session each run; to continue one, send its sessionId and the header x-session-secret: <its first answer's sessionSecret>`;

/** Lines said before the header is printed are held, then printed after it ({@link release}). */
export class Narrator {
  readonly #out: (line: string) => void;
  #held: string[] | undefined = [];

  constructor(out: (line: string) => void) {
    this.#out = out;
  }

  /** Prints `line`, or holds it until {@link release}. */
  say(line: string): void {
    if (this.#held !== undefined) this.#held.push(line);
    else this.#out(line);
  }

  /** Prints the lines held, then every later one at once. */
  release(): void {
    for (const line of this.#held ?? []) this.#out(line);
    this.#held = undefined;
  }
}

/**
 * A staged rollout's decision as a line (`version` names a snapshot by its digest): what the change
 * breaks and the share it reaches first, each next step, the promotion; an automatic rollback is
 * told by its alert (which names the agent and the figure), so its line says what follows.
 */
function rolloutLine(at: string, e: RolloutEvent, version: (digest: string) => string): string {
  const candidate = `${version(e.candidate)} ${e.candidate.slice(0, 12)}`;
  const baseline = version(e.baseline);
  switch (e.type) {
    case 'rollout.started':
      return `[${at}] breaking change, not published at once: candidate ${candidate} (${e.reason}) rolls out by stages, to ${e.share}% of new sessions first; the others start on ${baseline}`;
    case 'rollout.advanced':
      return `[${at}] rollout of ${candidate}: ${e.share}% of new sessions now (${e.reason})`;
    case 'rollout.promoted':
      return `[${at}] rollout of ${candidate} promoted: ${e.reason}`;
    case 'rollout.rolled-back':
      return `[${at}] rollout of ${candidate} rolled back${e.by === 'auto' ? '' : ` by ${e.by}`}: new sessions start on ${baseline} again; the sessions already on ${version(e.candidate)} stay there (pinned)`;
    default:
      return `[${at}] rollout of ${candidate} ${e.type.slice('rollout.'.length)}${e.by === 'auto' ? '' : ` by ${e.by}`}: ${e.reason}`;
  }
}

/**
 * Tells the service's events as they come: snapshots, the alerts an operator must know, failing
 * endpoints and their recovery (rate-limited by `notices`), health changes, routing evaluations,
 * staged rollouts (`version` names a snapshot by its digest, `v7`). Returns the unsubscribe.
 */
export function narrateEvents(
  events: EventStream,
  p: { clock: DemoClock; say: (line: string) => void; notices: ReturnType<typeof failureNotices>; version: (digest: string) => string },
): () => void {
  const { clock, say, notices } = p;
  const at = () => clock.at();
  // Endpoints out of snapshots: their failures are narrated as retries, not as stale serving.
  const removed = new Set<string>();
  return events.subscribe((e: DiscoveryEvent) => {
    if (e.type === 'snapshot.published') say(snapshotLine(at(), e, e.agents));
    else if (e.type === 'alert' && ['skills-changed', 'repeated-failures', 'mass-removal', 'endpoint-changed', 'rollout-rolled-back'].includes((e as AlertEvent).kind)) say(`[${at()}] alert ${e.kind}: ${e.message}`);
    else if (e.type.startsWith('rollout.')) say(rolloutLine(at(), e as RolloutEvent, p.version));
    else if (e.type === 'card.result' && (e.outcome === 'stale' || e.outcome === 'failed')) {
      // Said once, then at most every reminder interval while it goes on; a retry on backoff is not news.
      const meanwhile = removed.has(e.endpoint) ? 'out of snapshots, retried on backoff' : e.outcome === 'stale' ? 'its card is served stale' : 'no card to serve, retried on backoff';
      const line = notices.failed({ endpoint: e.endpoint, code: e.code ?? 'error', meanwhile });
      if (line !== undefined) say(`[${at()}] ${line}`);
    } else if (e.type === 'card.result' && e.outcome !== 'invalid') {
      const line = notices.answered(e.endpoint);
      if (line !== undefined) say(`[${at()}] ${line}`);
    } else if (e.type === 'health.changed' && (e.to === 'degraded' || e.to === 'removed')) say(`[${at()}] ${e.endpoint} is ${e.to}`);
    if (e.type === 'health.changed') {
      if (e.to === 'removed') removed.add(e.endpoint);
      else removed.delete(e.endpoint);
    } else if (e.type === 'routing.evaluated') {
      say(
        `[${at()}] routing of candidate v${e.version} ${e.digest.slice(0, 12)}: ${(e.accuracy * 100).toFixed(0)}% of ${e.evaluated} labelled cases routed right ` +
          `(threshold ${(e.minAccuracy * 100).toFixed(0)}%)${e.passed ? '' : e.held ? '; held' : '; below the threshold, alert raised'}`,
      );
    } else if (e.type === 'alert' && e.kind === 'routing-accuracy') say(`[${at()}] alert ${e.kind}: ${e.message}`);
  });
}

/** The header: every address of the demo, where its configuration and store are, and how to read the clock. */
export function printHeader(
  out: (line: string) => void,
  d: { service: RunningService; downstream: RunningService; configFile: string; catalogUrl: string; peers: { billing: string; returns: string; warranty: string }; clock: DemoClock; speed: number },
): void {
  const url = d.service.url;
  out(`a2a-discovery demo`);
  out(dashboardLine(url));
  out(`  API         ${url}/api/snapshot   ${url}/api/endpoints   ${url}/metrics`);
  out(`  config      ${d.configFile}`);
  out(`  store       ${d.service.store.status().location} (SQLite: snapshots, pins, conversations and the journal survive a restart)`);
  out(chatLine(url));
  out(`  peers       billing ${d.peers.billing} (A2A 0.3)  returns ${d.peers.returns} (0.3)  warranty ${d.peers.warranty} (1.0 only)`);
  out(`  A2A         ${url}/.well-known/agent-card.json  POST ${url}/api/a2a (the orchestrator itself as an A2A agent, 1.0 and 0.3; each contextId a session)`);
  out(`  catalog     ${d.catalogUrl} (this instance's snapshot as an AI Catalog)`);
  out(`  downstream  ${d.downstream.url}/ a second instance that discovers the agents through that catalog`);
  const { speed } = d;
  if (d.clock.modelTime) out(`  times       [10:00 (model) · ${wallClock(Date.now())}]: the scenario's clock (${+speed.toFixed(2)} model minute${speed === 1 ? '' : 's'} per second), then the wall clock the dashboard shows`);
}
