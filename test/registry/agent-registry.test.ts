import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LlmAgent } from '@google/adk';
import type { BaseAgent } from '@google/adk';
import { DiscoveryError } from '../../packages/core/src/errors.js';
import { AGENT_NAME_PATTERN, AgentRegistry, verifyTree } from '../../packages/core/src/registry/index.js';
import type { AgentSpec } from '../../packages/core/src/registry/index.js';

/** A local spec whose factory builds a plain LlmAgent (no model needed: nothing runs). */
function spec(name: string, children: string[] = [], overrides: Partial<AgentSpec> = {}): AgentSpec {
  return {
    name,
    description: `The ${name} agent.`,
    version: '1',
    kind: 'local',
    children,
    factory: (s, kids) => new LlmAgent({ name: s.name, description: s.description, subAgents: kids }),
    ...overrides,
  };
}

function catchError(fn: () => unknown): DiscoveryError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof DiscoveryError, `expected a DiscoveryError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected an error');
}

describe('AgentRegistry.of: whole-registry validation', () => {
  test('reports every problem in one error, as a list and in the message', () => {
    const specs = [
      spec('Bad-Name'),
      spec('user'),
      spec('faq', [], { description: '  ' }),
      spec('router', ['billing', 'faq', 'ghost']),
      spec('billing', ['refunds']),
      spec('refunds', ['billing']),
      spec('faq'),
    ];
    const err = catchError(() => AgentRegistry.of(specs));
    assert.equal(err.code, 'ERR_REGISTRY_INVALID');
    assert.equal(err.failure, 'config');
    assert.equal(err.stage, 'config');
    assert.deepEqual(err.problems, [
      // The same sentences as the configuration's and the static source's (rules/ids.ts).
      { path: 'specs[0].name', message: 'must be a local name matching ^[a-z][a-z0-9_]{1,47}$ (lower snake case, 2-48 characters), got "Bad-Name"' },
      { path: 'specs[1].name', message: '"user" is reserved by ADK for end-user input' },
      { path: 'specs[2].description', message: "'faq' has an empty description (a parent routes on it)" },
      { path: 'specs[6].name', message: "'faq' is registered twice (first at specs[2])" },
      { path: 'specs[3].children[2]', message: "'router' lists unknown child 'ghost'" },
      { path: 'specs[5].children[0]', message: 'cycle: billing -> refunds -> billing' },
    ]);
    assert.equal(err.path, 'specs[0].name');
    assert.equal(
      err.message,
      [
        'Agent registry invalid (6 problems):',
        ...err.problems.map((p) => `  ${p.path}: ${p.message}`),
      ].join('\n'),
    );
  });

  test('reports each cycle, a self-reference included, and malformed fields', () => {
    const err = catchError(() =>
      AgentRegistry.of([
        spec('alpha', ['alpha']),
        spec('beta', ['gamma']),
        spec('gamma', ['delta']),
        spec('delta', ['beta']),
        { ...spec('epsilon'), version: 3, kind: 'cloud', factory: 'nope', children: ['beta', 'beta', 7] } as unknown as AgentSpec,
        null as unknown as AgentSpec,
      ]),
    );
    assert.deepEqual(err.problems, [
      { path: 'specs[4].version', message: "'epsilon': version must be a string" },
      { path: 'specs[4].kind', message: "'epsilon': kind must be 'local' or 'remote'" },
      { path: 'specs[4].factory', message: "'epsilon': factory must be a function" },
      { path: 'specs[4].children[1]', message: "'epsilon' lists child 'beta' twice" },
      { path: 'specs[4].children[2]', message: "'epsilon': a child must be a registry name (string)" },
      { path: 'specs[5]', message: 'must be an object' },
      { path: 'specs[0].children[0]', message: 'cycle: alpha -> alpha' },
      { path: 'specs[3].children[0]', message: 'cycle: beta -> gamma -> delta -> beta' },
    ]);
  });

  test('allows one spec to be the child of two parents (refused only when both land in one tree)', () => {
    const registry = AgentRegistry.of([
      spec('billing', ['order_lookup']),
      spec('refunds', ['order_lookup']),
      spec('order_lookup'),
    ]);
    assert.deepEqual(registry.roots(), ['billing', 'refunds']);
    assert.equal(registry.buildTree('billing').findAgent('order_lookup')?.parentAgent?.name, 'billing');
    assert.equal(registry.buildTree('refunds').findAgent('order_lookup')?.parentAgent?.name, 'refunds');
  });

  test('names, get and roots; the stored specs are frozen copies', () => {
    const children = ['faq'];
    const router = spec('router', children);
    const registry = AgentRegistry.of([router, spec('faq'), spec('standalone')]);
    assert.deepEqual(registry.names(), ['router', 'faq', 'standalone']);
    assert.deepEqual(registry.roots(), ['router', 'standalone']);
    assert.equal(registry.get('missing'), undefined);
    const stored = registry.get('router')!;
    assert.notEqual(stored, router);
    assert.ok(Object.isFrozen(stored) && Object.isFrozen(stored.children));
    children.push('later');
    assert.deepEqual(registry.get('router')!.children, ['faq']);
  });

  test('the name rule is stricter than ADK JS, so every accepted name is also valid for ADK', () => {
    for (const name of ['ab', 'order_lookup', 'a1', 'x'.repeat(48)]) {
      assert.match(name, AGENT_NAME_PATTERN);
      assert.doesNotThrow(() => new LlmAgent({ name }));
    }
    for (const name of ['a', '_x', '1abc', 'a-b', 'Order', 'a.b', 'x'.repeat(49), 'é_nom']) {
      assert.doesNotMatch(name, AGENT_NAME_PATTERN);
    }
  });
});

describe('AgentRegistry.buildTree', () => {
  /** router{billing{billing_lookup}, refunds{refund_lookup}, faq}, recording factory calls. */
  function recordingRegistry(): { registry: AgentRegistry; calls: string[] } {
    const calls: string[] = [];
    const recorded = (name: string, children: string[] = []): AgentSpec =>
      spec(name, children, {
        factory: (s, kids) => {
          calls.push(s.name);
          // Children are built before their parent: each one is already an agent, not yet parented.
          for (const kid of kids) assert.equal(kid.parentAgent, undefined);
          return new LlmAgent({ name: s.name, description: s.description, subAgents: kids });
        },
      });
    const registry = AgentRegistry.of([
      recorded('router', ['billing', 'refunds', 'faq']),
      recorded('billing', ['billing_lookup']),
      recorded('refunds', ['refund_lookup']),
      recorded('faq'),
      recorded('billing_lookup'),
      recorded('refund_lookup'),
    ]);
    return { registry, calls };
  }

  test('builds children before parents and calls each factory once per node', () => {
    const { registry, calls } = recordingRegistry();
    const root = registry.buildTree('router');
    assert.deepEqual(calls, ['billing_lookup', 'billing', 'refund_lookup', 'refunds', 'faq', 'router']);
    assert.equal(root.name, 'router');
    assert.deepEqual(
      root.subAgents.map((a) => [a.name, a.subAgents.map((b) => b.name)]),
      [
        ['billing', ['billing_lookup']],
        ['refunds', ['refund_lookup']],
        ['faq', []],
      ],
    );
  });

  test('every build makes fresh objects: no instance is shared between two trees', () => {
    const { registry, calls } = recordingRegistry();
    const first = registry.buildTree('router');
    const second = registry.buildTree('router');
    assert.equal(calls.length, 12);
    for (const name of registry.names()) {
      const a = first.findAgent(name);
      const b = second.findAgent(name);
      assert.ok(a && b, name);
      assert.notEqual(a, b, name);
      assert.equal(a.rootAgent, first);
      assert.equal(b.rootAgent, second);
    }
  });

  test('refuses a name placed twice in one tree, before any factory runs, and suggests a second spec', () => {
    const calls: string[] = [];
    const counted = (name: string, children: string[] = []): AgentSpec =>
      spec(name, children, {
        factory: (s, kids) => {
          calls.push(s.name);
          return new LlmAgent({ name: s.name, description: s.description, subAgents: kids });
        },
      });
    const registry = AgentRegistry.of([
      counted('router', ['billing', 'refunds', 'orders']),
      counted('billing', ['order_lookup']),
      counted('refunds', ['order_lookup']),
      counted('orders', ['billing']),
      counted('order_lookup'),
    ]);
    const err = catchError(() => registry.buildTree('router'));
    assert.equal(err.code, 'ERR_REGISTRY_INVALID');
    assert.equal(err.stage, 'build');
    assert.deepEqual(calls, []);
    assert.deepEqual(err.problems, [
      {
        path: 'router/refunds/order_lookup',
        message:
          "'order_lookup' appears twice in one tree (already at router/billing/order_lookup); a transfer to it would always reach the first. " +
          "Register a second spec with its own name for this position, e.g. 'refunds_order_lookup'",
      },
      {
        path: 'router/orders/billing',
        message:
          "'billing' appears twice in one tree (already at router/billing); a transfer to it would always reach the first. " +
          "Register a second spec with its own name for this position, e.g. 'orders_billing'",
      },
    ]);
    assert.match(err.message, /^Cannot build agent tree 'router' \(2 problems\):\n {2}router\/refunds\/order_lookup: /);
  });

  test('refuses a factory that builds an agent with another name', () => {
    const registry = AgentRegistry.of([
      spec('router', ['billing']),
      spec('billing', [], { factory: (s) => new LlmAgent({ name: 'invoices', description: s.description }) }),
    ]);
    const err = catchError(() => registry.buildTree('router'));
    assert.equal(err.stage, 'build');
    assert.deepEqual(err.problems, [
      {
        path: 'router/billing',
        message: "factory for 'billing' built an agent named 'invoices'; the agent must carry its registry name (transfers resolve by name)",
      },
    ]);
  });

  test('refuses a cached leaf: ADK would throw on its second parent, the registry says which factory', () => {
    let cached: BaseAgent | undefined;
    const registry = AgentRegistry.of([
      spec('router', ['order_lookup']),
      spec('order_lookup', [], { factory: (s) => (cached ??= new LlmAgent({ name: s.name, description: s.description })) }),
    ]);
    registry.buildTree('router');
    const err = catchError(() => registry.buildTree('router'));
    assert.deepEqual(err.problems, [
      {
        path: 'router/order_lookup',
        message: "factory for 'order_lookup' returned an agent that already has a parent ('router'), a cached or shared instance; build a new agent on every call",
      },
    ]);
  });

  test("rethrows ADK's second-parent error with context and keeps it as cause", () => {
    const shared = new LlmAgent({ name: 'order_lookup', description: 'Looks orders up.' });
    new LlmAgent({ name: 'elsewhere', subAgents: [shared] });
    const registry = AgentRegistry.of([
      spec('refunds', [], { factory: (s) => new LlmAgent({ name: s.name, description: s.description, subAgents: [shared] }) }),
    ]);
    const err = catchError(() => registry.buildTree('refunds'));
    assert.equal(err.problems.length, 1);
    assert.equal(err.problems[0]!.path, 'refunds');
    assert.match(err.problems[0]!.message, /^factory for 'refunds' threw: Agent "order_lookup" already has a parent agent, current parent: "elsewhere"/);
    assert.match(err.problems[0]!.message, /build a new agent on every call/);
    assert.ok(err.cause instanceof Error);
    assert.match(err.cause.message, /already has a parent agent/);
  });

  test('refuses a factory that returns the same root object twice, or drops its children', () => {
    let cachedRoot: BaseAgent | undefined;
    const registry = AgentRegistry.of([
      spec('singleton', [], { factory: (s) => (cachedRoot ??= new LlmAgent({ name: s.name, description: s.description })) }),
      spec('forgetful', ['faq'], { factory: (s) => new LlmAgent({ name: s.name, description: s.description }) }),
      spec('faq'),
      spec('broken', [], { factory: () => 'agent' as unknown as BaseAgent }),
    ]);
    registry.buildTree('singleton');
    assert.match(catchError(() => registry.buildTree('singleton')).message, /returned the same agent object as in an earlier build/);
    assert.match(catchError(() => registry.buildTree('forgetful')).message, /factory for 'forgetful' did not attach child 'faq'/);
    assert.match(catchError(() => registry.buildTree('broken')).message, /factory for 'broken' returned string, not an ADK agent/);
  });

  test('refuses an unknown root name', () => {
    const registry = AgentRegistry.of([spec('router', ['faq']), spec('faq')]);
    const err = catchError(() => registry.buildTree('support'));
    assert.deepEqual(err.problems, [{ path: 'support', message: "no spec named 'support' is registered (roots: 'router')" }]);
  });
});

describe('verifyTree', () => {
  test('accepts a sound tree', () => {
    const root = new LlmAgent({
      name: 'router',
      subAgents: [new LlmAgent({ name: 'billing', subAgents: [new LlmAgent({ name: 'billing_lookup' })] }), new LlmAgent({ name: 'faq' })],
    });
    assert.doesNotThrow(() => verifyTree(root));
  });

  test('catches a shadowed name: findAgent finds another node first', () => {
    const root = new LlmAgent({
      name: 'router',
      subAgents: [
        new LlmAgent({ name: 'billing', subAgents: [new LlmAgent({ name: 'order_lookup' })] }),
        new LlmAgent({ name: 'refunds', subAgents: [new LlmAgent({ name: 'order_lookup' })] }),
      ],
    });
    const err = catchError(() => verifyTree(root));
    assert.equal(err.code, 'ERR_REGISTRY_INVALID');
    assert.equal(err.stage, 'build');
    assert.deepEqual(err.problems, [
      {
        path: 'router/refunds/order_lookup',
        message:
          "is shadowed: findAgent('order_lookup') from the root finds router/billing/order_lookup, so a transfer_to_agent to 'order_lookup' lands there",
      },
    ]);
  });

  test('catches an object whose rootAgent is another tree', () => {
    const stolen = new LlmAgent({ name: 'faq' });
    const other = new LlmAgent({ name: 'other_root', subAgents: [stolen] });
    const root = new LlmAgent({ name: 'router', subAgents: [new LlmAgent({ name: 'billing' })] });
    // ADK refuses a second parent at construction; the sub-agent array itself is mutable.
    root.subAgents.push(stolen);
    assert.equal(stolen.rootAgent, other);
    const err = catchError(() => verifyTree(root));
    assert.deepEqual(err.problems, [
      { path: 'router/faq', message: "is a sub-agent of 'router' but its parentAgent is 'other_root'" },
      { path: 'router/faq', message: "reports 'other_root' as its root, not 'router': the object belongs to another tree" },
    ]);
  });
});
