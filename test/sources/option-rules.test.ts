/**
 * One rule, one sentence: a value the YAML configuration refuses is refused by the source factory
 * a program calls directly, with the same sentence (both read packages/core/src/rules/).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { staticSource, wellKnownSource } from '../../packages/core/src/sources/index.js';

const q = (value: string): string => JSON.stringify(value);

/** The message parseConfig gives at `path` for the YAML `text`. */
function configSays(text: string, path: string): string {
  try {
    parseConfig(`allow: [https://billing.example.com]\nvocabulary: [{ tag: billing, description: Invoices. }]\n${text}`);
  } catch (err) {
    assert.ok(isDiscoveryError(err));
    const found = err.problems.filter((p) => p.path === path);
    assert.equal(found.length, 1, `one problem at ${path}: ${JSON.stringify(err.problems)}`);
    return found[0]!.message;
  }
  assert.fail(`expected a problem at ${path}`);
}

/** The message a source factory gives at `path`. */
function sourceSays(make: () => unknown, path: string): string {
  try {
    make();
  } catch (err) {
    assert.ok(isDiscoveryError(err));
    const found = err.problems.filter((p) => p.path === path);
    assert.equal(found.length, 1, `one problem at ${path}: ${JSON.stringify(err.problems)}`);
    return found[0]!.message;
  }
  assert.fail(`expected a problem at ${path}`);
}

const agent = { name: 'billing_agent', url: 'https://billing.example.com/', description: 'Invoices.', tags: ['billing'] };

function staticBoth(fields: Record<string, unknown>, field: string): [string, string] {
  const a = { ...agent, ...fields };
  if ('cardUrl' in fields) delete (a as Partial<typeof agent>).url;
  const yaml = `static:\n  - { ${Object.entries(a).map(([k, v]) => `${k}: ${Array.isArray(v) ? `[${v.map((t) => q(String(t))).join(', ')}]` : q(String(v))}`).join(', ')} }\n`;
  return [configSays(yaml, `static[0].${field}`), sourceSays(() => staticSource({ agents: [a] }), `agents[0].${field}`)];
}

describe('the configuration and the sources explain a refused value alike', () => {
  test('URLs and card URLs', () => {
    for (const [fields, field] of [
      [{ url: 'ftp://billing.example.com/' }, 'url'],
      [{ url: 'https://user:pw@billing.example.com/' }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'https://billing.example.com/agent-card.json' }, 'url'],
      [{ cardUrl: 'https://billing.example.com/agent' }, 'cardUrl'],
      [{ cardUrl: 'https://billing.example.com/card.json?v=2' }, 'cardUrl'],
    ] as const) {
      const [config, source] = staticBoth(fields, field);
      assert.equal(config, source, JSON.stringify(fields));
    }
  });

  test('local names and tags', () => {
    for (const [fields, field] of [
      [{ name: 'Billing' }, 'name'],
      [{ name: 'user' }, 'name'],
      [{ tags: ['has space'] }, 'tags[0]'],
      [{ tags: ['a,b'] }, 'tags[0]'],
    ] as const) {
      const [config, source] = staticBoth(fields, field);
      assert.equal(config, source, JSON.stringify(fields));
    }
  });

  test('domains and source ids', () => {
    for (const domain of ['https://a.example', 'a.example/path', 'user@b.example', 'c.example:99999', ' ']) {
      const config = configSays(`sources:\n  wellKnown: { id: partners, domains: [${q(domain)}] }\n`, 'sources.wellKnown.domains[0]');
      assert.equal(config, sourceSays(() => wellKnownSource({ id: 'partners', domains: [domain] }), 'domains[0]'), domain);
    }
    const config = configSays(`sources:\n  wellKnown: { id: "-partners", domains: [a.example] }\n`, 'sources.wellKnown.id');
    assert.equal(config, sourceSays(() => wellKnownSource({ id: '-partners', domains: ['a.example'] }), 'id'));
  });
});
