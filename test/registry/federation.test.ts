/**
 * Federation of the ARD search (packages/service/src/registry/federation.ts) against fake ARD
 * registries on loopback (test/registry/fake-ard-registry.ts): `referrals` names the registries
 * it knows (configured peers and those AI Catalogs announce) that the allowlist admits; `auto`
 * asks them with `federation: "none"`, merges their first pages after ours de-duplicated by
 * identifier (ours wins), names each result's registry in `source`, and names the registries
 * that failed, timed out, were refused or skipped — never failing the search.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { AI_REGISTRY_MEDIA_TYPE, type ArdSearchResponse } from '../../packages/core/src/ard/wire.js';
import { createFederation, type Federation } from '../../packages/service/src/registry/federation.js';
import { cardEntry, startFakeArdRegistry, type FakeArdRegistry } from './fake-ard-registry.js';

let east: FakeArdRegistry;
let west: FakeArdRegistry;
let broken: FakeArdRegistry;
let slow: FakeArdRegistry;
let unlisted: FakeArdRegistry;
let redirecting: FakeArdRegistry;

const local: ArdSearchResponse = { results: [cardEntry('urn:air:ours:warranty', 'Warranty', 'https://warranty.example/card.json', { score: 90 })], pageToken: 'local-page-2' };

before(async () => {
  east = await startFakeArdRegistry([
    cardEntry('urn:air:ours:warranty', 'Warranty (east copy)', 'https://east.example/warranty.json'),
    cardEntry('urn:air:east:warranty-plus', 'Warranty Plus', 'https://east.example/plus.json'),
    cardEntry('urn:air:east:billing', 'Billing', 'https://east.example/billing.json'),
  ]);
  west = await startFakeArdRegistry([cardEntry('urn:air:west:warranty', 'West Warranty', 'https://west.example/w.json')]);
  broken = await startFakeArdRegistry();
  broken.answer = () => ({ status: 500, body: { errorCode: 'INTERNAL_ERROR', message: 'down' } });
  slow = await startFakeArdRegistry();
  slow.answer = () => 'hang';
  unlisted = await startFakeArdRegistry([cardEntry('urn:air:evil:warranty', 'Warranty', 'https://evil.example/w.json')]);
  redirecting = await startFakeArdRegistry();
  redirecting.answer = () => ({ status: 307, body: {}, headers: { location: `${unlisted.url}/search` } });
});

after(async () => {
  await Promise.all([east, west, broken, slow, unlisted, redirecting].map((r) => r?.close()));
});

/** A federation that knows east as a peer and west, broken, slow and unlisted as announced; the allowlist admits all but `unlisted`. */
function federation(extra: { maxRegistries?: number; isSelf?: (url: string) => boolean; peers?: { url: string; name?: string }[] } = {}): Federation {
  const policy = HostPolicy.from({ allow: [east.url, west.url, broken.url, slow.url, redirecting.url], allowLoopback: true });
  return createFederation({
    policy,
    peers: extra.peers ?? [{ url: `${east.url}/`, name: 'east' }],
    announced: () => [
      { identifier: 'urn:air:west:registry', displayName: 'West registry', url: west.url, catalog: 'https://west.example/.well-known/ai-catalog.json' },
      { identifier: 'urn:air:broken:registry', url: broken.url, catalog: 'https://broken.example/.well-known/ai-catalog.json' },
      { identifier: 'urn:air:slow:registry', url: slow.url, catalog: 'https://slow.example/.well-known/ai-catalog.json' },
      { identifier: 'urn:air:evil:registry', url: unlisted.url, catalog: 'https://evil.example/.well-known/ai-catalog.json' },
      // Announced twice (a peer too): known once.
      { identifier: 'urn:air:east:again', url: east.url, catalog: 'https://east.example/.well-known/ai-catalog.json' },
    ],
    requestTimeoutMs: 500,
    timeoutMs: 1_500,
    ...(extra.maxRegistries !== undefined && { maxRegistries: extra.maxRegistries }),
    ...(extra.isSelf !== undefined && { isSelf: extra.isSelf }),
  });
}

const counts = () => [east, west, broken, slow, unlisted, redirecting].map((r) => r.requests.length);

test('federation none answers with the local results alone and asks nobody', async () => {
  const f = federation();
  try {
    const before = counts();
    const answer = await f.federate({ query: { text: 'warranty' }, federation: 'none' }, local);
    assert.deepEqual(answer, local);
    assert.deepEqual(counts(), before);
  } finally {
    await f.close();
  }
});

