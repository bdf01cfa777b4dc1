import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LlmAgent } from '@google/adk';
import { DiscoveryError } from '../../packages/core/src/errors.js';
import { AgentRegistry, RegistryHolder } from '../../packages/core/src/registry/index.js';
import type { AgentSpec } from '../../packages/core/src/registry/index.js';

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

const v1Specs = [spec('router', ['billing']), spec('billing')];
const v2Specs = [spec('router', ['billing', 'refunds']), spec('billing'), spec('refunds')];

function rejected(fn: () => unknown): DiscoveryError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof DiscoveryError);
    return err;
  }
  assert.fail('expected the swap to be rejected');
}

describe('RegistryHolder', () => {
  test('starts at version 1 with the initial registry', () => {
    const initial = AgentRegistry.of(v1Specs);
    const holder = new RegistryHolder(initial, ['router']);
    assert.equal(holder.current, initial);
    assert.equal(holder.version, 1);
    assert.deepEqual(holder.rootNames, ['router']);
  });

  test('a good swap bumps the version and returns every root, built and verified', () => {
    const holder = new RegistryHolder(AgentRegistry.of(v1Specs), ['router']);
    const result = holder.swap(v2Specs);
    assert.equal(result.version, 2);
    assert.equal(holder.version, 2);
    assert.deepEqual(holder.current.names(), ['router', 'billing', 'refunds']);
    const root = result.roots.get('router')!;
    assert.deepEqual(
      root.subAgents.map((a) => a.name),
      ['billing', 'refunds'],
    );
    const next = AgentRegistry.of([...v2Specs, spec('faq')]);
    const third = holder.swap(next, ['router', 'faq']);
    assert.equal(third.version, 3);
    assert.equal(holder.current, next);
    assert.deepEqual([...third.roots.keys()], ['router', 'faq']);
    assert.deepEqual(holder.rootNames, ['router', 'faq']);
  });

  test('invalid specs are rejected with every problem; the running registry and version stay', () => {
    const initial = AgentRegistry.of(v1Specs);
    const holder = new RegistryHolder(initial, ['router']);
    const err = rejected(() => holder.swap([spec('router', ['ghost']), spec('Billing'), spec('user')]));
    assert.equal(err.code, 'ERR_REGISTRY_INVALID');
    assert.equal(err.stage, 'config');
    assert.deepEqual(
      err.problems.map((p) => p.path),
      ['specs[1].name', 'specs[2].name', 'specs[0].children[0]'],
    );
    assert.match(err.message, /^Agent registry version 2 rejected; version 1 stays in service \(3 problems\):\n/);
    assert.ok(err.cause instanceof DiscoveryError);
    assert.equal(holder.current, initial);
    assert.equal(holder.version, 1);
  });

  test('a factory that throws during the root build blocks the swap; every failing root is listed', () => {
    const initial = AgentRegistry.of(v1Specs);
    const holder = new RegistryHolder(initial, ['router']);
    const boom = new Error('model config missing');
    const next = AgentRegistry.of([
      spec('router', ['billing']),
      spec('billing', [], {
        factory: () => {
          throw boom;
        },
      }),
      spec('faq', ['faq_lookup']),
      spec('faq_lookup', [], { factory: (s) => new LlmAgent({ name: 'lookup', description: s.description }) }),
    ]);
    const err = rejected(() => holder.swap(next, ['router', 'faq', 'missing']));
    assert.equal(err.stage, 'build');
    assert.deepEqual(err.problems, [
      { path: 'router/billing', message: "factory for 'billing' threw: model config missing" },
      {
        path: 'faq/faq_lookup',
        message: "factory for 'faq_lookup' built an agent named 'lookup'; the agent must carry its registry name (transfers resolve by name)",
      },
      { path: 'missing', message: "no spec named 'missing' is registered (roots: 'router', 'faq')" },
    ]);
    assert.ok(err.cause instanceof AggregateError);
    assert.equal(((err.cause as AggregateError).errors[0] as Error).cause, boom);
    assert.equal(holder.current, initial);
    assert.equal(holder.version, 1);
    assert.deepEqual(holder.rootNames, ['router']);

    // The next good swap still gets version 2.
    assert.equal(holder.swap(v2Specs).version, 2);
  });

  test('the initial registry must build every root too', () => {
    const registry = AgentRegistry.of(v1Specs);
    assert.throws(() => new RegistryHolder(registry, ['billing', 'nowhere']), /Initial agent registry rejected \(1 problem\):\n {2}nowhere: no spec named 'nowhere'/);
    assert.throws(() => new RegistryHolder(registry, []), /at least one root name is required/);
  });
});
