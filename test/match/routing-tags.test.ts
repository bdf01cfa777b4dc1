/**
 * A static entry's `routingTags`: the reviewed tags an agent is routed by whatever its card's
 * skills are tagged (ADK JS `toA2a` cards say `llm`, Mastra's `tool`). The matcher judges the card
 * on its skills' modes and required capabilities; the card's own tags stay visible (`cardTags`);
 * the snapshot digest changes with the routing tags; config and the static source refuse an
 * entry giving both `tags` and `routingTags`.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { selectAgents, TagVocabulary, type Candidate, type ReviewedAgent, type Selection, type SelectOptions, type Verdict } from '../../packages/core/src/match/index.js';
import { buildSnapshot, snapshotDigest, toSnapshotAgents } from '../../packages/core/src/snapshot/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError, type DiscoveryError } from '../../packages/core/src/errors.js';
import { admitted, entryFor, rawCard, record, type SkillSpec } from './fixtures.js';

const vocabulary = new TagVocabulary([
  { tag: 'returns', description: 'Handles product returns and refunds.' },
  { tag: 'billing', description: 'Answers invoice questions.' },
]);
const needs = [
  { tag: 'returns', inputModes: ['text/plain'], outputModes: ['text/plain'] },
  { tag: 'billing', inputModes: ['text/plain'], outputModes: ['text/plain'] },
];
const base: SelectOptions = { needs, vocabulary };

/** The skills ADK JS `toA2a` builds for an LlmAgent with one tool (agent_card.js: `llm`, then `llm`, `tools`). */
const ADK_SKILLS: SkillSpec[] = [
  { id: 'returns_agent', tags: ['llm'] },
  { id: 'returns_agent-lookup_order', tags: ['llm', 'tools'] },
];

function reviewed(name: string, tags: string[], byRoutingTags: boolean): ReviewedAgent {
  return { source: 'static', name, description: `Reviewed ${name}.`, tags, ...(byRoutingTags && { byRoutingTags: true }), critical: false };
}

/** A static candidate with the record the static source produces for `tags` or `routingTags`. */
function candidate(agent: ReviewedAgent, host: string, options: { skills?: SkillSpec[]; overrides?: Record<string, unknown> } = {}): Candidate {
  const baseUrl = `https://${host}/`;
  const rec = record(agent.name, baseUrl, 'static', {
    description: agent.description,
    [agent.byRoutingTags === true ? 'routingTags' : 'tags']: agent.tags.join(','),
    critical: 'false',
  });
  return { endpoint: admitted(baseUrl, [rec]), entry: entryFor(baseUrl, rawCard(`https://${host}`, { skills: ADK_SKILLS, ...options })) };
}

function reasonOf(v: Verdict | undefined): string {
  assert.ok(v && v.verdict !== 'selected', `expected a refusal, got ${JSON.stringify(v)}`);
  return v.reason;
}

function shown(s: Selection): unknown[] {
  return s.selected.map((a) => [a.localName, a.tags, a.cardTags]);
}

