/**
 * `sources.aiCatalogs` and `sources.wellKnown.catalogFirst`: defaults, every mistake at its line
 * and path, the allowlist cross-check, and the mapping to the service's options.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError, type DiscoveryError } from '../../packages/core/src/errors.js';
import { serviceOptionsFromConfig } from '../../packages/service/src/index.js';

const BASE = `allow: [https://agents.example.com, https://partner.example]
vocabulary: [{ tag: billing, description: Invoices. }]
needs: [{ tag: billing }]
`;

function invalid(text: string): DiscoveryError {
  try {
    parseConfig(text, { file: 'test.yaml' });
  } catch (err) {
    assert.ok(isDiscoveryError(err));
    return err;
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

describe('sources.aiCatalogs', () => {
  test('defaults, and the mapping to the service', () => {
    const config = parseConfig(`${BASE}sources:
  aiCatalogs:
    - id: platform
      catalogs: [https://agents.example.com/.well-known/ai-catalog.json]
      versions: { "urn:air:example.com:agent:finance": "2.0.0" }
  wellKnown: { id: partners, domains: [partner.example], catalogFirst: true }
`);
    assert.deepEqual(config.sources.aiCatalogs, [
      {
        id: 'platform',
        catalogs: ['https://agents.example.com/.well-known/ai-catalog.json'],
        domains: [],
        pollIntervalMs: 300_000,
        versions: { 'urn:air:example.com:agent:finance': '2.0.0' },
        maxDepth: 4,
        maxEntries: 5_000,
        maxCatalogs: 50,
        maxBytes: 1_048_576,
        signatures: 'if-present',
      },
    ]);
    assert.equal(config.sources.wellKnown?.catalogFirst, true);
    const options = serviceOptionsFromConfig(config, { credentials: () => undefined, keys: [] } as never);
    assert.equal(options.aiCatalogs?.[0]?.id, 'platform');
    assert.equal(options.wellKnown?.catalogFirst, true);
  });

  test('a catalog source alone is an agent source', () => {
    const config = parseConfig(`allow: [https://agents.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
needs: [{ tag: billing }]
sources: { aiCatalogs: [{ id: c, domains: [agents.example.com] }] }
`);
    assert.equal(config.sources.aiCatalogs.length, 1);
  });

  test('every mistake at its path and line: no catalogs nor domains, a host off the allowlist, a bad URL, a bad mode, a duplicate id', () => {
    const err = invalid(`${BASE}sources:
  aiCatalogs:
    - id: empty
    - id: offlist
      catalogs: [https://elsewhere.example/ai-catalog.json, "not a url"]
      domains: [nowhere.example]
      signatures: always
    - id: empty
      catalogs: [https://agents.example.com/c.json]
`);
    const found = err.problems.map((p) => `${p.line} ${p.path}: ${p.message}`);
    const has = (path: string, text: RegExp) => assert.ok(found.some((f) => f.includes(` ${path}: `) && text.test(f)), `${path} ${text}\n${found.join('\n')}`);
    has('sources.aiCatalogs[0]', /give catalogs .* or domains/);
    has('sources.aiCatalogs[1].catalogs[0]', /allow|allowlist/);
    has('sources.aiCatalogs[1].catalogs[1]', /not an absolute URL/);
    has('sources.aiCatalogs[1].domains[0]', /allow/);
    has('sources.aiCatalogs[1].signatures', /off|if-present|required/);
    has('sources.aiCatalogs[2].id', /already used/);
    assert.ok(err.problems.every((p) => typeof p.line === 'number'), 'each problem has its line');
  });
});
