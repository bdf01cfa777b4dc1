/**
 * Routing domains (#17): when the cap bites, the tree splits by domain instead of dropping
 * agents. A 40-agent catalog under a root cap of 8 with four domains builds a two-level tree
 * with tree-wide unique names and every agent reachable; without domains the cap still
 * truncates deterministically; the seed's order_lookup shadowing stays refused at two levels.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { BaseAgent } from '@google/adk';
import { InMemoryRunner, RoutedAgent } from '@google/adk';
import { buildDomainRouter, buildRootAgent, explainRoute, snapshotTreeBuilder } from '../../packages/core/src/adk/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { selectAgents, TagVocabulary } from '../../packages/core/src/match/index.js';
import type { RoutingDomain } from '../../packages/core/src/match/index.js';
import { verifyTree } from '../../packages/core/src/registry/index.js';
import { StandInAgent, standInCandidates, standInSnapshot } from '../../packages/core/src/routing/index.js';
import { buildSnapshot, snapshotDigest } from '../../packages/core/src/snapshot/index.js';
import type { Snapshot } from '../../packages/core/src/snapshot/index.js';

const policy = HostPolicy.from({ allow: ['https://*.stand-in.invalid'] });
const DOMAINS = ['billing', 'orders', 'hardware', 'accounts'] as const;
/** 40 tags t00..t39, ten per domain (t00-t09 billing, ...), each with its own keyword. */
const tags = Array.from({ length: 40 }, (_, i) => `t${String(i).padStart(2, '0')}`);
const vocabulary = tags.map((t) => ({ tag: t, description: `Requests about ${t}.`, keywords: [`kw${t}`] }));
const needs = tags.map((tag) => ({ tag }));
const peers = tags.map((t, i) => ({ name: `agent_${String(i).padStart(2, '0')}`, tags: [t] }));
const domains: RoutingDomain[] = DOMAINS.map((d, k) => ({ name: `${d}_desk`, description: `The ${d} desk.`, tags: tags.slice(k * 10, k * 10 + 10), maxAgents: 12 }));

function namesOf(root: BaseAgent): string[] {
  const out: string[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const a = stack.pop()!;
    out.push(a.name);
    stack.push(...a.subAgents);
  }
  return out;
}