test('federation referrals names the allowlisted registries it knows, peers and announced alike, and asks none of them', async () => {
  const f = federation();
  try {
    const before = counts();
    const answer = await f.federate({ query: { text: 'warranty' }, federation: 'referrals' }, local);
    assert.deepEqual(answer.results, local.results);
    assert.deepEqual(
      answer.referrals?.map((r) => [r.url, r.displayName, r.type]),
      [
        [east.url, 'east', AI_REGISTRY_MEDIA_TYPE],
        [west.url, 'West registry', AI_REGISTRY_MEDIA_TYPE],
        [broken.url, new URL(broken.url).host, AI_REGISTRY_MEDIA_TYPE],
        [slow.url, new URL(slow.url).host, AI_REGISTRY_MEDIA_TYPE],
      ],
    );
    assert.equal(answer.referrals?.[1]?.identifier, 'urn:air:west:registry');
    assert.ok(!answer.referrals?.some((r) => r.url === unlisted.url), 'a registry off the allowlist is never referred to');
    assert.deepEqual(counts(), before);
  } finally {
    await f.close();
  }
});

test('federation auto merges the registries\' answers after ours, de-duplicated (ours wins), with each result\'s source, and names every registry that did not answer', async () => {
  const f = federation();
  const before = counts();
  try {
    const answer = await f.federate({ query: { text: 'warranty' }, federation: 'auto', pageSize: 5 }, local);
    assert.deepEqual(
      answer.results.map((r) => [r.identifier, r.source]),
      [
        ['urn:air:ours:warranty', undefined],
        ['urn:air:east:warranty-plus', east.url],
        ['urn:air:west:warranty', west.url],
      ],
    );
    assert.equal(answer.results[0]!.displayName, 'Warranty', 'our entry wins over the east copy of the same identifier');
    assert.equal(answer.pageToken, 'local-page-2', 'paging stays the local one');
    assert.deepEqual(answer.federation?.duplicates, [{ identifier: 'urn:air:ours:warranty', kept: 'local', dropped: east.url }]);
    const outcomes = Object.fromEntries((answer.federation?.registries ?? []).map((r) => [r.url, r.outcome]));
    assert.deepEqual(outcomes, { [east.url]: 'answered', [west.url]: 'answered', [broken.url]: 'failed', [slow.url]: 'timeout', [unlisted.url]: 'refused' });
    const byUrl = new Map(answer.federation!.registries.map((r) => [r.url, r]));
    assert.equal(byUrl.get(east.url)!.results, 1);
    assert.match(byUrl.get(broken.url)!.message!, /answered 500/);
    assert.match(byUrl.get(unlisted.url)!.message!, /allowlist/);
    // Each registry asked once, with the same query and federation none (no loops); the unlisted one never.
    const asked = east.requests.slice(before[0]);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]!.method, 'POST');
    assert.equal(asked[0]!.path, '/search');
    assert.deepEqual(JSON.parse(asked[0]!.body), { query: { text: 'warranty' }, federation: 'none', pageSize: 5 });
    assert.equal(unlisted.requests.length, before[4]);
    assert.deepEqual([...f.stats()].sort((a, b) => a.outcome.localeCompare(b.outcome)), [
      { outcome: 'answered', count: 2 },
      { outcome: 'failed', count: 1 },
      { outcome: 'refused', count: 1 },
      { outcome: 'timeout', count: 1 },
    ]);
  } finally {
    await f.close();
  }
});

test('federation auto is the default, and asks nobody again on a later page', async () => {
  const f = federation({ peers: [{ url: east.url }] });
  try {
    const first = await f.federate({ query: { text: 'billing' } }, { results: [] });
    assert.deepEqual(first.results.map((r) => r.identifier), ['urn:air:east:billing']);
    const before = counts();
    const later = await f.federate({ query: { text: 'billing' }, pageToken: 'p2' }, { results: [] });
    assert.deepEqual(later.results, []);
    assert.deepEqual(counts(), before);
  } finally {
    await f.close();
  }
});

test('federation never asks itself, follows no redirect, and asks at most maxRegistries registries', async () => {
  const f = federation({ isSelf: (url) => url === east.url, maxRegistries: 2, peers: [{ url: east.url }, { url: redirecting.url, name: 'mover' }] });
  const before = counts();
  try {
    const answer = await f.federate({ query: { text: 'warranty' } }, { results: [] });
    const report = answer.federation!.registries.map((r) => [r.url, r.outcome]);
    assert.deepEqual(report, [
      [east.url, 'refused'],
      [redirecting.url, 'failed'],
      [west.url, 'answered'],
      [broken.url, 'skipped'],
      [slow.url, 'skipped'],
      [unlisted.url, 'refused'],
    ]);
    assert.match(answer.federation!.registries[0]!.message!, /itself/);
    assert.match(answer.federation!.registries[1]!.message!, /redirect/);
    assert.equal(east.requests.length, before[0], 'itself: never asked');
    assert.equal(unlisted.requests.length, before[4], 'the redirect target was never asked');
    assert.deepEqual(answer.results.map((r) => r.identifier), ['urn:air:west:warranty']);
  } finally {
    await f.close();
  }
});
