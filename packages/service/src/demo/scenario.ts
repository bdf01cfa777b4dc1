/**
 * The seed's "morning of changes", played on the demo's compressed clock, one scene at a time:
 * an early session pinned to the first snapshot; the warranty team deploys (a new session routes
 * to it, the pinned one does not, the downstream instance finds it through the catalog); the
 * returns team adds a skill; the warranty endpoint stops answering; then the summary. Afterwards
 * the terminal goes quiet (narration.ts).
 */
import type { RunningService } from '../assembly/service.js';
import type { DemoPeer } from './peers.js';
import type { failureNotices } from './notices.js';
import type { DemoClock } from './narration.js';
import { chatLine, dashboardLine, sleep, wallClock } from './narration.js';

/** What the scenario plays on: the two instances, the peers it changes, the clock and the terminal. */
export interface DemoStage {
  readonly service: RunningService;
  readonly downstream: RunningService;
  /** The registry catalog the discovery sources poll. */
  readonly catalog: { set(agents: Array<{ name: string; url: string; tags?: string[] }>): void };
  readonly returns: DemoPeer & { card: Record<string, unknown> };
  readonly warranty: DemoPeer;
  readonly clock: DemoClock;
  readonly out: (line: string) => void;
  readonly notices: ReturnType<typeof failureNotices>;
  /** A failure that goes on is said again at most this often (wall clock). */
  readonly reminderMs: number;
}

const QUESTION = 'Is serial 123 under warranty?';

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
