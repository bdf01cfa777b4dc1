import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveEndpoints } from '../../packages/core/src/resolve/index.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { record } from '../match/fixtures.js';

const policy = HostPolicy.from({ allow: ['https://agents.example.com', 'https://*.partner.example.net', 'https://billing.example.com'] });

describe('resolveEndpoints', () => {
  test('two sources spelling the same endpoint differently give one endpoint with both provenances, sources in order', () => {
    const fromStatic = record('warranty', 'HTTPS://Agents.Example.com', 'static', { description: 'Reviewed.' });
    const fromCatalog = record('Warranty Agent', 'https://agents.example.com/', 'catalog');
    const fromWellKnown = record('agents.example.com', 'https://AGENTS.example.com.:443/?utm=x#frag', 'partners');
    const { admitted, refused } = resolveEndpoints([[fromStatic], [fromCatalog], [fromWellKnown]], policy);
    assert.deepEqual(refused, []);
    assert.equal(admitted.length, 1);
    const [endpoint] = admitted;
    assert.equal(endpoint!.baseUrl, 'https://agents.example.com/');
    // Provenance: every record kept as proposed (not rewritten), in source priority order.
    assert.deepEqual(endpoint!.records, [fromStatic, fromCatalog, fromWellKnown]);
    assert.equal(endpoint!.records[0], fromStatic);
    assert.deepEqual(endpoint!.sources, ['static', 'catalog', 'partners']);
  });

  test('sources are listed once each, in the order of the source lists', () => {
    const { admitted } = resolveEndpoints(
      [
        [record('a', 'https://agents.example.com/v1', 'catalog'), record('b', 'https://agents.example.com/v1/', 'catalog')],
        [record('c', 'https://agents.example.com/v1/', 'static')],
      ],
      policy,
    );
    assert.equal(admitted.length, 1);
    assert.equal(admitted[0]!.baseUrl, 'https://agents.example.com/v1/');
    assert.deepEqual(admitted[0]!.sources, ['catalog', 'static']);
    assert.deepEqual(
      admitted[0]!.records.map((r) => r.name),
      ['a', 'b', 'c'],
    );
  });

  test('different paths on one host are different endpoints', () => {
    const { admitted } = resolveEndpoints([[record('a', 'https://agents.example.com/v1', 's'), record('b', 'https://agents.example.com/v2', 's')]], policy);
    assert.deepEqual(
      admitted.map((e) => e.baseUrl),
      ['https://agents.example.com/v1/', 'https://agents.example.com/v2/'],
    );
  });

  test('hosts the allowlist refuses are reported with their code and the record, and never admitted', () => {
    const outside = record('evil', 'https://evil.test/', 'catalog');
    const lookalike = record('lookalike', 'https://agents.example.com.evil.test/', 'catalog');
    const userinfo = record('confused', 'https://agents.example.com@evil.test/', 'catalog');
    const plain = record('plain', 'http://agents.example.com/', 'catalog');
    const apex = record('apex', 'https://partner.example.net/', 'partners');
    const port = record('port', 'https://agents.example.com:8443/', 'catalog');
    const good = record('good', 'https://a.partner.example.net/', 'partners');
    const { admitted, refused } = resolveEndpoints([[outside, lookalike, userinfo, plain], [apex, port, good]], policy);
    assert.deepEqual(
      admitted.map((e) => e.baseUrl),
      ['https://a.partner.example.net/'],
    );
    assert.deepEqual(
      refused.map((r) => [r.record, r.code]),
      [
        [outside, 'ERR_HOST_NOT_ALLOWED'],
        [lookalike, 'ERR_HOST_NOT_ALLOWED'],
        [userinfo, 'ERR_HOST_NOT_ALLOWED'],
        [plain, 'ERR_INSECURE_URL'],
        [apex, 'ERR_HOST_NOT_ALLOWED'],
        [port, 'ERR_HOST_NOT_ALLOWED'],
      ],
    );
    assert.equal(refused[0]!.record, outside);
    assert.match(refused[0]!.reason, /evil\.test.*not in the allowlist/);
    assert.match(refused[2]!.reason, /username or password/);
    // The reason never echoes credentials back.
    assert.ok(refused.every((r) => !r.reason.includes('agents.example.com@')));
  });

  test('a refused spelling does not stop an allowed spelling of the same host from being admitted', () => {
    const { admitted, refused } = resolveEndpoints(
      [[record('x', 'http://billing.example.com/', 'catalog')], [record('billing', 'https://billing.example.com', 'static')]],
      policy,
    );
    assert.equal(refused.length, 1);
    assert.equal(admitted.length, 1);
    assert.deepEqual(admitted[0]!.sources, ['static']);
  });

  test('output is sorted by base URL whatever the input order, and frozen all the way down', () => {
    const records = [
      record('z', 'https://z.partner.example.net/', 's1'),
      record('b', 'https://billing.example.com/', 's1'),
      record('a', 'https://agents.example.com/', 's2'),
      record('m', 'https://m.partner.example.net/', 's2'),
      record('bad', 'https://nope.test/', 's2'),
    ];
    const forward = resolveEndpoints([records.slice(0, 2), records.slice(2)], policy);
    const backward = resolveEndpoints([[...records].reverse()], policy);
    const expected = ['https://agents.example.com/', 'https://billing.example.com/', 'https://m.partner.example.net/', 'https://z.partner.example.net/'];
    assert.deepEqual(
      forward.admitted.map((e) => e.baseUrl),
      expected,
    );
    assert.deepEqual(
      backward.admitted.map((e) => e.baseUrl),
      expected,
    );
    for (const result of [forward, backward]) {
      assert.ok(Object.isFrozen(result));
      assert.ok(Object.isFrozen(result.admitted));
      assert.ok(Object.isFrozen(result.refused));
      for (const e of result.admitted) {
        assert.ok(Object.isFrozen(e) && Object.isFrozen(e.records) && Object.isFrozen(e.sources));
      }
      assert.throws(() => (result.admitted as unknown as unknown[]).push({}), TypeError);
      assert.throws(() => ((result.admitted[0] as unknown as { baseUrl: string }).baseUrl = 'https://evil.test/'), TypeError);
      assert.throws(() => (result.admitted[0]!.records as unknown as unknown[]).push(records[4]), TypeError);
    }
  });

  test('the input lists are not modified', () => {
    const list = [record('a', 'HTTPS://Agents.Example.com', 's'), record('b', 'https://evil.test/', 's')];
    const copy = [...list];
    resolveEndpoints([list], policy);
    assert.deepEqual(list, copy);
    assert.equal(list[0]!.baseUrl, 'HTTPS://Agents.Example.com');
  });

  test('no sources, or an empty allowlist, admit nothing', () => {
    assert.deepEqual(resolveEndpoints([], policy), { admitted: [], refused: [] });
    const none = resolveEndpoints([[record('a', 'https://agents.example.com/', 's')]], HostPolicy.from({ allow: [] }));
    assert.equal(none.admitted.length, 0);
    assert.equal(none.refused[0]!.code, 'ERR_HOST_NOT_ALLOWED');
  });
});

describe('resolveEndpoints: refused entries', () => {
  // Refused entries are shared with every consumer (event listeners, the dashboard): frozen.
  test('refused entries are frozen like admitted ones', () => {
    const { refused } = resolveEndpoints([[record('evil', 'https://evil.test/', 'catalog')]], policy);
    assert.equal(refused.length, 1);
    assert.ok(Object.isFrozen(refused[0]), 'refused[0] should be frozen');
  });
});
