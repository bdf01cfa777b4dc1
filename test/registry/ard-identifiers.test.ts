/**
 * ARD 0.91's identifier rules (packages/core/src/catalog/identifiers.ts), read and written:
 * `urn:ai:` and `urn:air:` are one identifier (compared, de-duplicated and looked up in the
 * `urn:air:` form, the one we publish), a relative identifier is refused naming its JSON path,
 * and an entry's `type` is read before its earlier name `mediaType`. Real loopback servers: the
 * AI Catalog source reads a `urn:ai:` catalog as it reads a `urn:air:` one, and federation
 * de-duplicates the two forms against each other.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { airIdentifier, canonicalIdentifier, readAiCatalog, relativeIdentifierProblem, sameIdentifier } from '../../packages/core/src/catalog/index.js';
import { HostPolicy, createCardFetcher } from '../../packages/core/src/fetch/index.js';
import type { ArdSearchResponse } from '../../packages/core/src/ard/wire.js';
import { aiCatalogSource } from '../../packages/core/src/sources/index.js';
import { createFederation } from '../../packages/service/src/registry/federation.js';
import { buildAiCatalog } from '../../packages/service/src/http/routes/ai-catalog.js';
import { buildSnapshot } from '../../packages/core/src/snapshot/index.js';
import { snapshotAgent } from '../helpers/cards.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';
import { cardEntry, startFakeArdRegistry, type FakeArdRegistry } from './fake-ard-registry.js';

const A2A = 'application/a2a-agent-card+json';
const bytes = (doc: unknown) => Buffer.from(JSON.stringify(doc));

describe('the identifier rule', () => {
  test('urn:ai: and urn:air: (any case of the prefix) are one identifier, in its urn:air: form; others as given', () => {
    assert.equal(canonicalIdentifier('urn:ai:acme.com:agent:billing'), 'urn:air:acme.com:agent:billing');
    assert.equal(canonicalIdentifier('URN:AI:acme.com:agent:billing'), 'urn:air:acme.com:agent:billing');
    assert.equal(canonicalIdentifier('urn:air:acme.com:agent:billing'), 'urn:air:acme.com:agent:billing');
    assert.equal(canonicalIdentifier('urn:aix:acme.com:x'), 'urn:aix:acme.com:x', 'another namespace is another identifier');
    assert.equal(canonicalIdentifier('https://a.example/#x'), 'https://a.example/#x');
    assert.ok(sameIdentifier('urn:ai:a.com:agent:x', 'urn:air:a.com:agent:x'));
    assert.ok(!sameIdentifier('urn:ai:a.com:agent:x', 'urn:air:a.com:agent:y'));
  });

  test('a relative identifier is refused; a URN or an absolute URI is not', () => {
    for (const id of ['billing', '/api/registry/#ard-registry', '#x', '../a', '1urn:air:x']) assert.match(relativeIdentifierProblem(id) ?? '', /relative reference.*must be absolute/, id);
    for (const id of ['urn:air:a.com:agent:x', 'urn:ai:a.com:x', 'https://a.example/#x', 'did:web:a.example']) assert.equal(relativeIdentifierProblem(id), undefined, id);
  });

  test('our urn:air: identifiers: the host as publisher, its port in the namespace, the name as the trailing segment', () => {
    assert.equal(airIdentifier('https://billing.example.com/', 'agent', 'billing_agent'), 'urn:air:billing.example.com:agent:billing_agent');
    assert.equal(airIdentifier('http://127.0.0.1:4001/x/#card', 'agent', 'a'), 'urn:air:127.0.0.1:agent.4001:a');
    assert.equal(airIdentifier('http://[::1]:80/', 'registry', 'ard registry'), 'urn:air:--1:registry:ard-registry');
  });
});

describe('reading a catalog', () => {
  test('a relative identifier refuses the document, naming the JSON path', () => {
    const r = readAiCatalog(bytes({ specVersion: '1.0', entries: [{ identifier: 'urn:air:a.com:agent:ok', type: A2A, url: '/ok.json' }, { identifier: '/agents/billing', type: A2A, url: '/b.json' }] }));
    assert.ok(!r.ok);
    assert.equal(r.code, 'ERR_CARD_INVALID');
    assert.deepEqual(r.problems.map((p) => p.path), ['entries[1].identifier']);
    assert.match(r.problems[0]!.message, /relative reference \("\/agents\/billing"\)/);
  });

  test('a urn:ai: identifier is read in its urn:air: form', () => {
    const r = readAiCatalog(bytes({ specVersion: '1.0', entries: [{ identifier: 'urn:ai:a.com:agent:x', type: A2A, url: '/x.json' }] }));
    assert.ok(r.ok);
    assert.equal(r.catalog.entries[0]!.identifier, 'urn:air:a.com:agent:x');
    assert.deepEqual(r.warnings, []);
  });

  test('type, else mediaType; both and different: a warning at the entry\'s path, and type wins', () => {
    const r = readAiCatalog(
      bytes({
        specVersion: '1.0',
        entries: [
          { identifier: 'urn:air:a.com:agent:both', type: A2A, mediaType: A2A, url: '/a.json' },
          { identifier: 'urn:air:a.com:agent:old', mediaType: A2A, url: '/b.json' },
          { identifier: 'urn:air:a.com:agent:differ', type: A2A, mediaType: 'application/mcp-server-card+json', url: '/c.json' },
        ],
      }),
    );
    assert.ok(r.ok);
    assert.deepEqual(r.catalog.entries.map((e) => e.type), [A2A, A2A, A2A]);
    assert.deepEqual(r.warnings.map((w) => w.path), ['entries[1].mediaType', 'entries[2].mediaType']);
    assert.match(r.warnings[1]!.message, /differs from type.*type is read/);
  });
});

describe('publishing a catalog', () => {
  test('a relative identifier is refused with its JSON path, never published', () => {
    const snapshot = buildSnapshot([{ ...snapshotAgent('billing_agent'), identifier: 'billing' }], 1, 0);
    assert.throws(
      () => buildAiCatalog(snapshot, { hostName: 'h' }),
      (err: Error & { code?: string; path?: string }) => err.code === 'ERR_CARD_INVALID' && err.path === 'entries[0].identifier' && /entries\[0\]\.identifier is a relative reference/.test(err.message),
    );
  });
});

describe('urn:ai: and urn:air: catalogs and registries (loopback)', () => {
  let site: JsonServer;
  let air: FakeArdRegistry;
  let ai: FakeArdRegistry;
  before(async () => {
    site = await startJsonServer();
    air = await startFakeArdRegistry([cardEntry('urn:air:acme.com:agent:billing', 'Billing', 'https://acme.example/billing.json', { description: 'all' }), cardEntry('urn:air:acme.com:agent:refunds', 'Refunds', 'https://acme.example/refunds.json', { description: 'all' })]);
    ai = await startFakeArdRegistry([
      cardEntry('urn:ai:acme.com:agent:billing', 'Billing (urn:ai copy)', 'https://acme.example/billing.json', { description: 'all' }),
      cardEntry('urn:ai:acme.com:agent:warranty', 'Warranty', 'https://acme.example/warranty.json', { description: 'all' }),
      cardEntry('urn:ai:acme.com:agent:ours', 'Ours (urn:ai copy)', 'https://acme.example/ours.json', { description: 'all' }),
      cardEntry('warranty-relative', 'Relative', 'https://acme.example/relative.json', { description: 'all' }),
    ]);
  });
  after(async () => {
    await Promise.all([site?.close(), air?.close(), ai?.close()]);
  });

  test('the AI Catalog source reads a urn:ai: catalog as it reads the urn:air: one: the same records', async () => {
    const entries = (prefix: string) => [
      { identifier: `${prefix}localhost:agent:billing`, type: A2A, url: '/billing.json' },
      { identifier: `${prefix}localhost:agent:refunds`, type: A2A, url: '/refunds.json' },
    ];
    site.routes.set('/air.json', { body: { specVersion: '1.0', entries: entries('urn:air:') } });
    site.routes.set('/ai.json', { body: { specVersion: '1.0', entries: entries('urn:ai:') } });
    const policy = HostPolicy.from({ allow: [site.origin], allowLoopback: true });
    const fetcher = createCardFetcher({ policy });
    const read = async (path: string) => {
      const source = aiCatalogSource({ id: 'c', catalogs: [`${site.origin}${path}`], fetcher, hostPolicy: policy });
      try {
        const state = await source.refresh();
        assert.equal(state.problems, undefined, path);
        return state.records.map((r) => [r.name, r.baseUrl, r.metadata['identifier']]);
      } finally {
        await source.close();
      }
    };
    try {
      const fromAir = await read('/air.json');
      assert.deepEqual(await read('/ai.json'), fromAir);
      assert.deepEqual(fromAir.map((r) => r[2]), ['urn:air:localhost:agent:billing', 'urn:air:localhost:agent:refunds']);
      // One document listing both forms of one identifier: one identifier, two versions of it (the newest chosen, the other superseded).
      site.routes.set('/mixed.json', { body: { specVersion: '1.0', entries: [{ ...entries('urn:ai:')[0], version: '1.0.0' }, { ...entries('urn:air:')[0], version: '2.0.0', url: '/billing-2.json' }] } });
      const source = aiCatalogSource({ id: 'c', catalogs: [`${site.origin}/mixed.json`], fetcher, hostPolicy: policy });
      const state = await source.refresh();
      await source.close();
      assert.deepEqual(state.records.map((r) => [r.metadata['identifier'], r.baseUrl]), [['urn:air:localhost:agent:billing', `${site.origin}/billing-2.json`]]);
      // A version pinned under the urn:ai: form pins the one identifier.
      const pinned = aiCatalogSource({ id: 'c', catalogs: [`${site.origin}/mixed.json`], fetcher, hostPolicy: policy, versions: { 'urn:ai:localhost:agent:billing': '1.0.0' } });
      const pinnedState = await pinned.refresh();
      await pinned.close();
      assert.deepEqual(pinnedState.records.map((r) => r.baseUrl), [`${site.origin}/billing.json`]);
    } finally {
      await fetcher.close();
    }
  });

  test('federation: urn:ai: results are de-duplicated against urn:air: ones (ours, and another registry\'s), taken in their urn:air: form; a relative identifier is refused by its JSON path', async () => {
    const policy = HostPolicy.from({ allow: [air.url, ai.url], allowLoopback: true });
    const federation = createFederation({ policy, peers: [{ url: air.url, name: 'air' }, { url: ai.url, name: 'ai' }], requestTimeoutMs: 2_000, timeoutMs: 3_000 });
    const local: ArdSearchResponse = { results: [cardEntry('urn:air:acme.com:agent:ours', 'Ours', 'https://acme.example/ours.json')] };
    try {
      const answer = await federation.federate({ query: { text: 'all' }, federation: 'auto' }, local);
      assert.deepEqual(
        answer.results.map((r) => [r.identifier, r.displayName]),
        [
          ['urn:air:acme.com:agent:ours', 'Ours'],
          ['urn:air:acme.com:agent:billing', 'Billing'],
          ['urn:air:acme.com:agent:refunds', 'Refunds'],
          ['urn:air:acme.com:agent:warranty', 'Warranty'],
        ],
      );
      assert.deepEqual(answer.federation?.duplicates, [
        { identifier: 'urn:air:acme.com:agent:billing', kept: air.url, dropped: ai.url },
        { identifier: 'urn:air:acme.com:agent:ours', kept: 'local', dropped: ai.url },
      ]);
      const fromAi = answer.federation?.registries.find((r) => r.url === ai.url);
      assert.equal(fromAi?.outcome, 'answered');
      assert.match(fromAi?.message ?? '', /^results\[3\]\.identifier is a relative reference \("warranty-relative"\).*refused$/);
    } finally {
      await federation.close();
    }
  });
});
