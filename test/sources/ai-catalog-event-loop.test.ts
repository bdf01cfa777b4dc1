/**
 * The discovery side of issue 24's event-loop bound: a hostile allowlisted AI Catalog of 5,000
 * entries (about 0.9 MB) read by an AI Catalog source, as discovery polls it, never stalls the event loop
 * (`monitorEventLoopDelay({ resolution: 10 })` p99 under 100 ms on top of a control measured just
 * before, once, after a warm-up read of another catalog of the same size); what it reads is unchanged: every record, and the
 * document's RFC 8785 digest equal to the one computed in one piece.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CardCache, MemoryCardStore } from '../../packages/core/src/cache/index.js';
import { exportJWK, generateKeyPair } from 'jose';
import { canonicalJson, sha256Hex, signDetached, type TrustedKey } from '../../packages/core/src/card/index.js';
import { HostPolicy, createCardFetcher, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import { CatalogArtifacts, aiCatalogSource, type CatalogEntry } from '../../packages/core/src/sources/index.js';
import { catalogContent } from '../../packages/core/src/sources/catalog-documents.js';
import { readAiCatalog, readAiCatalogPaced } from '../../packages/core/src/catalog/ai-catalog.js';
import { Pacer, pacedCanonicalSha256 } from '../../packages/core/src/catalog/paced.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';
import { LOOP_DELAY_BOUND_MS, controlDelayP99, loopDelayDuring, measureWithinBound } from '../server/loop-delay.js';

const A2A = 'application/a2a-agent-card+json';
const AI_CATALOG = 'application/ai-catalog+json';

/**
 * 5,000 entries as a hostile publisher may write them within the 1 MiB bound: half of them carry
 * their card inline (each canonicalized and hashed), every one has tags the reader drops with a
 * warning (40,000 warnings in all), and a signature by an unknown key.
 */
const catalogText = (origin: string, prefix: string): string =>
  JSON.stringify({
    specVersion: '1.0',
    host: { displayName: 'Many agents' },
    // Signed by a key nobody here trusts: the signature's payload (RFC 8785 of the whole catalog) is still written.
    signature: 'eyJhbGciOiJFUzI1NiIsImtpZCI6Im5vYm9keSJ9..c2lnbmF0dXJl',
    entries: Array.from({ length: 5_000 }, (_, i) => ({
      identifier: `urn:x:${prefix}${i}`,
      type: A2A,
      ...(i % 2 === 0 ? { url: `/agents/${prefix}${i}.json` } : { data: { name: `Agent ${prefix}${i} “ü”`, url: `${origin}/a2a/${i}`, version: '1.0.0' } }),
      version: `1.${i % 7}.0`,
      tags: Array.from({ length: 8 }, (_, j) => (j % 2 === 0 ? 'a,b' : j)),
    })),
  });