describe('routing domains', () => {
  test('40 agents, a root cap of 8, four domains: a two-level tree, unique names, every agent reachable', async () => {
    const snapshot = standInSnapshot(peers, { vocabulary, needs, maxAgents: 8, domains });
    assert.equal(snapshot.agents.length, 40, 'no agent is dropped: the tree splits instead');
    assert.deepEqual(snapshot.domains?.map((d) => [d.name, d.agents.length]), DOMAINS.map((d) => [`${d}_desk`, 10]));
    const hints = vocabulary;
    const build = snapshotTreeBuilder({ root: { kind: 'routed', hints }, policy });
    try {
      const root = build(snapshot); // built through the registry, verified with verifyTree
      assert.equal(root.subAgents.length, 4, 'the root holds one sub-router per domain, within its cap of 8');
      assert.ok(root.subAgents.every((d) => d instanceof RoutedAgent && d.subAgents.length === 10));
      const names = namesOf(root);
      assert.equal(names.length, 1 + 4 + 40);
      assert.equal(new Set(names).size, names.length, 'names are unique in the whole tree');
      for (const a of snapshot.agents) {
        assert.equal(root.findAgent(a.localName)?.parentAgent?.name, a.domain, `${a.localName} is found under its domain`);
        const route = explainRoute(root, `please help with kw${a.tags[0]}`);
        assert.equal(route?.agent, a.localName, `a request for ${a.tags[0]} reaches ${a.localName}`);
        assert.equal(route?.domain, a.domain);
      }
    } finally {
      await build.close();
    }
  });

  test('a real turn goes root → domain sub-router → agent (RoutedAgent inside RoutedAgent)', async () => {
    const snapshot = standInSnapshot(peers, { vocabulary, needs, maxAgents: 8, domains });
    const kind = { kind: 'routed' as const, hints: vocabulary };
    const leaf = (name: string) => new StandInAgent({ name, description: name });
    const root = buildRootAgent('orchestrator', snapshot, snapshot.domains!.map((d) => buildDomainRouter(d.name, snapshot, d.agents.map(leaf), kind)), kind);
    verifyTree(root);
    const runner = new InMemoryRunner({ agent: root, appName: 'domains_test' });
    const authors: string[] = [];
    for await (const ev of runner.runEphemeral({ userId: 'u', newMessage: { role: 'user', parts: [{ text: 'about kwt27 please' }] } })) authors.push(ev.author ?? '');
    assert.deepEqual(authors, ['agent_27']);
  });

  test('without domains the same catalog keeps the deterministic truncation (cap 8, by name)', () => {
    const selection = selectAgents(standInCandidates(peers, needs), { needs, vocabulary: new TagVocabulary(vocabulary), maxAgents: 8 });
    assert.deepEqual(selection.selected.map((s) => s.localName), peers.slice(0, 8).map((p) => p.name));
    assert.ok(selection.selected.every((s) => s.domain === undefined));
    const cap = selection.alerts.filter((a) => a.kind === 'cap-reached');
    assert.equal(cap.length, 1);
    assert.match(cap[0]!.message, /the cap of 8 agents per tree left out: agent_08, agent_09/);
    const snapshot = standInSnapshot(peers, { vocabulary, needs, maxAgents: 8 });
    assert.equal(snapshot.domains, undefined, 'one level');
    assert.equal(snapshot.digest, snapshotDigest(snapshot.agents), 'the one-level digest is the one it always was');
  });

  test('a domain over its own cap drops deterministically, with an alert naming the domain', () => {
    const small = domains.map((d) => ({ ...d, maxAgents: 3 }));
    const selection = selectAgents(standInCandidates(peers, needs), { needs, vocabulary: new TagVocabulary(vocabulary), maxAgents: 8, domains: small });
    assert.equal(selection.selected.length, 12);
    assert.deepEqual(selection.selected.filter((s) => s.domain === 'billing_desk').map((s) => s.localName), ['agent_00', 'agent_01', 'agent_02']);
    assert.ok(selection.alerts.some((a) => a.kind === 'cap-reached' && /the cap of 3 agents in domain billing_desk left out: agent_03/.test(a.message)));
  });

  test('an agent whose tags span domains goes to the first domain in configuration order, never two branches', () => {
    const spanning = [...peers.slice(0, 2), { name: 'combo_agent', tags: ['t35', 't05'] }];
    const snapshot = standInSnapshot(spanning, { vocabulary, needs, maxAgents: 8, domains });
    assert.equal(snapshot.agents.find((a) => a.localName === 'combo_agent')?.domain, 'billing_desk', 't05 is billing, listed before accounts (t35)');
    assert.deepEqual(snapshot.domains?.map((d) => d.name), ['billing_desk', 'accounts_desk'].filter((n) => snapshot.domains!.some((d) => d.name === n)));
    assert.equal(snapshot.domains?.flatMap((d) => d.agents).filter((n) => n === 'combo_agent').length, 1);
  });

  test('the digest depends on names, card hashes and the domain layout only', () => {
    const a = standInSnapshot(peers, { vocabulary, needs, maxAgents: 8, domains });
    const b = standInSnapshot(peers, { vocabulary, needs, maxAgents: 8, domains });
    assert.equal(a.digest, b.digest);
    const swapped = [domains[1]!, domains[0]!, domains[2]!, domains[3]!];
    assert.notEqual(standInSnapshot(peers, { vocabulary, needs, maxAgents: 8, domains: swapped }).digest, a.digest, 'domain order is part of the layout');
    const renamed = domains.map((d, i) => (i === 0 ? { ...d, name: 'money_desk' } : d));
    assert.notEqual(standInSnapshot(peers, { vocabulary, needs, maxAgents: 8, domains: renamed }).digest, a.digest);
    const reworded = domains.map((d) => ({ ...d, description: `${d.description} (reworded)` }));
    assert.equal(standInSnapshot(peers, { vocabulary, needs, maxAgents: 8, domains: reworded }).digest, a.digest, 'descriptions are reviewed text, not identity');
    assert.notEqual(snapshotDigest(a.agents), a.digest, 'a two-level digest differs from the one-level one over the same cards');
  });

  test('a discovered agent named like a domain is excluded (names stay unique in the tree)', () => {
    const selection = selectAgents(standInCandidates([...peers.slice(0, 3), { name: 'billing_desk', tags: ['t01'] }], needs), {
      needs,
      vocabulary: new TagVocabulary(vocabulary),
      maxAgents: 8,
      domains,
    });
    assert.ok(!selection.selected.some((s) => s.localName === 'billing_desk'));
    assert.ok(selection.alerts.some((a) => a.kind === 'name-collision' && /routing domain/.test(a.message)));
  });

  test("the seed's order_lookup shadowing stays refused at two levels", () => {
    const base = standInSnapshot(
      [
        { name: 'order_lookup', tags: ['t01'] },
        { name: 'agent_20', tags: ['t20'] },
      ],
      { vocabulary, needs, maxAgents: 8, domains },
    );
    const build = snapshotTreeBuilder({ root: { kind: 'routed', hints: vocabulary }, policy });
    const refused = (snapshot: Snapshot, pattern: RegExp) =>
      assert.throws(
        () => build(snapshot),
        (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_REGISTRY_INVALID' && pattern.test(err.message),
      );
    // A layout placing order_lookup under two sub-routers (billing and hardware): refused before any factory runs.
    const twice: Snapshot = { ...base, domains: [base.domains![0]!, { ...base.domains![1]!, agents: ['agent_20', 'order_lookup'] }] };
    refused(twice, /'order_lookup' appears twice in one tree/);
    // A sub-router named like an agent: two specs with one name.
    const clash: Snapshot = { ...base, domains: [{ ...base.domains![0]!, name: 'agent_20' }, base.domains![1]!] };
    refused(clash, /'agent_20' is registered twice/);
    // A hand-built two-level tree with a lookup under each of two sub-routers: verifyTree reports the shadowing.
    const kind = { kind: 'routed' as const, hints: vocabulary };
    const hand = buildSnapshot(base.agents, 1, 0, domains);
    const lookup = () => new StandInAgent({ name: 'order_lookup', description: 'Looks up an order.' });
    const root = buildRootAgent('router', hand, [buildDomainRouter('billing_desk', hand, [lookup()], kind), buildDomainRouter('hardware_desk', hand, [lookup()], kind)], kind);
    assert.throws(() => verifyTree(root), /router\/hardware_desk\/order_lookup: is shadowed: findAgent\('order_lookup'\) from the root finds router\/billing_desk\/order_lookup/);
  });
});
