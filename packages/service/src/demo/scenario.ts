/**
 * The seed's "morning of changes", played on the demo's compressed clock, one scene at a time:
 * an early session pinned to the first snapshot; the warranty team deploys (a new session routes
 * to it, the pinned one does not, the downstream instance finds it through the catalog); the
 * returns team adds a skill; the returns team releases a breaking version whose new deployment
 * fails half its calls (rolled out to 5 % of new sessions, then rolled back on the figures of
 * their calls); the warranty endpoint stops answering; then the summary. Afterwards the terminal
 * goes quiet (narration.ts).
 */
import type { RunningService } from '../assembly/service.js';
import type { DemoPeer, ReleasablePeer } from './peers.js';
import type { failureNotices } from './notices.js';
import type { DemoClock } from './narration.js';
import { chatLine, dashboardLine, sleep, wallClock } from './narration.js';

/** What the scenario plays on: the two instances, the peers it changes, the clock and the terminal. */
export interface DemoStage {
  readonly service: RunningService;
  readonly downstream: RunningService;
  /** The registry catalog the discovery sources poll. */
  readonly catalog: { set(agents: Array<{ name: string; url: string; tags?: string[] }>): void };
  readonly returns: DemoPeer & ReleasablePeer & { card: Record<string, unknown> };
  readonly warranty: DemoPeer;
  readonly clock: DemoClock;
  readonly out: (line: string) => void;
  readonly notices: ReturnType<typeof failureNotices>;
  /** A failure that goes on is said again at most this often (wall clock). */
  readonly reminderMs: number;
}

const QUESTION = 'Is serial 123 under warranty?';
const RETURN_QUESTION = 'I want to return my headphones';
/** New sessions the simulated customers start, at most, while the returns release rolls out. */
const MAX_CUSTOMERS = 600;

/**
 * Plays the morning (unless `play` is false), then says that the service keeps running with the
 * dashboard and the chat hint again; from then on lines carry the wall clock only. A scene that
 * fails stops the scenario with a line, never the demo.
 */
export function playScenario(s: DemoStage, play: boolean): Promise<void> {
  const { out } = s;
  return (async () => {
    if (!play) return;
    await earlySession(s);
    await warrantyDeploys(s);
    await returnsAddsASkill(s);
    await returnsReleasesABreakingVersion(s);
    await warrantyStopsAnswering(s);
    morningOver(s);
  })()
    .catch((err: unknown) => out(`scenario stopped: ${err instanceof Error ? err.message : String(err)}`))
    .finally(() => {
      // The terminal goes quiet: the wall clock only, and the two lines an operator needs again.
      s.clock.endModelTime();
      if (!play) return;
      out(`The service keeps running (Ctrl-C to stop). From now on only news is printed: snapshots, alerts, an endpoint that starts failing (again at most every ${s.reminderMs / 60_000} minutes while it fails) and its recovery.`);
      out(dashboardLine(s.service.url));
      out(chatLine(s.service.url));
    });
}

/** Polls `check` every 50 ms until it holds or `limitMs` passes; returns whether it holds. */
async function waitFor(check: () => boolean, limitMs: number): Promise<boolean> {
  const end = Date.now() + limitMs;
  while (!check() && Date.now() < end) await sleep(50);
  return check();
}

/** The local names of the agents in an instance's current snapshot. */
const names = (service: RunningService): string[] => service.loop.current()?.agents.map((a) => a.localName) ?? [];

/** The version of the snapshot with `digest`, as the instance retains it. */
const versionOf = (service: RunningService, digest: string): number | undefined => service.loop.snapshots.get(digest)?.version;

/** Once the catalog's returns agent is in: a session that stays pinned to this first snapshot. */
async function earlySession(s: DemoStage): Promise<void> {
  const { service, clock } = s;
  await waitFor(() => names(service).includes('returns_agent'), 30 * clock.minuteMs + 10_000);
  const early = await service.sessions.run('demo-early', 'I want to return my headphones');
  s.out(`[${clock.at()}] session demo-early (v${versionOf(service, early.digest)}) → ${early.author}: ${early.reply}`);
}

/** 10:05: the warranty agent is listed; a new session reaches it, the pinned one does not, nor (yet, perhaps) downstream. */
async function warrantyDeploys(s: DemoStage): Promise<void> {
  const { service, downstream, clock, out } = s;
  await clock.until(5);
  out(`[${clock.at()}] the warranty team deploys; the registry catalog lists it`);
  s.catalog.set([
    { name: 'returns-agent', url: s.returns.baseUrl, tags: ['returns'] },
    { name: 'warranty-agent', url: s.warranty.baseUrl, tags: ['warranty'] },
  ]);
  await waitFor(() => names(service).includes('warranty_agent'), 15 * clock.minuteMs + 10_000);
  const mid = await service.sessions.run('demo-mid', QUESTION);
  const early2 = await service.sessions.run('demo-early', QUESTION);
  out(`[${clock.at()}] "${QUESTION}"`);
  out(`          new session demo-mid   (v${versionOf(service, mid.digest)}) → ${mid.author}: ${mid.reply}`);
  out(`          pinned session demo-early (v${versionOf(service, early2.digest)}) → ${early2.author}: ${early2.reply}`);
  await service.sessions.end('demo-mid');
  if (await waitFor(() => names(downstream).includes('warranty_agent'), 5 * clock.minuteMs + 10_000)) {
    const remote = await downstream.sessions.run('demo-downstream', QUESTION);
    out(`          downstream session demo-downstream (v${versionOf(downstream, remote.digest)}) → ${remote.author}: ${remote.reply}`);
    await downstream.sessions.end('demo-downstream');
  } else out(`[${clock.at()}] the downstream instance has not seen warranty_agent yet`);
}

