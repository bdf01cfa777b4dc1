/**
 * Every event type has a sentence a person can read: the dashboard's timeline, its event panel and
 * the "Latest" list show `eventOutcome` + `describeEvent` (packages/service/web/lib/format.js).
 * The samples are typed by the library's event union, so a new event type without a sample does
 * not compile here, and a new type without a sentence fails below.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DiscoveryEvent } from 'a2a-discovery';
// @ts-expect-error — plain JS module of the dashboard, checked by its own JSDoc
import { decidingStage, describeEvent, eventOutcome } from '../../packages/service/web/lib/format.js';

type Sample<T extends DiscoveryEvent['type']> = DiscoveryEvent & { type: T };
const base = { seq: 1, at: Date.UTC(2026, 11, 1, 10) };
const digest = 'sha256-3f1c0a9b7e2d41aa';
const peer = 'http://127.0.0.1:4101';
const rollout = { ...base, rollout: 'ro-1f2e3d', candidate: digest, baseline: 'sha256-aaaaaaaaaaaaaaaa', agents: ['returns_agent'] };
const rolledBack = 'returns_agent: turn error rate 50% on the candidate (6 of 12 turns) against 0% on the current snapshot (0 of 40); the bound is 5 points more';
const SAMPLES: { [T in DiscoveryEvent['type']]: Sample<T> } = {
  'card.fetch': { ...base, type: 'card.fetch', endpoint: peer, url: `${peer}/.well-known/agent-card.json`, conditional: true },
  'card.result': { ...base, type: 'card.result', endpoint: peer, outcome: 'revalidated', status: 304, bytes: 0, durationMs: 3, failures: 0 },
  'card.backoff': { ...base, type: 'card.backoff', endpoint: peer, failures: 3, retryInMs: 8_000 },
  alert: { ...base, type: 'alert', kind: 'repeated-failures', key: `repeated-failures:${peer}`, message: `${peer} failed 3 refreshes in a row`, endpoint: peer },
  'alert.resolved': { ...base, type: 'alert.resolved', kind: 'repeated-failures', key: `repeated-failures:${peer}`, message: `resolved: ${peer} failed 3 refreshes in a row`, endpoint: peer, raisedAt: base.at - 60_000 },
  'endpoint.admitted': { ...base, type: 'endpoint.admitted', endpoint: peer, sources: ['static'] },
  'endpoint.refused': { ...base, type: 'endpoint.refused', endpoint: 'http://evil.example', sources: ['catalog'], code: 'ERR_HOST_NOT_ALLOWED', reason: 'host is not on the allowlist' },
  'endpoint.gone': { ...base, type: 'endpoint.gone', endpoint: peer, sources: [] },
  'endpoint.evicted': { ...base, type: 'endpoint.evicted', endpoint: peer, sources: [] },
  'health.changed': { ...base, type: 'health.changed', endpoint: peer, from: 'healthy', to: 'degraded', successes: 0, failures: 2 },
  'match.verdict': { ...base, type: 'match.verdict', endpoint: peer, verdict: 'selected', localName: 'billing_agent' },
  'snapshot.published': { ...base, type: 'snapshot.published', version: 2, digest, agents: ['billing_agent'] },
  'snapshot.held': { ...base, type: 'snapshot.held', version: 3, digest, agents: ['billing_agent'], reason: 'routing below its minimum' },
  'session.pinned': { ...base, type: 'session.pinned', sessionId: 's-1', digest },
  'session.upgraded': { ...base, type: 'session.upgraded', sessionId: 's-1', digest, previousDigest: 'sha256-aaaaaaaaaaaaaaaa' },
  'session.ended': { ...base, type: 'session.ended', sessionId: 's-1', digest },
  'session.expired': { ...base, type: 'session.expired', sessionId: 's-1', digest },
  'session.restarted': { ...base, type: 'session.restarted', sessionId: 's-1', digest },
  'tree.built': { ...base, type: 'tree.built', digest },
  'tree.evicted': { ...base, type: 'tree.evicted', digest },
  'routing.evaluated': { ...base, type: 'routing.evaluated', version: 5, digest, accuracy: 1, minAccuracy: 0.9, passed: true, evaluated: 6, held: false },
  'catalog.read': { ...base, type: 'catalog.read', source: 'partners', url: `${peer}/.well-known/ai-catalog.json`, outcome: 'revalidated', depth: 1, entries: 4, cards: 4, nested: 0, ignored: 0 },
  'service.started': { ...base, type: 'service.started', replica: 'host:4242', previousReplica: 'host:4100', restored: { version: 7, pins: 2, alerts: 1 } },
  'replica.leader': { ...base, type: 'replica.leader', replica: 'replica-b', epoch: 3, previousLeader: 'replica-a', alerts: 1 },
  'api.action': { ...base, type: 'api.action', action: 'confirm', actor: { kind: 'person', sub: 'u-7f3a', name: 'Alice Martin', role: 'admin' }, digest, version: 4 },
  'config.reloaded': { ...base, type: 'config.reloaded', trigger: 'signal', sha256: 'ab'.repeat(32), changed: ['allow', 'static'] },
  'config.refused': { ...base, type: 'config.refused', trigger: 'api', sha256: 'cd'.repeat(32), changed: [], problems: ['discovery.yaml:4:3 static: expected a list'] },
  'rollout.started': { ...rollout, type: 'rollout.started', step: 0, share: 5, by: 'auto', reason: 'returns_agent: skill "refunds" removed' },
  'rollout.advanced': { ...rollout, type: 'rollout.advanced', step: 1, share: 25, by: 'auto', reason: 'step 1 (5%) held 600 s and 20 turns within bounds' },
  'rollout.held': { ...rollout, type: 'rollout.held', step: 0, share: 5, by: 'Alice Martin', reason: 'held by an operator' },
  'rollout.resumed': { ...rollout, type: 'rollout.resumed', step: 0, share: 5, by: 'admin-token', reason: 'resumed by an operator' },
  'rollout.promoted': { ...rollout, type: 'rollout.promoted', step: 2, share: 100, by: 'auto', reason: 'step 2 (25%) held 600 s and 20 turns within bounds' },
  'rollout.rolled-back': { ...rollout, type: 'rollout.rolled-back', step: 0, share: 0, by: 'auto', reason: rolledBack },
  'rollout.superseded': { ...rollout, type: 'rollout.superseded', step: 0, share: 0, by: 'auto', reason: 'superseded by another change (billing_agent)' },
  'rollout.withdrawn': { ...rollout, type: 'rollout.withdrawn', step: 0, share: 0, by: 'auto', reason: 'the change it stages is no longer in the selection (its agent changed back or left)' },
};

const say = (e: DiscoveryEvent): { outcome: string; sentence: string; stage: string } => ({
  outcome: eventOutcome(e) as string,
  sentence: describeEvent(e) as string,
  stage: decidingStage(e) as string,
});

test('every event type has an outcome word, a deciding stage and a sentence that is not its type name', () => {
  for (const e of Object.values(SAMPLES) as DiscoveryEvent[]) {
    const { outcome, sentence, stage } = say(e);
    for (const [what, text] of Object.entries({ outcome, sentence, stage })) {
      assert.ok(text.length > 0, `${e.type}: empty ${what}`);
      assert.ok(!(e.type.includes('.') && text.includes(e.type)), `${e.type}: the ${what} is the type's internal name: ${text}`);
      assert.ok(!/undefined|null|NaN|\[object/.test(text), `${e.type}: the ${what} shows a missing value: ${text}`);
    }
    // Words are not doubled ("resolved: resolved:", "routing.evaluated routing.evaluated").
    assert.ok(!/(?:^|\s)([\w-]+)\W+\1(?=\W|$)/i.test(`${outcome} ${sentence}`.replace(/\d+/g, '')), `${e.type}: a word is said twice: "${outcome} ${sentence}"`);
  }
});

test('a routing check says its figure as the CLI does, and what the gate did', () => {
  assert.match(say(SAMPLES['routing.evaluated']).sentence, /100% of 6 labelled cases .*minimum 90%.*v5 may be published/);
  const held = say({ ...SAMPLES['routing.evaluated'], accuracy: 0.5, passed: false, held: true });
  assert.equal(held.outcome, 'held');
  assert.match(held.sentence, /50% of 6 labelled cases.*v5 held back/);
});

test('a resolution is said once, with the condition it clears', () => {
  const { outcome, sentence } = say(SAMPLES['alert.resolved']);
  assert.equal(outcome, 'resolved');
  assert.equal(sentence, `repeated-failures: ${peer} failed 3 refreshes in a row`);
});

test('a restart and a takeover say what was carried over', () => {
  const restart = say(SAMPLES['service.started']);
  assert.equal(restart.outcome, 'restart');
  assert.match(restart.sentence, /after host:4100.*v7, 2 pinned sessions and 1 open alert carried over, not raised again/);
  assert.equal(say({ ...SAMPLES['service.started'], previousReplica: undefined, restored: { version: 0, pins: 0, alerts: 0 } }).outcome, 'start');
  const takeover = say(SAMPLES['replica.leader']);
  assert.equal(takeover.outcome, 'takeover');
  assert.match(takeover.sentence, /replica-b leads now \(epoch 3\), taking over from replica-a; 1 open alert carried over/);
});

test('who did what: an action through the API names its actor (person, admin token, anonymous)', () => {
  const confirm = say(SAMPLES['api.action']);
  assert.equal(confirm.outcome, 'confirmed');
  assert.equal(confirm.sentence, 'Alice Martin (u-7f3a), admin confirmed the held removal (snapshot v4 sha256-3f1c0)');
  const refresh = say({ ...SAMPLES['api.action'], action: 'refresh', actor: { kind: 'admin-token', role: 'admin' }, version: 5 });
  assert.match(refresh.sentence, /^the admin token asked for a discovery pass now \(snapshot v5/);
  const end = say({ ...SAMPLES['api.action'], action: 'session.end', actor: { kind: 'anonymous' }, sessionId: 's-9', digest: undefined, version: undefined });
  assert.equal(end.sentence, 'an anonymous caller (loopback, no tokens) ended session s-9');
  const reload = say({ ...SAMPLES['api.action'], action: 'config.reload', actor: { kind: 'admin-token', role: 'admin' }, digest: undefined, version: undefined });
  assert.deepEqual([reload.outcome, reload.sentence], ['reloaded', 'the admin token asked for a configuration reload (POST /api/config/reload)']);
});

test('a lookalike alert says what it means, then names both agents and origins', () => {
  const message = `http://127.0.0.1:4102/: name "b\u0456lling" looks like "billing" of ${peer}: confusable characters`;
  const e = { ...base, type: 'alert', kind: 'lookalike', key: 'lookalike:http://127.0.0.1:4102/', message, endpoint: 'http://127.0.0.1:4102/' } as DiscoveryEvent;
  assert.equal(say(e).sentence, `looks like an earlier agent of another origin: ${message}`);
});

test('a rollout says what it stages, the share of new sessions, who decided and why', () => {
  const started = say(SAMPLES['rollout.started']);
  assert.equal(started.outcome, 'started');
  assert.equal(started.sentence, 'rollout of returns_agent started: 5 % of new sessions go to snapshot sha256-3f1c0 (returns_agent: skill "refunds" removed)');
  assert.match(say(SAMPLES['rollout.advanced']).sentence, /^rollout of returns_agent advanced to 25 % of new sessions \(step 2\) automatically, on the figures of real calls: step 1/);
  const held = say(SAMPLES['rollout.held']);
  assert.deepEqual([held.outcome, held.stage], ['held', 'rollout (an operator)']);
  assert.equal(held.sentence, 'rollout of returns_agent held at 5 % of new sessions by Alice Martin; an automatic rollback still happens');
  assert.match(say(SAMPLES['rollout.resumed']).sentence, /resumed at 5 % of new sessions by the admin token$/);
  // An automatic rollback names the agent and the figure; an operator's says who.
  const back = say(SAMPLES['rollout.rolled-back']);
  assert.deepEqual([back.outcome, back.stage], ['rolled back', 'rollout (the figures)']);
  assert.equal(back.sentence, `rollout of returns_agent rolled back automatically, on the figures of real calls: ${rolledBack}; new sessions start on the current snapshot sha256-aaaaa again`);
  const byHand = say({ ...SAMPLES['rollout.rolled-back'], by: 'anonymous', reason: 'rolled back by anonymous' });
  assert.equal(byHand.sentence, 'rollout of returns_agent rolled back by an anonymous caller (loopback, no tokens); new sessions start on the current snapshot sha256-aaaaa again');
  assert.match(say(SAMPLES['rollout.promoted']).sentence, /promoted automatically, on the figures of real calls: snapshot sha256-3f1c0 is current for every new session/);
  // The operator's action through the API, and the alert of an automatic rollback.
  const action = say({ ...SAMPLES['api.action'], action: 'rollout.rollback', version: undefined });
  assert.deepEqual([action.outcome, action.sentence], ['rolled back', 'Alice Martin (u-7f3a), admin rolled back the rollout of snapshot sha256-3f1c0']);
  const alert = say({ ...base, type: 'alert', kind: 'rollout-rolled-back', message: `rollout of returns_agent rolled back: ${rolledBack}` } as DiscoveryEvent);
  assert.equal(alert.sentence, `staged rollout stopped: rollout of returns_agent rolled back: ${rolledBack}`);
});
