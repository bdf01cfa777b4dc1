/**
 * Tree factory, session pinning and the session runner, with local ADK specialists whose model
 * is a scripted fake (no model API runs here). Remote specialists over real A2A servers are
 * covered in test/adk/pinned-remote.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BaseAgent } from '@google/adk';
import { LlmAgent } from '@google/adk';
import { buildRootAgent, keywordRouter, SessionRunner, TreeFactory } from '../../packages/core/src/adk/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import type { Snapshot, SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import { buildSnapshot, SnapshotStore } from '../../packages/core/src/snapshot/index.js';
import { ScriptedLlm } from '../helpers/a2a-peers.js';
import { snapshotAgent as agent } from '../helpers/cards.js';


/** Specialists are local LlmAgents with a scripted fake model that says who answered and on which version. */
function buildRoot(snapshot: Snapshot): BaseAgent {
  const specialists = snapshot.agents.map(
    (a) => new LlmAgent({ name: a.localName, description: a.description, model: new ScriptedLlm(`${a.localName} on v${snapshot.version}`, `fake-${a.localName}`) }),
  );
  return buildRootAgent('orchestrator', snapshot, specialists, { kind: 'routed', hints: [{ tag: 'warranty', keywords: ['guarantee'] }] });
}

function setup(options: { idleTimeoutMs?: number; maxSessions?: number } = {}) {
  const clock = new VirtualClock();
  const store = new SnapshotStore();
  let version = 0;
  const publish = (agents: SnapshotAgent[]): Snapshot => {
    const s = buildSnapshot(agents, ++version, clock.wallNow());
    store.publish(s);
    return s;
  };
  const trees = new TreeFactory({ snapshots: store, buildRoot, clock, ...options });
  return { clock, store, publish, trees };
}

