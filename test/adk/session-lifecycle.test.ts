/**
 * The session lifecycle end to end through the runner: idle expiry on a timer deletes the ADK
 * session with its pin, a returning session starts anew with a notice, the routed root says
 * when its default agent answered, and a turn without a final answer is never an empty success.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BaseSessionService, Event, InvocationContext } from '@google/adk';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAdkSessionService } from '../../packages/store/src/adk-sessions.js';
import { BaseAgent, createEvent, InMemorySessionService, LlmAgent } from '@google/adk';
import { buildRootAgent, SessionRunner, TreeFactory } from '../../packages/core/src/adk/index.js';
import { Foreground } from '../../packages/core/src/adk/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { Snapshot, SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import { buildSnapshot, SnapshotStore } from '../../packages/core/src/snapshot/index.js';
import { ScriptedLlm } from '../helpers/a2a-peers.js';
import { snapshotAgent as agent } from '../helpers/cards.js';


/** A specialist that replays scripted events (what a remote agent yields for a peer's answer). */
class ScriptedAgent extends BaseAgent {
  readonly #script: ReadonlyArray<Partial<Event>>;
  constructor(name: string, script: ReadonlyArray<Partial<Event>>) {
    super({ name, description: `Scripted ${name}.` });
    this.#script = script;
  }
  protected override async *runAsyncImpl(ctx: InvocationContext): AsyncGenerator<Event, void, void> {
    for (const fields of this.#script) yield createEvent({ ...fields, invocationId: ctx.invocationId, author: this.name });
  }
  protected override async *runLiveImpl(): AsyncGenerator<Event, void, void> {
    // not used
  }
}

function setup(specialist: (a: SnapshotAgent, snapshot: Snapshot) => BaseAgent, idleTimeoutMs = 60_000, foreground?: Foreground, history: BaseSessionService = new InMemorySessionService()) {
  const clock = new VirtualClock();
  const store = new SnapshotStore();
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  let version = 0;
  const publish = (agents: SnapshotAgent[]): Snapshot => {
    const s = buildSnapshot(agents, ++version, clock.wallNow());
    store.publish(s);
    return s;
  };
  const trees = new TreeFactory({
    snapshots: store,
    clock,
    events: stream,
    idleTimeoutMs,
    buildRoot: (snapshot) => buildRootAgent('orchestrator', snapshot, snapshot.agents.map((a) => specialist(a, snapshot)), { kind: 'routed' }),
  });
  const sessionService = history;
  const sessions = new SessionRunner({ trees, sessionService, events: stream, ...(foreground !== undefined && { foreground }) });
  return { clock, publish, trees, sessions, sessionService, events };
}

const llm = (a: SnapshotAgent, s: Snapshot) => new LlmAgent({ name: a.localName, description: a.description, model: new ScriptedLlm(`${a.localName} on v${s.version}`, `fake-${a.localName}`) });

/** A specialist that notes how much foreground work is in flight while it answers (or fails). */
class WatchingAgent extends BaseAgent {
  constructor(name: string, readonly watch: () => void, readonly fail = false) {
    super({ name, description: `Watching ${name}.` });
  }
  protected override async *runAsyncImpl(ctx: InvocationContext): AsyncGenerator<Event, void, void> {
    this.watch();
    if (this.fail) throw new Error('the peer went away');
    yield createEvent({ invocationId: ctx.invocationId, author: this.name, content: { role: 'model', parts: [{ text: 'done' }] } });
  }
  protected override async *runLiveImpl(): AsyncGenerator<Event, void, void> {
    // not used
  }
}

describe('session lifecycle', () => {
  test('each turn is foreground work while it runs (the card cache gives way to it), and no longer, failed or not', async () => {
    const foreground = new Foreground();
    const seen: number[] = [];
    const watch = () => seen.push(foreground.inFlight);
    const h = setup((a) => new WatchingAgent(a.localName, watch, a.localName === 'failing_agent'), 60_000, foreground);
    h.publish([agent('billing_agent', ['billing']), agent('failing_agent', ['warranty'])]);
    assert.equal(foreground.busy, false);
    const turns = await Promise.all([h.sessions.run('a', 'invoice please'), h.sessions.run('b', 'my invoice'), h.sessions.run('c', 'warranty claim')]);
    assert.deepEqual(turns.map((t) => t.error === undefined), [true, true, false], 'the third turn failed');
    assert.equal(seen.length, 3);
    assert.ok(seen.every((n) => n >= 1) && Math.max(...seen) === 3, `in flight as each agent ran: ${seen.join(', ')}`);
    assert.equal(foreground.inFlight, 0, 'every turn left, the failed one too');
    assert.equal(foreground.busy, false);
  });

  test('later turns of a session skip the read that asks whether it exists; a session deleted elsewhere since its last turn here starts anew', async () => {
    let existenceReads = 0;
    /** Counts the runner's existence reads (its latest event only); ADK's Runner reads it whole. */
    class CountingSessions extends InMemorySessionService {
      override getSession(request: Parameters<InMemorySessionService['getSession']>[0]) {
        if (request.config?.numRecentEvents === 1) existenceReads++;
        return super.getSession(request);
      }
    }
    const history = new CountingSessions();
    const h = setup(llm, 60_000, undefined, history);
    try {
      h.publish([agent('billing_agent', ['billing'])]);
      assert.equal((await h.sessions.run('s', 'invoice please')).reply, 'billing_agent on v1');
      assert.equal((await h.sessions.run('s', 'and another invoice')).reply, 'billing_agent on v1');
      assert.equal(existenceReads, 1, 'asked on the first turn only');
      // Another replica ended it (or a restore dropped it): the next turn here creates it again.
      await history.deleteSession({ appName: h.sessions.appName, userId: 'user', sessionId: 's' });
      const again = await h.sessions.run('s', 'one more invoice');
      assert.equal(again.error, undefined);
      assert.equal(again.reply, 'billing_agent on v1');
      const stored = await history.getSession({ appName: h.sessions.appName, userId: 'user', sessionId: 's' });
      assert.deepEqual(
        stored?.events.map((e) => e.author),
        ['user', 'billing_agent'],
        'only the new turn',
      );
      assert.equal(stored?.state['pinned_digest'], again.digest, 'created as a first turn creates it');
      // A session another user id runs under is another ADK session: asked again.
      await h.sessions.run('s', 'as bob', { userId: 'bob' });
      assert.equal(existenceReads, 2);
    } finally {
      await h.sessions.close();
      h.trees.close();
    }
  });

  test("on a SQL history, a turn's events are stored together once it ends, and a history that cannot be stored is the turn's error", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'a2ad-turn-history-'));
    const history = await openAdkSessionService('sqlite:history.sqlite', { dataDir });
    const reader = await openAdkSessionService('sqlite:history.sqlite', { dataDir });
    const seenDuring: number[] = [];
    /** Answers after looking at the stored history from another connection (and, when asked, deleting it). */
    class LookingAgent extends BaseAgent {
      constructor(name: string) {
        super({ name, description: `Looking ${name}.` });
      }
      protected override async *runAsyncImpl(ctx: InvocationContext): AsyncGenerator<Event, void, void> {
        const key = { appName: ctx.session.appName, userId: ctx.session.userId, sessionId: ctx.session.id };
        seenDuring.push((await reader.service.getSession(key))?.events.length ?? -1);
        if (ctx.session.id === 'deleted') await reader.service.deleteSession(key);
        yield createEvent({ invocationId: ctx.invocationId, author: this.name, content: { role: 'model', parts: [{ text: 'paid' }] } });
      }
      protected override async *runLiveImpl(): AsyncGenerator<Event, void, void> {
        // not used
      }
    }
    const h = setup((a) => new LookingAgent(a.localName), 60_000, undefined, history.service);
    try {
      h.publish([agent('billing_agent', ['billing'])]);
      const first = await h.sessions.run('s', 'invoice please');
      assert.equal(first.error, undefined);
      const second = await h.sessions.run('s', 'and the next one, billing');
      assert.equal(second.reply, 'paid');
      assert.deepEqual(seenDuring, [0, 2], "while each turn ran, none of its events were stored; the last turn's were");
      const stored = await reader.service.getSession({ appName: h.sessions.appName, userId: 'user', sessionId: 's' });
      assert.deepEqual(
        stored?.events.map((e) => `${e.author}: ${e.content?.parts?.[0]?.text ?? ''}`),
        ['user: invoice please', 'billing_agent: paid', 'user: and the next one, billing', 'billing_agent: paid'],
      );
      const lost = await h.sessions.run('deleted', 'invoice please');
      assert.match(lost.error ?? '', /the turn's history could not be stored: Session deleted not found/);
    } finally {
      await h.sessions.close();
      h.trees.close();
      await reader.close();
      await history.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  test('an idle session expires on its own: pin released, ADK history deleted, events and counts recorded', async () => {
    const h = setup(llm);
    h.publish([agent('billing_agent', ['billing'])]);
    await h.sessions.run('idle', 'invoice please', { userId: 'u1' });
    assert.ok(await h.sessionService.getSession({ appName: h.sessions.appName, userId: 'u1', sessionId: 'idle' }));
    await h.clock.advance(90_000);
    await h.sessions.close();
    assert.equal(h.trees.digestOf('idle'), undefined);
    assert.equal(await h.sessionService.getSession({ appName: h.sessions.appName, userId: 'u1', sessionId: 'idle' }), undefined, 'its events and state are deleted');
    assert.ok(h.events.some((e) => e.type === 'session.expired' && e.sessionId === 'idle'));
    assert.equal(h.trees.stats.expired, 1);
  });

  test('a session that returns after expiry starts anew on the current snapshot with a notice, its old history gone', async () => {
    const h = setup(llm);
    h.publish([agent('billing_agent', ['billing']), agent('returns_agent', ['returns'])]);
    const first = await h.sessions.run('back', 'I want to return my shoes, returns');
    assert.equal(first.author, 'returns_agent');
    const B = h.publish([agent('billing_agent', ['billing'])]);
    await h.clock.advance(90_000);
    const again = await h.sessions.run('back', 'invoice question, billing');
    assert.equal(again.digest, B.digest);
    assert.match(again.notices.join('\n'), /had expired \(idle\); it starts anew on snapshot/);
    assert.deepEqual(await h.sessions.authors('back'), ['billing_agent'], 'the history that named a vanished agent is gone');
    assert.ok(h.events.some((e) => e.type === 'session.restarted' && e.sessionId === 'back' && e.previousDigest !== B.digest));
    await h.sessions.close();
    h.trees.close();
  });

  test('the routed root says when no agent matched and the default agent answered', async () => {
    const h = setup(llm);
    h.publish([agent('billing_agent', ['billing']), agent('returns_agent', ['returns'])]);
    const turn = await h.sessions.run('s', 'Is serial 123 under warranty?');
    assert.equal(turn.author, 'billing_agent');
    assert.deepEqual(turn.notices, ['no agent in snapshot v1 matched this request; answered by the default agent billing_agent']);
    const matched = await h.sessions.run('s2', 'I want to return this, returns');
    assert.deepEqual(matched.notices, []);
    assert.deepEqual(matched.agents, ['returns_agent']);
    await h.sessions.close();
    h.trees.close();
  });

  test('a turn whose only text is a progress update is shown as such, with a notice', async () => {
    const h = setup((a) => new ScriptedAgent(a.localName, [{ content: { role: 'model', parts: [{ text: 'Checking serial 123: covered until 2027.' }] }, partial: true }, { turnComplete: true }]));
    h.publish([agent('warranty_agent', ['warranty'])]);
    const turn = await h.sessions.run('s', 'warranty for 123?');
    assert.equal(turn.reply, 'Checking serial 123: covered until 2027.');
    assert.equal(turn.error, undefined);
    assert.match(turn.notices.join('\n'), /warranty_agent gave no final answer; this is its last progress update/);
    await h.sessions.close();
    h.trees.close();
  });

  test("a peer's failure is the turn's error with the peer's own message; a turn with no text at all is an error too", async () => {
    const failing = setup((a) => new ScriptedAgent(a.localName, [{ errorCode: 'A2A_TASK_FAILED', errorMessage: 'the remote task ended failed: inventory service down', turnComplete: true }]));
    failing.publish([agent('warranty_agent', ['warranty'])]);
    const turn = await failing.sessions.run('s', 'warranty?');
    assert.equal(turn.reply, '');
    assert.equal(turn.error, 'the remote task ended failed: inventory service down');
    const silent = setup((a) => new ScriptedAgent(a.localName, [{ turnComplete: true }]));
    silent.publish([agent('warranty_agent', ['warranty'])]);
    const quiet = await silent.sessions.run('s', 'warranty?');
    assert.match(quiet.error ?? '', /warranty_agent ended the turn without any reply text/);
    for (const h of [failing, silent]) {
      await h.sessions.close();
      h.trees.close();
    }
  });
});