/** 10:20: the returns card gains a skill; a new snapshot follows. */
async function returnsAddsASkill(s: DemoStage): Promise<void> {
  const { service, clock } = s;
  await clock.until(20);
  s.out(`[${clock.at()}] the returns team adds an "exchange" skill to its card`);
  (s.returns.card.skills as unknown[]).push({ id: 'exchange', name: 'Exchange an item', description: 'Exchanges an item for another size.', tags: ['returns'] });
  const before = service.loop.current()?.digest;
  await waitFor(() => service.loop.current()?.digest !== before, 10 * clock.minuteMs + 10_000);
}

/**
 * 10:22: the returns team releases 2.0 on a new deployment: it drops the "exchange" skill (a
 * breaking change) and fails half of its calls. The candidate reaches the first step's share of
 * new sessions; simulated customers start sessions until the rollout is rolled back (the
 * narration tells the decision); then a session on the new version keeps it, a new one does not.
 */
async function returnsReleasesABreakingVersion(s: DemoStage): Promise<void> {
  const { service, clock, out } = s;
  const rollouts = service.loop.rollouts;
  if (rollouts === undefined) return;
  await clock.until(22);
  out(`[${clock.at()}] the returns team releases version 2.0 on a new deployment (/v2/jsonrpc): it drops the "exchange" skill, and the new deployment fails half of its calls`);
  s.returns.release();
  if (!(await waitFor(() => rollouts.active !== undefined, 10 * clock.minuteMs + 10_000))) {
    out(`[${clock.at()}] no rollout started`);
    return;
  }
  const { id, candidate, baseline } = rollouts.active!;
  const current = `v${versionOf(service, baseline)}`;
  const next = `v${versionOf(service, candidate)}`;
  out(`[${clock.at()}] simulated customers start new sessions ("${RETURN_QUESTION}"); those that land on ${next}, the new version:`);
  const onCandidate: string[] = [];
  let started = 0;
  while (rollouts.active?.id === id && started < MAX_CUSTOMERS) {
    const sessionId = `demo-customer-${++started}`;
    const turn = await service.sessions.run(sessionId, RETURN_QUESTION);
    if (turn.digest !== candidate) {
      // A session on the current version is done with; those on the new version stay (pinned).
      await service.sessions.end(sessionId);
      continue;
    }
    onCandidate.push(sessionId);
    out(`          ${sessionId} (${next}) → ${answer(turn)}`);
  }
  const share = started === 0 ? 0 : (onCandidate.length / started) * 100;
  const { received, failed } = s.returns.released;
  out(`[${clock.at()}] ${started} new sessions: ${onCandidate.length} on ${next} (${share.toFixed(1)}%), the others on ${current}; the new deployment failed ${failed} of its ${received} calls (HTTP 500)`);
  if (rollouts.active?.id === id) {
    out(`[${clock.at()}] the rollout of ${next} is still in progress`);
    return;
  }
  // Pinning: a conversation on the new version stays there; a new one starts on the current version.
  out(`[${clock.at()}] after the rollback, "${RETURN_QUESTION}" again:`);
  const pinnedId = onCandidate[0];
  if (pinnedId !== undefined) {
    const pinned = await service.sessions.run(pinnedId, RETURN_QUESTION);
    out(`          session ${pinnedId} stays on v${versionOf(service, pinned.digest)} ${pinned.digest.slice(0, 12)} (pinned) → ${answer(pinned)}`);
  }
  const freshId = `demo-customer-${started + 1}`;
  const fresh = await service.sessions.run(freshId, RETURN_QUESTION);
  out(`          new session ${freshId} starts on v${versionOf(service, fresh.digest)} ${fresh.digest.slice(0, 12)} → ${answer(fresh)}`);
  await service.sessions.end(freshId);
}

/** A turn's answer as a line: who answered and what, or why it failed. */
const answer = (turn: { author?: string; reply: string; error?: string }): string => (turn.error === undefined ? `${turn.author}: ${turn.reply}` : `failed: ${turn.error}`);

/** 10:30: the warranty card endpoint hangs until the agent leaves the snapshots; a late session, the early one still pinned. */
async function warrantyStopsAnswering(s: DemoStage): Promise<void> {
  const { service, clock, out } = s;
  await clock.until(30);
  out(`[${clock.at()}] the warranty card endpoint stops answering`);
  s.warranty.setHang(true);
  await waitFor(() => !names(service).includes('warranty_agent'), 20 * clock.minuteMs + 20_000);
  const late = await service.sessions.run('demo-late', QUESTION);
  out(`[${clock.at()}] new session demo-late (v${versionOf(service, late.digest)}) → ${late.author}: ${late.reply}`);
  out(`[${clock.at()}] session demo-early is still pinned to v${versionOf(service, service.trees.digestOf('demo-early') ?? '')}`);
}

/** The summary: the current snapshot and the endpoints failing now. */
function morningOver(s: DemoStage): void {
  const current = s.service.loop.current();
  const failing = s.notices.failing().map((f) => `${f.endpoint} (${f.code} since ${wallClock(f.since)})`);
  s.out(
    `[${s.clock.at()}] the morning is over: current snapshot v${current?.version} (${current?.agents.map((a) => a.localName).join(', ') || 'no agents'}); ` +
      `failing: ${failing.join(', ') || 'none'}`,
  );
}