describe('TreeFactory', () => {
  test('before any publication rootFor refuses with ERR_NOT_READY', () => {
    const { trees } = setup();
    assert.throws(() => trees.rootFor('s1'), (err) => isDiscoveryError(err) && err.code === 'ERR_NOT_READY' && err.failure === 'state');
  });

  test('a session keeps the very same root across publications; new sessions get the new one; one build per digest', () => {
    const { publish, trees, store } = setup();
    const A = publish([agent('billing', ['billing']), agent('returns', ['returns'])]);
    const rootA = trees.rootFor('s1');
    for (let i = 0; i < 100; i++) trees.rootFor(`early-${i}`);
    const B = publish([agent('billing', ['billing']), agent('returns', ['returns']), agent('warranty', ['warranty'])]);
    const C = publish([agent('billing', ['billing'], '2.0.0'), agent('warranty', ['warranty'])]);
    assert.equal(trees.rootFor('s1'), rootA);
    assert.equal(trees.digestOf('s1'), A.digest);
    const rootC = trees.rootFor('s2');
    assert.notEqual(rootC, rootA);
    assert.equal(trees.digestOf('s2'), C.digest);
    assert.equal(trees.builds, 2, 'A and C were built once each; B was never needed');
    assert.equal(store.get(B.digest), undefined, 'B was never pinned: evicted');
    assert.equal(store.references(A.digest), 101);
  });

  test('a root is evicted after its last session ends, not before', () => {
    const { publish, trees, store } = setup();
    const A = publish([agent('billing', ['billing'])]);
    trees.rootFor('s1');
    trees.rootFor('s2');
    publish([agent('billing', ['billing'], '2.0.0')]);
    trees.endSession('s1');
    assert.ok(store.get(A.digest));
    assert.ok(trees.builtDigests.includes(A.digest));
    trees.endSession('s2');
    assert.equal(store.get(A.digest), undefined);
    assert.ok(!trees.builtDigests.includes(A.digest));
  });

  test('idle pins expire on a timer, with no request needed, so abandoned sessions cannot leak trees', async () => {
    const { publish, trees, store, clock } = setup({ idleTimeoutMs: 60_000 });
    const A = publish([agent('billing', ['billing'])]);
    trees.rootFor('abandoned');
    trees.rootFor('active');
    publish([agent('billing', ['billing'], '2.0.0')]);
    for (let t = 0; t < 80_000; t += 20_000) {
      await clock.advance(20_000);
      trees.rootFor('active');
    }
    assert.equal(trees.digestOf('abandoned'), undefined);
    assert.equal(trees.digestOf('active'), A.digest, 'a session in use keeps its pin');
    trees.endSession('active');
    assert.equal(store.get(A.digest), undefined);
    assert.ok(!trees.builtDigests.includes(A.digest), "A's root went with its last pin");
    assert.equal(trees.stats.expired, 1);
    assert.equal(clock.pendingTimers, 0, 'no timer while nothing is pinned');
    trees.close();
  });

  // rootFor() reads no clock: a use is recorded by the next idle check. So a session is never
  // expired earlier than its idle timeout after its last use, and at most one check later.
  test('idle expiry after rootFor() uses: never before the idle timeout since the last use, at most one check interval after it', async () => {
    const idle = 60_000;
    const check = idle / 4; // the idle check's interval
    const { publish, trees, clock } = setup({ idleTimeoutMs: idle });
    publish([agent('billing', ['billing'])]);
    trees.rootFor('s');
    // Used just after a check and just before the next one.
    await clock.advance(check + 1);
    trees.rootFor('s');
    await clock.advance(check - 2);
    trees.rootFor('s');
    const lastUse = clock.now();
    let expiredAt: number | undefined;
    for (let i = 0; i < 120 && expiredAt === undefined; i++) {
      await clock.advance(1_000);
      if (trees.digestOf('s') === undefined) expiredAt = clock.now();
    }
    assert.ok(expiredAt !== undefined, 'the idle session expired');
    assert.ok(expiredAt - lastUse > idle, `not before the timeout: expired ${expiredAt - lastUse} ms after the last use`);
    assert.ok(expiredAt - lastUse <= idle + check + 1_000, `at most one check late: ${expiredAt - lastUse} ms`);
    trees.close();
  });

  test('a warm-up root survives sweeps until its snapshot is published, even a session ending in between', () => {
    const { publish, trees, store, clock } = setup();
    const A = publish([agent('billing', ['billing'])]);
    trees.rootFor('old');
    const B = buildSnapshot([agent('billing', ['billing'], '2.0.0')], 2, clock.wallNow());
    const warm = trees.prepare(B); // the loop's beforePublish
    trees.endSession('old'); // a sweep before B is published
    assert.ok(trees.builtDigests.includes(B.digest), 'the checked tree is kept');
    store.publish(B);
    assert.equal(trees.rootFor('new'), warm, 'the tree that was checked is the one served');
    assert.equal(trees.builds, 2, 'each digest built once');
    assert.deepEqual(trees.sweep(), [A.digest], 'A goes at the next sweep');
    trees.close();
  });

  test('earlier digests coming back (nothing to build) still drop the roots of snapshots released meanwhile', () => {
    // The chaos test's seed 294956459: a recovered agent brings back v9's digest as v11 and v8's
    // (still pinned) as v12; the warm-ups build nothing, and before, nothing swept either.
    const { trees, store, clock } = setup();
    let version = 0;
    const warmThenPublish = (s: Snapshot): Snapshot => {
      trees.prepare(s); // the loop's beforePublish
      store.publish(s);
      return s;
    };
    const at = (agents: SnapshotAgent[]) => buildSnapshot(agents, ++version, clock.wallNow());
    const A = warmThenPublish(at([agent('billing', ['billing'])]));
    trees.rootFor('pinned-on-a');
    const B = warmThenPublish(at([agent('billing', ['billing']), agent('returns', ['returns'])]));
    const C = warmThenPublish(at([agent('billing', ['billing']), agent('warranty', ['warranty'])]));
    warmThenPublish(at(B.agents.slice())); // B again: its root is still built
    warmThenPublish(at(A.agents.slice())); // A again: pinned, built
    const released = trees.builtDigests.filter((d) => store.get(d) === undefined);
    assert.ok(!trees.builtDigests.includes(C.digest), `C was released two publications ago and is still built (roots of released snapshots: ${released.length})`);
    assert.ok(released.length <= 1, `${released.length} roots of released snapshots`);
    assert.equal(trees.builds, 3, 'A, B and C built once each');
    trees.close();
  });

  test('roots of superseded snapshots that no session pinned are evicted', () => {
    const { publish, trees } = setup();
    for (let i = 1; i <= 20; i++) trees.prepare(publish([agent('billing', ['billing'], `${i}.0.0`)]));
    assert.equal(trees.builds, 20);
    assert.ok(trees.builtDigests.length <= 2, `at most the current root and the one before it (${trees.builtDigests.length})`);
  });

  test('an idled-out session that returns starts anew on the current snapshot, reported, not silently moved', async () => {
    const { publish, trees, clock } = setup({ idleTimeoutMs: 60_000 });
    const A = publish([agent('billing', ['billing'])]);
    trees.rootFor('s');
    const B = publish([agent('billing', ['billing'], '2.0.0')]);
    await clock.advance(120_000);
    const pin = trees.pin('s');
    assert.deepEqual([pin.digest, pin.restartedFrom], [B.digest, A.digest]);
    assert.equal(trees.pin('s').restartedFrom, undefined, 'reported once');
    trees.close();
  });

  test('session ids follow one rule, pins are capped, and only pinned sessions can be upgraded', () => {
    const { publish, trees } = setup({ maxSessions: 2 });
    publish([agent('billing', ['billing'])]);
    for (const bad of ['', 'x <script>', 'a'.repeat(129), 'é']) {
      assert.throws(() => trees.rootFor(bad), (err) => isDiscoveryError(err) && err.code === 'ERR_SESSION_INVALID');
      assert.throws(() => trees.upgrade(bad), (err) => isDiscoveryError(err) && err.code === 'ERR_SESSION_INVALID');
    }
    trees.rootFor('one');
    trees.rootFor('two');
    assert.throws(() => trees.rootFor('three'), (err) => isDiscoveryError(err) && err.code === 'ERR_SESSION_LIMIT');
    trees.rootFor('one');
    assert.throws(() => trees.upgrade('never-started'), (err) => isDiscoveryError(err) && err.code === 'ERR_UPGRADE_REFUSED' && /not pinned/.test(err.message));
    assert.equal(trees.sessions().length, 2, 'a refused upgrade created no pin');
    trees.close();
  });

  test('upgrade re-pins at a turn boundary, and is refused when the history names a vanished agent unless forced', () => {
    const { publish, trees } = setup();
    const A = publish([agent('billing', ['billing']), agent('returns', ['returns'])]);
    trees.rootFor('s1');
    const B = publish([agent('billing', ['billing'])]);
    assert.throws(
      () => trees.upgrade('s1', { authors: ['orchestrator', 'returns'] }),
      (err) => isDiscoveryError(err) && err.code === 'ERR_UPGRADE_REFUSED' && /names returns/.test(err.message),
    );
    assert.equal(trees.digestOf('s1'), A.digest, 'a refused upgrade changes nothing');
    assert.deepEqual(trees.upgrade('s1', { authors: ['returns'], force: true }), { from: A.digest, to: B.digest, changed: true });
    assert.equal(trees.digestOf('s1'), B.digest);
    assert.equal(trees.upgrade('s1').changed, false);
  });

  test('a failing build is reported by prepare (so the loop does not publish it)', () => {
    const store = new SnapshotStore();
    const trees = new TreeFactory({
      snapshots: store,
      buildRoot: () => {
        throw new Error('two agents named order_lookup');
      },
    });
    const s = buildSnapshot([agent('billing', ['billing'])], 1, 0);
    assert.throws(() => trees.prepare(s), (err) => isDiscoveryError(err) && err.stage === 'build' && /order_lookup/.test(err.message));
  });
});

