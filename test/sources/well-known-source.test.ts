import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { wellKnownSource } from '../../packages/core/src/sources/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';

describe('well-known source', () => {
  test('domains become https://<domain>/ records named after the domain', async () => {
    const source = wellKnownSource({ id: 'partners', domains: ['agents.partner.example', 'Partner2.EXAMPLE.', 'p3.example:8443', 'bücher.example'], pollIntervalMs: 60_000 });
    assert.equal(source.kind, 'well-known');
    assert.equal(source.pollIntervalMs, 60_000);
    const state = await source.refresh();
    assert.equal(state.ok, true);
    assert.equal(state.synced, true);
    assert.deepEqual(
      state.records.map((r) => [r.name, r.baseUrl, r.source, r.metadata['domain']]),
      [
        ['agents.partner.example', 'https://agents.partner.example/', 'partners', 'agents.partner.example'],
        ['partner2.example', 'https://partner2.example/', 'partners', 'partner2.example'],
        ['p3.example:8443', 'https://p3.example:8443/', 'partners', 'p3.example:8443'],
        ['xn--bcher-kva.example', 'https://xn--bcher-kva.example/', 'partners', 'xn--bcher-kva.example'],
      ],
    );
    await source.close();
  });

  test('every bad or duplicate domain is reported at once', () => {
    try {
      wellKnownSource({ id: 'partners', domains: ['https://a.example', 'a.example/path', 'user@b.example', '', 'ok.example', 'OK.example', 'c.example:99999'] });
      assert.fail('expected ERR_CONFIG_INVALID');
    } catch (err) {
      assert.ok(isDiscoveryError(err));
      assert.equal(err.code, 'ERR_CONFIG_INVALID');
      assert.deepEqual(
        err.problems.map((p) => p.path),
        ['domains[0]', 'domains[1]', 'domains[2]', 'domains[3]', 'domains[5]', 'domains[6]'],
      );
      assert.match(err.problems[4]!.message, /duplicate of domains\[4\]/);
    }
  });
});
