/**
 * `domains:` and `routing:` in discovery.yaml (#17): defaults, and every cross-field rule that
 * keeps the two-level tree well-formed (tags in the vocabulary and in one domain only, names
 * unique in the whole tree, every needed tag in a domain, the root's cap over the domains).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';

const BASE = `
allow: ["https://billing.example.com"]
vocabulary:
  - { tag: billing, description: Invoices. }
  - { tag: returns, description: Returns. }
  - { tag: warranty, description: Warranty., examples: ["Is serial 1 covered?"] }
needs: [{ tag: billing }, { tag: returns }, { tag: warranty }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Billing., tags: [billing] }
`;

function problems(extra: string): string[] {
  try {
    parseConfig(BASE + extra);
  } catch (err) {
    assert.ok(isDiscoveryError(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
  return [];
}

describe('domains and routing configuration', () => {
  test('defaults: no domains, minAccuracy 0.9, no gate; a domain inherits the cap', () => {
    const plain = parseConfig(BASE);
    assert.deepEqual(plain.domains, []);
    assert.deepEqual(plain.routing, { minAccuracy: 0.9, gate: false });
    const c = parseConfig(`${BASE}
policies: { maxAgents: 8 }
domains:
  - { name: money, description: Money matters., tags: [billing, returns] }
  - { name: hardware, description: Devices., tags: [warranty], maxAgents: 3 }
routing: { minAccuracy: 0.8, gate: true, cases: cases.yaml }
`, { baseDir: '/etc/a2a' });
    assert.deepEqual(c.domains, [
      { name: 'money', description: 'Money matters.', tags: ['billing', 'returns'], maxAgents: 8 },
      { name: 'hardware', description: 'Devices.', tags: ['warranty'], maxAgents: 3 },
    ]);
    assert.deepEqual(c.routing, { minAccuracy: 0.8, gate: true, cases: '/etc/a2a/cases.yaml' });
  });

  test('every rule, all at once', () => {
    const found = problems(`
policies: { maxAgents: 2 }
root: { name: orchestrator }
domains:
  - { name: money, description: Money., tags: [billing, refunds] }
  - { name: billing_agent, description: Clash., tags: [billing] }
  - { name: orchestrator, description: Root clash., tags: [warranty] }
  - { name: money, description: Again., tags: [warranty] }
  - { name: Bad-Name, description: Bad., tags: [warranty] }
routing: { minAccuracy: 1.5 }
`);
    const expect = [
      /^domains\[0\]\.tags\[1\]: "refunds" is not in the vocabulary/,
      /^domains\[1\]\.name: "billing_agent" is also static\[0\]'s name/,
      /^domains\[1\]\.tags\[0\]: "billing" already belongs to domain "money"/,
      /^domains\[2\]\.name: "orchestrator" is the root agent's name/,
      /^domains\[3\]\.name: duplicate domain "money"/,
      /^domains\[3\]\.tags\[0\]: "warranty" already belongs to domain "orchestrator"/,
      /^domains\[4\]\.name: must be a local name/,
      /^needs\[1\]\.tag: "returns" is in no domain/,
      /^domains: lists 5 domains but the root holds at most policies\.maxAgents \(2\)/,
      /^routing\.minAccuracy: /,
    ];
    for (const e of expect) assert.ok(found.some((p) => e.test(p)), `${e} in:\n${found.join('\n')}`);
  });

  test('the gate needs something to evaluate', () => {
    const found = problems('routing: { gate: true }\n'.replace('gate: true', 'gate: true')).concat(
      (() => {
        try {
          parseConfig(BASE.replace(', examples: ["Is serial 1 covered?"]', '') + 'routing: { gate: true }\n');
          return [];
        } catch (err) {
          return isDiscoveryError(err) ? err.problems.map((p) => `${p.path}: ${p.message}`) : [];
        }
      })(),
    );
    assert.deepEqual(found, ['routing.gate: is on but there is nothing to evaluate: give vocabulary examples or routing.cases']);
  });
});