describe('selectAgents: routingTags', () => {
  test('two llm-tagged cards are selected apart by their entries\' routing tags; their own tags stay visible and raise no alert', () => {
    const returns = reviewed('returns_agent', ['returns'], true);
    const billing = reviewed('billing_agent', ['billing'], true);
    const s = selectAgents([candidate(returns, 'returns.example.com'), candidate(billing, 'billing.example.com')], { ...base, reviewed: [returns, billing] });
    assert.deepEqual(shown(s), [
      ['billing_agent', ['billing'], ['llm', 'tools']],
      ['returns_agent', ['returns'], ['llm', 'tools']],
    ]);
    assert.deepEqual(s.alerts, []);
  });

  test('with `tags` instead, the same card does not fit, and its llm tag is reported unknown', () => {
    const returns = reviewed('returns_agent', ['returns'], false);
    const s = selectAgents([candidate(returns, 'returns.example.com')], { ...base, reviewed: [returns] });
    assert.deepEqual(s.selected, []);
    assert.equal(reasonOf(s.verdicts.get('https://returns.example.com/')), 'no skill carries a tag of the reviewed vocabulary');
    assert.deepEqual(
      s.alerts.map((a) => [a.kind, a.message]),
      [
        ['unknown-tags', 'returns_agent: tags outside the reviewed vocabulary are ignored: llm, tools'],
        ['static-unsuitable', 'static agent returns_agent does not fit: no skill carries a tag of the reviewed vocabulary'],
      ],
    );
  });

  test('a card already carrying the tag is still routed by the entry alone: its other tags give it nothing', () => {
    const returns = reviewed('returns_agent', ['returns'], true);
    const s = selectAgents([candidate(returns, 'returns.example.com', { skills: [{ id: 'b', tags: ['billing'] }] })], { ...base, reviewed: [returns] });
    assert.deepEqual(shown(s), [['returns_agent', ['returns'], ['billing']]]);
  });

  test('the modes of its skills must still cover the need', () => {
    const returns = reviewed('returns_agent', ['returns'], true);
    const imageOnly = candidate(returns, 'returns.example.com', { skills: [{ id: 'draw', tags: ['llm'], outputModes: ['image/png'] }] });
    const s = selectAgents([imageOnly], { ...base, reviewed: [returns] });
    assert.deepEqual(s.selected, []);
    assert.equal(reasonOf(s.verdicts.get('https://returns.example.com/')), "the card is routed by its static entry's routingTags and the modes of its skills do not cover in text/plain / out text/plain");
    // A card without skills is judged on its default modes.
    const noSkills = candidate(returns, 'returns.example.com', { skills: [], overrides: { defaultOutputModes: ['image/png'] } });
    assert.match(reasonOf(selectAgents([noSkills], { ...base, reviewed: [returns] }).verdicts.get('https://returns.example.com/')), /routingTags and lists no skills and its default modes do not cover/);
    assert.equal(selectAgents([candidate(returns, 'returns.example.com', { skills: [] })], { ...base, reviewed: [returns] }).selected.length, 1);
  });

  test('required capabilities still apply', () => {
    const returns = reviewed('returns_agent', ['returns'], true);
    const noStream = candidate(returns, 'returns.example.com', { overrides: { capabilities: { streaming: false } } });
    const s = selectAgents([noStream], { ...base, reviewed: [returns], required: { streaming: true } });
    assert.deepEqual(s.selected, []);
    assert.equal(reasonOf(s.verdicts.get('https://returns.example.com/')), 'the card does not advertise streaming, which is required');
    assert.deepEqual(s.alerts.map((a) => a.kind), ['static-unsuitable']);
  });

  test('the match memo keeps the two modes apart for the same card', () => {
    const byTags = reviewed('returns_agent', ['returns'], false);
    const byRouting = reviewed('returns_agent', ['returns'], true);
    const c = candidate(byTags, 'returns.example.com');
    const memo = new WeakMap();
    assert.equal(selectAgents([c], { ...base, reviewed: [byTags], memo }).selected.length, 0);
    assert.equal(selectAgents([c], { ...base, reviewed: [byRouting], memo }).selected.length, 1);
    assert.deepEqual([...memo.get(c.entry.card)!.keys()], ['static:returns', 'routing:returns']);
  });
});

