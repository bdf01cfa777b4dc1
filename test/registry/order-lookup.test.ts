/**
 * The seed's worked example, "two lookups called order_lookup", run for real with ADK JS:
 * a support router with billing and refunds, each needing an order lookup. Models are fakes
 * (FakeScriptedLlm) that emit the same `transfer_to_agent` calls a real model would.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LlmAgent } from '@google/adk';
import { DiscoveryError } from '../../packages/core/src/errors.js';
import { AgentRegistry } from '../../packages/core/src/registry/index.js';
import type { AgentSpec } from '../../packages/core/src/registry/index.js';
import { FakeScriptedLlm } from './fake-llm.js';
import type { FakeCall } from './fake-llm.js';
import { runTurn } from './run-turn.js';

const BILLING_LOOKUP_REPLY = 'Which invoice do you mean?';
const REFUND_LOOKUP_REPLY = 'Order 1042 found; it is eligible for a refund.';

describe('two lookups called order_lookup', () => {
  test('(a) a naive ADK tree: refunds transfers to its own order_lookup, billing\'s answers', async () => {
    const log: FakeCall[] = [];
    const billingLookup = new LlmAgent({
      name: 'order_lookup',
      description: 'Looks up an order for a billing question.',
      model: new FakeScriptedLlm('billing/order_lookup', { reply: BILLING_LOOKUP_REPLY }, log),
    });
    const refundLookup = new LlmAgent({
      name: 'order_lookup',
      description: 'Looks up an order for a refund.',
      model: new FakeScriptedLlm('refunds/order_lookup', { reply: REFUND_LOOKUP_REPLY }, log),
    });
    const billing = new LlmAgent({
      name: 'billing',
      description: 'Answers invoice questions.',
      model: new FakeScriptedLlm('billing', { reply: 'billing here' }, log),
      subAgents: [billingLookup],
    });
    const refunds = new LlmAgent({
      name: 'refunds',
      description: 'Handles refund requests.',
      model: new FakeScriptedLlm('refunds', { transferTo: 'order_lookup' }, log),
      subAgents: [refundLookup],
    });
    // ADK JS accepts the tree: the two lookups are not siblings (it checks no names at all).
    const router = new LlmAgent({
      name: 'router',
      description: 'Routes support requests.',
      model: new FakeScriptedLlm('router', { transferTo: 'refunds' }, log),
      subAgents: [billing, refunds],
    });
    assert.equal(router.findAgent('order_lookup'), billingLookup);

    const events = await runTurn(router, 'I want a refund for order 1042');

    assert.deepEqual(
      events.filter((e) => e.transferTo !== undefined).map((e) => [e.author, e.transferTo]),
      [
        ['router', 'refunds'],
        ['refunds', 'order_lookup'],
      ],
    );
    const answer = events.at(-1)!;
    assert.equal(answer.author, 'order_lookup');
    // The shadowing: refunds asked for its own child, billing's lookup answered.
    assert.equal(answer.text, BILLING_LOOKUP_REPLY);
    assert.deepEqual(
      log.map((c) => c.label),
      ['router', 'refunds', 'billing/order_lookup'],
    );
    // The lookup that ran sits under billing: its prompt offers a hand-back to billing.
    assert.match(log.at(-1)!.systemInstruction, /Agent name: billing\b/);
    assert.doesNotMatch(log.at(-1)!.systemInstruction, /Agent name: refunds\b/);
    // Nothing failed or logged an error; the event author is the only trace, and it is ambiguous.
    assert.ok(events.every((e) => e.error === undefined));
  });

  /** Local LlmAgent specs whose fake models transfer or answer, as in (a). */
  function supportSpecs(log: FakeCall[], lookups: { billing: string; refunds: string }): AgentSpec[] {
    const local = (
      name: string,
      description: string,
      children: string[],
      action: { transferTo: string } | { reply: string },
    ): AgentSpec => ({
      name,
      description,
      version: '1',
      kind: 'local',
      children,
      factory: (spec, kids) =>
        new LlmAgent({ name: spec.name, description: spec.description, model: new FakeScriptedLlm(spec.name, action, log), subAgents: kids }),
    });
    // One factory shared by every lookup spec, differing only in name and description.
    const lookupSpec = (name: string, description: string): AgentSpec =>
      local(name, description, [], { reply: name === 'refund_order_lookup' ? REFUND_LOOKUP_REPLY : BILLING_LOOKUP_REPLY });
    const specs = [
      local('router', 'Routes support requests.', ['billing', 'refunds', 'faq'], { transferTo: 'refunds' }),
      local('billing', 'Answers invoice questions.', [lookups.billing], { reply: 'billing here' }),
      local('refunds', 'Handles refund requests for orders placed in the last 90 days.', [lookups.refunds], {
        transferTo: lookups.refunds,
      }),
      local('faq', 'Answers general questions.', [], { reply: 'faq here' }),
      lookupSpec(lookups.billing, 'Looks up an order for a billing question.'),
    ];
    if (lookups.refunds !== lookups.billing) specs.push(lookupSpec(lookups.refunds, 'Looks up an order for a refund request.'));
    return specs;
  }

  test('(b) the registry refuses the same shape before anything runs', () => {
    const log: FakeCall[] = [];
    // Two specs both called order_lookup cannot even register.
    const twice = supportSpecs(log, { billing: 'order_lookup', refunds: 'order_lookup' });
    assert.throws(
      () => AgentRegistry.of([...twice, twice.at(-1)!]),
      (err: unknown) => err instanceof DiscoveryError && /'order_lookup' is registered twice/.test(err.message),
    );

    // One spec used as a child of both billing and refunds registers (that is allowed) ...
    let factoryCalls = 0;
    const counted = twice.map((s) => ({
      ...s,
      factory: (spec: AgentSpec, kids: Parameters<AgentSpec['factory']>[1]) => {
        factoryCalls += 1;
        return s.factory(spec, kids);
      },
    }));
    const registry = AgentRegistry.of(counted);
    // ... but the tree with both in it is refused before any factory or model runs.
    const err = (() => {
      try {
        registry.buildTree('router');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    assert.ok(err instanceof DiscoveryError);
    assert.equal(err.code, 'ERR_REGISTRY_INVALID');
    assert.equal(err.stage, 'build');
    assert.deepEqual(
      err.problems.map((p) => p.path),
      ['router/refunds/order_lookup'],
    );
    assert.match(err.message, /'order_lookup' appears twice in one tree \(already at router\/billing\/order_lookup\)/);
    assert.match(err.message, /Register a second spec with its own name for this position, e\.g\. 'refunds_order_lookup'/);
    assert.equal(factoryCalls, 0);
    assert.deepEqual(log, []);
  });

  test('(c) the fixed registry builds, and the transfer lands on the refunds lookup', async () => {
    const log: FakeCall[] = [];
    const registry = AgentRegistry.of(supportSpecs(log, { billing: 'billing_order_lookup', refunds: 'refund_order_lookup' }));
    const root = registry.buildTree('router');
    assert.equal(root.findAgent('refund_order_lookup')?.parentAgent?.name, 'refunds');

    const events = await runTurn(root, 'I want a refund for order 1042');

    assert.deepEqual(
      events.filter((e) => e.transferTo !== undefined).map((e) => [e.author, e.transferTo]),
      [
        ['router', 'refunds'],
        ['refunds', 'refund_order_lookup'],
      ],
    );
    const answer = events.at(-1)!;
    assert.equal(answer.author, 'refund_order_lookup');
    assert.equal(answer.text, REFUND_LOOKUP_REPLY);
    assert.deepEqual(
      log.map((c) => c.label),
      ['router', 'refunds', 'refund_order_lookup'],
    );
    assert.match(log.at(-1)!.systemInstruction, /Agent name: refunds\b/);
    assert.ok(events.every((e) => e.error === undefined));
  });
});