describe('keywordRouter', () => {
  const agents = [
    { localName: 'billing_agent', tags: ['billing', 'invoices'], critical: true },
    { localName: 'returns_agent', tags: ['returns'], critical: false },
    { localName: 'warranty_agent', tags: ['warranty'], critical: false },
  ];
  const route = keywordRouter(agents, [{ tag: 'returns', keywords: ['refund', 'send back'], examples: ['I want to return my order'] }], 'billing_agent');

  test('routes on reviewed tags, keywords and examples, with simple stems', () => {
    assert.equal(route('Is this still under WARRANTY?').agent, 'warranty_agent');
    assert.equal(route('I need a refund for order 12').agent, 'returns_agent');
    assert.equal(route('Where are my invoices?').agent, 'billing_agent');
  });

  test('ties go to the critical agent; no match goes to the fallback', () => {
    assert.equal(route('billing or returns?').agent, 'billing_agent');
    assert.deepEqual(route('hello there'), { agent: 'billing_agent', score: 0, matched: [], fallback: true });
    assert.equal(route('Where are my invoices?').fallback, false);
    const strict = keywordRouter(agents, [], false);
    assert.equal(strict('hello there').agent, undefined, 'fallback: false routes nowhere');
  });
  test('among agents that fit equally, the one with the better record of real calls answers, read at each decision', () => {
    const twins = [
      { localName: 'returns_east', tags: ['returns'], critical: false },
      { localName: 'returns_west', tags: ['returns'], critical: false },
    ];
    const record = new Map([
      ['returns_east', 1],
      ['returns_west', 1],
    ]);
    const routeTwins = keywordRouter(twins, [], false, (name) => record.get(name) ?? 1);
    assert.equal(routeTwins('returns please').agent, 'returns_east', 'equal records: by name');
    record.set('returns_east', 0.4);
    assert.equal(routeTwins('returns please').agent, 'returns_west', 'the east agent fails 60 % of its calls now');
    // A better fit still wins over a better record.
    const fit = keywordRouter([...twins, { localName: 'refunds_agent', tags: ['refunds', 'returns'], critical: false }], [], false, (name) => (name === 'refunds_agent' ? 0 : 1));
    assert.equal(fit('refunds for returns').agent, 'refunds_agent');
  });
});