describe('the snapshot digest and routingTags', () => {
  const digestOf = (agent: ReviewedAgent): string => {
    const s = selectAgents([candidate(agent, 'returns.example.com')], { ...base, reviewed: [agent] });
    assert.equal(s.selected.length, 1);
    return buildSnapshot(toSnapshotAgents(s.selected), 1, 0).digest;
  };

  test('changes when the routing tags change, for the same card', () => {
    const one = digestOf(reviewed('returns_agent', ['returns'], true));
    const two = digestOf(reviewed('returns_agent', ['returns', 'billing'], true));
    assert.notEqual(one, two);
    assert.equal(one, digestOf(reviewed('returns_agent', ['returns'], true)), 'the same inputs, the same digest');
  });

  test('an agent routed by its card hashes as before (localName \\0 canonicalSha256)', () => {
    const agent = reviewed('returns_agent', ['returns'], false);
    const s = selectAgents([candidate(agent, 'returns.example.com', { skills: [{ id: 'r', tags: ['returns'] }] })], { ...base, reviewed: [agent] });
    const [a] = toSnapshotAgents(s.selected);
    assert.equal(a!.cardTags, undefined);
    assert.equal(buildSnapshot([a!], 1, 0).digest, snapshotDigest([{ localName: a!.localName, canonicalSha256: a!.canonicalSha256 }]));
    assert.deepEqual(toSnapshotAgents(selectAgents([candidate(reviewed('returns_agent', ['returns'], true), 'returns.example.com')], { ...base, reviewed: [reviewed('returns_agent', ['returns'], true)] }).selected)[0]!.cardTags, ['llm', 'tools']);
  });
});

function configFailure(text: string): DiscoveryError {
  try {
    parseConfig(text, { file: 'test.yaml' });
  } catch (err) {
    assert.ok(isDiscoveryError(err), String(err));
    return err;
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

const CONFIG = (entry: string): string => `allow: [https://returns.example.com]
vocabulary: [{ tag: returns, description: Refunds. }, { tag: billing, description: Invoices. }]
static:
  - { name: returns_agent, url: "https://returns.example.com/", description: Handles returns., ${entry} }
`;

describe('configuration: static[].routingTags', () => {
  test('is parsed as given, without tags', () => {
    const config = parseConfig(CONFIG('routingTags: [returns]'), { file: 'test.yaml' });
    assert.deepEqual(config.static[0]!.routingTags, ['returns']);
    assert.equal(config.static[0]!.tags, undefined);
  });

  test('tags and routingTags together, neither, and a routing tag outside the vocabulary are refused at their paths', () => {
    const both = configFailure(CONFIG('tags: [returns], routingTags: [returns]'));
    assert.deepEqual(
      both.problems.map((p) => [p.path, p.message]),
      [['static[0].routingTags', 'give either tags (carried by its card) or routingTags (whatever its card says), not both']],
    );
    const neither = configFailure(CONFIG('critical: false'));
    assert.deepEqual(
      neither.problems.map((p) => [p.path, p.message]),
      [['static[0].tags', 'is required (the reviewed tags its card carries), unless routingTags gives the tags it is routed by']],
    );
    const outside = configFailure(CONFIG('routingTags: [llm]'));
    assert.deepEqual(outside.problems.map((p) => p.path), ['static[0].routingTags[0]']);
    assert.match(outside.problems[0]!.message, /"llm" is not in the vocabulary.*known tags: returns, billing/);
  });
});

describe('staticSource: routingTags', () => {
  test('its record carries routingTags (not tags); both, or a bad tag, are refused at their paths', () => {
    const source = staticSource({ agents: [{ name: 'returns_agent', url: 'https://returns.example.com/', description: 'Returns.', routingTags: ['returns'] }] });
    assert.deepEqual(source.current().records[0]!.metadata, { description: 'Returns.', routingTags: 'returns', critical: 'false' });
    assert.deepEqual(source.agent('returns_agent')?.routingTags, ['returns']);
    assert.throws(
      () => staticSource({ agents: [{ name: 'returns_agent', url: 'https://returns.example.com/', description: 'Returns.', tags: ['returns'], routingTags: ['returns'] }] }),
      (err: unknown) => isDiscoveryError(err) && err.problems.some((p) => p.path === 'agents[0].routingTags' && /not both/.test(p.message)),
    );
    assert.throws(
      () => staticSource({ agents: [{ name: 'returns_agent', url: 'https://returns.example.com/', description: 'Returns.', routingTags: ['has space'] }] }),
      (err: unknown) => isDiscoveryError(err) && err.problems.some((p) => p.path === 'agents[0].routingTags[0]'),
    );
  });
});
