/**
 * probeCatalog with an injected fetcher (no network): entries read as the registry source reads
 * them, admitted as the resolver admits them, duplicates merged, the entry cap and the caller's
 * signal honoured, and an unreadable catalog reported by path with nothing fetched.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { CardFetcher, FetchResult } from '../../packages/core/src/fetch/index.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { probeCatalog } from '../../packages/core/src/probe/index.js';
import { cardFor } from '../helpers/cards.js';

const policy = HostPolicy.from({ allow: ['https://*.example.com'] });

/** A fetcher that serves a valid card for every URL under `*.example.com` and records each request. */
function fakeFetcher(): CardFetcher & { urls: string[] } {
  const urls: string[] = [];
  return {
    urls,
    async fetch(url, init): Promise<FetchResult> {
      if (init?.signal?.aborted) throw new Error('aborted');
      urls.push(url);
      const origin = new URL(url).origin;
      return { url, status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(cardFor({ origin }, 'a'))), durationMs: 1 };
    },
    async close() {},
  };
}

describe('probeCatalog', () => {
  test('each entry: accepted, refused at source (allowlist or URL kind), merged duplicates; only admitted endpoints are fetched', async () => {
    const fetcher = fakeFetcher();
    const r = await probeCatalog(
      JSON.stringify({
        agents: [
          { name: 'a', url: 'https://a.example.com/' },
          { name: 'b', url: 'https://b.other.test/' },
          { name: 'a again', url: 'https://A.example.com' },
          { name: 'card', cardUrl: 'https://c.example.com/cards/c.json' },
          { name: 'wrong kind', url: 'https://d.example.com/card.json' },
        ],
      }),
      { policy, fetcher, interfacePolicy: policy },
    );
    assert.deepEqual(r.problems, []);
    assert.deepEqual(
      r.entries.map((e) => [e.name, e.report?.stage, e.duplicateOf ?? null]),
      [
        ['a', 'selected', null],
        ['b', 'source', null],
        ['a again', 'selected', 0],
        ['card', 'selected', null],
        ['wrong kind', 'source', null],
      ],
    );
    assert.equal(r.entries[2]!.endpoint, 'https://a.example.com/');
    assert.equal(r.entries[4]!.report!.problems[0]!.path, 'agents[4].url');
    assert.match(r.entries[1]!.report!.problems[0]!.message, /not in the allowlist/);
    assert.deepEqual([r.accepted, r.refused], [3, 2]);
    assert.ok(fetcher.urls.every((u) => !u.includes('other.test')), fetcher.urls.join(' '));
    assert.ok(fetcher.urls.includes('https://c.example.com/cards/c.json'), 'a card URL is fetched exactly there');
  });

  test('past maxEntries, and once the signal aborted, entries are listed as not probed', async () => {
    const agents = Array.from({ length: 5 }, (_, i) => ({ name: `n${i}`, url: `https://n${i}.example.com/` }));
    const capped = await probeCatalog(JSON.stringify({ agents }), { policy, fetcher: fakeFetcher(), maxEntries: 2 });
    assert.deepEqual(capped.entries.map((e) => (e.report ? e.report.stage : 'skipped')), ['selected', 'selected', 'skipped', 'skipped', 'skipped']);
    assert.match(capped.entries[2]!.skipped!, /first 2 endpoints/);

    const controller = new AbortController();
    controller.abort(new Error('the inspection deadline of 10 ms passed'));
    const fetcher = fakeFetcher();
    const aborted = await probeCatalog(JSON.stringify({ agents }), { policy, fetcher, signal: controller.signal });
    assert.ok(aborted.entries.every((e) => e.skipped === 'not probed: the inspection deadline of 10 ms passed'));
    assert.deepEqual(fetcher.urls, []);
  });

  test('an unreadable catalog: every problem by path, nothing fetched; a next page is noted, not followed', async () => {
    const fetcher = fakeFetcher();
    const bad = await probeCatalog('{"agents": [{"url": 1}], "next": 7}', { policy, fetcher });
    assert.deepEqual(bad.problems.map((p) => p.path), ['agents[0].name', 'agents[0].url', 'next']);
    assert.deepEqual(bad.entries, []);
    assert.deepEqual((await probeCatalog('not json', { policy, fetcher })).problems.map((p) => p.path), ['$']);
    assert.deepEqual(fetcher.urls, []);
    const paged = await probeCatalog(JSON.stringify({ agents: [], next: '/page/2' }), { policy, fetcher });
    assert.ok(paged.notes.some((n) => /next page/.test(n)));
    assert.deepEqual(fetcher.urls, []);
  });
});