describe('an AI Catalog source reading a 5,000-entry catalog and the event loop', () => {
  let server: JsonServer;
  let policy: HostPolicy;
  let fetcher: CardFetcher;
  before(async () => {
    server = await startJsonServer();
    policy = HostPolicy.from({ allow: [server.origin], allowLoopback: true });
    fetcher = createCardFetcher({ policy, maxBodyBytes: 1_048_576 });
    server.routes.set('/warm.json', { headers: { 'content-type': AI_CATALOG }, body: catalogText(server.origin, 'w') });
    server.routes.set('/big.json', { headers: { 'content-type': AI_CATALOG }, body: catalogText(server.origin, 'a') });
  });
  after(async () => {
    await fetcher?.close();
    await server?.close();
  });

  test(`a refresh never delays the event loop past ${LOOP_DELAY_BOUND_MS} ms (p99), and reads every entry`, async (t) => {
    assert.ok(Buffer.byteLength(catalogText(server.origin, 'a')) < 1_048_576);
    const warm = aiCatalogSource({ id: 'warm', catalogs: [`${server.origin}/warm.json`], fetcher, hostPolicy: policy });
    assert.equal((await warm.refresh()).records.length, 5_000);
    await warm.close();

    // A control, then a first read of the catalog (a new source and store each time: once more when over the bound, `measureWithinBound`).
    const measure = async () => {
      const store = new MemoryCardStore<CatalogEntry>();
      const source = aiCatalogSource({ id: 'big', catalogs: [`${server.origin}/big.json`], fetcher, hostPolicy: policy, store });
      const control = await controlDelayP99();
      const started = performance.now();
      const delay = await loopDelayDuring(() => source.refresh());
      const took = performance.now() - started;
      await source.close();
      return { ...delay, control, took, source, store };
    };
    const { result: state, p99, control, source, store } = await measureWithinBound(measure, ({ p99: p, max, control: c, took }, attempt) =>
      t.diagnostic(`refresh of 5,000 entries in ${took.toFixed(0)} ms (measure ${attempt}): event-loop delay p99 ${p.toFixed(1)} ms, max ${max.toFixed(1)} ms (the issue's ${LOOP_DELAY_BOUND_MS} ms ${p < LOOP_DELAY_BOUND_MS ? 'met' : 'NOT met'}; control p99 ${c.toFixed(1)} ms)`),
    );
    assert.equal(state.ok, true);
    assert.equal(source.catalogs()[0]?.signature, 'unverified');
    assert.equal(state.records.length, 5_000);
    assert.equal(state.records[4_998]?.baseUrl, `${server.origin}/agents/a4998.json`);
    assert.equal(state.records.filter((r) => r.baseUrl.includes('#card=')).length, 2_500);
    const [key] = await store.keys();
    const entry = await store.get(key!);
    assert.equal(entry?.canonicalSha256, sha256Hex(canonicalJson(JSON.parse(catalogText(server.origin, 'a')))), 'the digest of the canonical form is the one computed in one piece');
    assert.ok(p99 < LOOP_DELAY_BOUND_MS + control, `event-loop delay p99 ${p99.toFixed(1)} ms during the refresh (bound ${LOOP_DELAY_BOUND_MS} ms + control ${control.toFixed(1)} ms)`);
  });

  test('the catalog content check gives the same RFC 8785 digest as one canonicalization, and refuses what it refused', async () => {
    const check = catalogContent({}, { maxEntries: 5_000 });
    const docs: unknown[] = [
      JSON.parse(catalogText('https://a.example', 'x')),
      { specVersion: '1.0', entries: [], z: [1, 2.5e-7, 1e21, -0, 'é', { b: [[], {}], a: null }], 'é': true, ['\u20ac']: 'x', a: { '10': 1, '9': 2, '': [true] } },
      { specVersion: '1.0', entries: [{ identifier: 'u:1', type: A2A, data: { name: 'n', nested: [{ y: 1, x: [1, 'two'] }] } }] },
    ];
    for (const doc of docs) {
      const text = JSON.stringify(doc);
      const r = await check.check(Buffer.from(text), 'https://a.example/c.json');
      assert.ok(r.ok, JSON.stringify(r));
      assert.equal(r.canonicalSha256, sha256Hex(canonicalJson(JSON.parse(text))));
    }
    // A pacer of 0 ms turns the loop at every step: the digest is the same however it is sliced.
    const nested = { b: [[[1, [2, { z: 'é', a: [null, true, -1.5e-9] }]]]], a: { '\u20ac': 1, 'é': 2, 'e': 3 } };
    assert.equal(await pacedCanonicalSha256(nested, new Pacer(0)), sha256Hex(canonicalJson(nested)));
    const infinite = await check.check(Buffer.from('{"specVersion":"1.0","entries":[],"n":[1e400]}'), 'https://a.example/c.json');
    assert.equal(infinite.ok, false);
    assert.match(!infinite.ok ? infinite.error.message : '', /has no RFC 8785 form: Infinity is not allowed/);
  });

  test('the reader in slices gives what the reader in one piece gives: entries, warnings, problems and refusals', async () => {
    const docs: string[] = [
      catalogText('https://a.example', 'r'),
      JSON.stringify({ specVersion: '1.0', entries: Array.from({ length: 300 }, (_, i) => (i % 3 === 0 ? { identifier: `u:${i}` } : i % 3 === 1 ? 'not an entry' : { identifier: `u:${i}`, type: A2A, url: 1 })) }),
      JSON.stringify({ specVersion: '2.0', entries: [] }),
      `{"specVersion":"1.0","entries":[],"x":${'['.repeat(45)}${']'.repeat(45)}}`,
      '{"specVersion":"1.0","entries":[{"__proto__":{}}]}',
      JSON.stringify({ specVersion: '1.0', entries: Array.from({ length: 5_001 }, (_, i) => ({ identifier: `u:${i}`, type: A2A, url: `/${i}` })) }),
      '{"specVersion":"1.0","entries":[',
    ];
    for (const text of docs) {
      const bytes = Buffer.from(text);
      assert.deepStrictEqual(await readAiCatalogPaced(bytes, { maxBytes: 1_048_576 }, new Pacer(0)), readAiCatalog(bytes, { maxBytes: 1_048_576 }), text.slice(0, 80));
    }
  });

  test('a signed 5,000-entry catalog: its signature is checked over the payload written in slices, verified as signed and refused once tampered with', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const keys: TrustedKey[] = [{ kid: 'acme-1', jwk: await exportJWK(publicKey) }];
    const { signature: _unknown, ...doc } = JSON.parse(catalogText(server.origin, 's')) as Record<string, unknown>;
    const signed = await signDetached(doc, privateKey, { alg: 'ES256', kid: 'acme-1' });
    const tampered = { ...signed, entries: [...(signed['entries'] as object[]).slice(0, -1), { identifier: 'urn:x:evil', type: A2A, url: '/evil.json' }] };
    server.routes.set('/signed.json', { headers: { 'content-type': AI_CATALOG }, body: JSON.stringify(signed) });
    server.routes.set('/tampered.json', { headers: { 'content-type': AI_CATALOG }, body: JSON.stringify(tampered) });
    for (const [path, verified] of [['/signed.json', true], ['/tampered.json', false]] as const) {
      const source = aiCatalogSource({ id: 'signed', catalogs: [`${server.origin}${path}`], fetcher, hostPolicy: policy, signatures: { mode: 'required', keys } });
      const state = await source.refresh();
      await source.close();
      assert.equal(state.ok, verified, path);
      if (verified) {
        assert.equal(source.catalogs()[0]?.signature, 'verified');
        assert.equal(state.records.length, 5_000);
      } else assert.match(source.catalogs()[0]?.error ?? '', /signature/);
    }
  });

  test('2,500 inline cards read through a card cache: one answer per turn of the event loop, not all in one run of microtasks', async (t) => {
    // An inline card needs no request: answered at once, the whole catalog's cards were checked in
    // one run of microtasks (400 ms here). Counted in turns of the loop, not timed.
    const artifacts = new CatalogArtifacts();
    const source = aiCatalogSource({ id: 'inline', catalogs: [`${server.origin}/big.json`], fetcher, hostPolicy: policy, artifacts });
    const cache = new CardCache({ fetcher: artifacts.fetcher(fetcher), hostPolicy: policy, pins: artifacts, check: { allowLoopback: true } });
    try {
      const keys = (await source.refresh()).records.map((r) => r.baseUrl).filter((u) => u.includes('#card='));
      assert.equal(keys.length, 2_500);
      let turns = 0;
      const { result, p99, max } = await loopDelayDuring(async () => {
        let reading = true;
        const count = (): void => {
          turns++;
          if (reading) setImmediate(count);
        };
        setImmediate(count);
        const read = await Promise.all(keys.map((k) => cache.get(k).then(() => 'read', () => 'refused')));
        reading = false;
        return read;
      });
      t.diagnostic(`2,500 inline cards checked in ${turns} turns of the event loop: delay p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms`);
      // The hostile catalog's inline cards are not valid agent cards: each one is refused, as a fetched one would be.
      assert.deepEqual([...new Set(result)], ['refused']);
      assert.ok(turns >= keys.length, `${turns} turns of the event loop while ${keys.length} inline cards were read`);
    } finally {
      await cache.close();
      await source.close();
    }
  });
});
