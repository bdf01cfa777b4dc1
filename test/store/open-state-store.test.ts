/**
 * The store description (`store:` in the configuration, the argument of openStateStore): one
 * rule, so the configuration and the store refuse the same descriptions with the same sentence,
 * and no refusal shows any part of a password.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { openStateStore } from '../../packages/store/src/index.js';

const AGENT = `allow: [https://billing.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Answers invoices., tags: [billing] }
`;

/** What the configuration says about `store: <spec>`. */
function configSays(spec: string): string {
  try {
    parseConfig(`${AGENT}store: ${JSON.stringify(spec)}\n`);
  } catch (err) {
    assert.ok(isDiscoveryError(err));
    const found = err.problems.filter((p) => p.path === 'store');
    assert.equal(found.length, 1, JSON.stringify(err.problems));
    return `store: ${found[0]!.message}`;
  }
  assert.fail(`the configuration accepted ${spec}`);
}

/** What openStateStore says about `spec`. */
async function storeSays(spec: string): Promise<string> {
  try {
    const store = await openStateStore(spec);
    await store.close();
  } catch (err) {
    assert.ok(isDiscoveryError(err));
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    return err.message;
  }
  assert.fail(`openStateStore accepted ${spec}`);
}

describe('store descriptions', () => {
  test('the configuration and openStateStore refuse a description with the same sentence', async () => {
    for (const spec of ['redis://cache', 'sqlite:', 'postgres://a2a:hunter2@db.example.com/a2a', 'postgres://db.example.com:99999/a2a']) {
      assert.equal(configSays(spec), await storeSays(spec), spec);
    }
  });

  test('a refusal shows no part of a password, whatever characters it holds', async () => {
    for (const [spec, secret] of [
      ['redis://user:pa:ss@cache.example.com', 'pa'],
      ['redis://user:se/cret@cache.example.com', 'se/cret'],
      ['postgres://a2a:se/cret@db.example.com/a2a', 'se/cret'],
    ] as const) {
      for (const message of [configSays(spec), await storeSays(spec)]) {
        assert.ok(!message.includes(`:${secret}`), `${message} shows the password of ${spec}`);
        assert.match(message, /REDACTED@/, message);
      }
    }
  });
});