describe('SessionRunner', () => {
  test('sessions pinned to different digests answer from different trees', async () => {
    const { publish, trees } = setup();
    const sessions = new SessionRunner({ trees });
    const A = publish([agent('billing_agent', ['billing']), agent('returns_agent', ['returns'])]);
    const early = await sessions.run('early', 'I want to return these shoes');
    assert.equal(early.author, 'returns_agent');
    assert.equal(early.reply, 'returns_agent on v1');
    assert.equal(early.digest, A.digest);

    const B = publish([agent('billing_agent', ['billing']), agent('returns_agent', ['returns']), agent('warranty_agent', ['warranty'])]);
    const late = await sessions.run('late', 'Is my laptop under guarantee?');
    assert.deepEqual([late.author, late.reply, late.digest], ['warranty_agent', 'warranty_agent on v2', B.digest]);

    const earlyAgain = await sessions.run('early', 'Is my laptop under guarantee?');
    assert.equal(earlyAgain.digest, A.digest, 'the early session stays on A');
    assert.notEqual(earlyAgain.author, 'warranty_agent', 'A has no warranty agent');
    assert.deepEqual(await sessions.authors('early'), ['returns_agent', 'billing_agent']);

    assert.deepEqual(new Set(sessions.runnerDigests), new Set([A.digest, B.digest]));
    await sessions.end('early');
    assert.deepEqual(sessions.runnerDigests, [B.digest], "A's runner went with its tree");
    sessions.close();
  });

  test('upgrade uses the session history: refused while it names an agent the new tree lacks', async () => {
    const { publish, trees } = setup();
    const sessions = new SessionRunner({ trees });
    publish([agent('billing_agent', ['billing']), agent('returns_agent', ['returns'])]);
    await sessions.run('s', 'refund please, returns');
    const B = publish([agent('billing_agent', ['billing'])]);
    await assert.rejects(sessions.upgrade('s'), /returns_agent/);
    const forced = await sessions.upgrade('s', { force: true });
    assert.equal(forced.to, B.digest);
    const turn = await sessions.run('s', 'invoice question, billing');
    assert.equal(turn.digest, B.digest);
    sessions.close();
  });
});
