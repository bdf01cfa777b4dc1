/**
 * `server.registry` (docs/configuration.md): parsed with its defaults, mapped onto the service's
 * options, bounded by the schema (a page size past the spec's 100), and cross-checked (anonymous
 * access to routes that are off).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig, resolveSecrets } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { serviceOptionsFromConfig } from '../../packages/service/src/index.js';

const AGENT = `allow: ["https://billing.example.com"]
vocabulary: [{ tag: billing, description: Invoices. }]
needs: [{ tag: billing }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Answers invoices., tags: [billing] }
`;

function problems(yaml: string): string[] {
  try {
    parseConfig(yaml);
  } catch (err) {
    assert.ok(isDiscoveryError(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
  return [];
}

describe('server.registry', () => {
  test('set keys are kept, the rest default; the service gets them as its registry options', async () => {
    const config = parseConfig(`${AGENT}server: { registry: { anonymous: true, maxEntries: 500, maxPageSize: 50 } }\n`);
    assert.equal(config.server.registry.anonymous, true);
    assert.equal(config.server.registry.maxEntries, 500);
    assert.equal(config.server.registry.maxPageSize, 50);
    assert.equal(config.server.registry.enabled, true);
    assert.equal(config.server.registry.maxTextLength, 512);
    const options = serviceOptionsFromConfig(config, await resolveSecrets(config, {}));
    assert.deepEqual(options.registry, config.server.registry);
  });

  test('bounds: a page size past the spec\'s 100, an unknown key; anonymous on routes that are off', () => {
    assert.match(problems(`${AGENT}server: { registry: { maxPageSize: 101 } }\n`).join('\n'), /^server\.registry\.maxPageSize: /m);
    assert.match(problems(`${AGENT}server: { registry: { maxResults: 5 } }\n`).join('\n'), /server\.registry/);
    assert.match(problems(`${AGENT}server: { registry: { enabled: false, anonymous: true } }\n`).join('\n'), /server\.registry\.anonymous: opens the registry routes to everyone, but server\.registry\.enabled is false/);
    assert.deepEqual(problems(`${AGENT}server: { registry: { enabled: false } }\n`), []);
  });
});
