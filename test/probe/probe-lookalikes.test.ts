/**
 * `probe` flags lookalikes within the documents it reads (rules/lookalike.ts): an AI Catalog or a
 * registry catalog listing "billing" on one origin and "bіlling" (Cyrillic і) on another flags the
 * later entry, says so in the rendered text, and still accepts the catalog (flag, not refuse).
 * Two loopback servers are two origins.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HostPolicy, createCardFetcher, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import { probeAiCatalogDocument, probeCatalog, renderAiCatalogProbe } from '../../packages/core/src/probe/index.js';
import { cardFor } from '../helpers/cards.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';

const A2A = 'application/a2a-agent-card+json';
const LOOKALIKE = 'b\u0456lling';

describe('probe: lookalikes within a catalog', () => {
  let first: JsonServer;
  let second: JsonServer;
  let fetcher: CardFetcher;
  let policy: HostPolicy;
  before(async () => {
    first = await startJsonServer();
    second = await startJsonServer();
    first.routes.set('/agents/billing.json', { body: cardFor(first, 'billing', { name: 'billing' }) });
    second.routes.set('/agents/billing.json', { body: cardFor(second, 'billing', { name: LOOKALIKE }) });
    second.routes.set('/.well-known/agent-card.json', { body: cardFor(second, 'billing', { name: LOOKALIKE }) });
    first.routes.set('/.well-known/agent-card.json', { body: cardFor(first, 'billing', { name: 'billing' }) });
    policy = HostPolicy.from({ allow: [first.origin, second.origin], allowLoopback: true });
    fetcher = createCardFetcher({ policy });
  });
  after(async () => {
    await fetcher.close();
    await Promise.all([first.close(), second.close()]);
  });

  const reason = () => `name "${LOOKALIKE}" looks like "billing" of ${first.origin}: confusable characters`;

  test('an AI Catalog: the later entry from another origin is flagged; the catalog is still accepted', async () => {
    const doc = {
      specVersion: '1.0',
      entries: [
        { identifier: 'urn:air:first.example:agent:billing', type: A2A, url: `${first.origin}/agents/billing.json` },
        { identifier: 'urn:air:second.example:agent:payments', type: A2A, url: `${second.origin}/agents/billing.json` },
      ],
    };
    const r = await probeAiCatalogDocument(JSON.stringify(doc), { label: 'ai-catalog.json', policy, fetcher, interfacePolicy: policy, check: { allowLoopback: true } });
    assert.deepEqual(
      r.entries.map((e) => [e.verdict, e.lookalike ?? null]),
      [
        ['accepted', null],
        ['accepted', { of: 'billing', origin: first.origin, reason: reason() }],
      ],
    );
    assert.equal(r.accepted, true, 'flagged, not refused');
    assert.ok(renderAiCatalogProbe(r).includes(`lookalike ${reason()}`), renderAiCatalogProbe(r));
  });

  test('the same entries on one origin are not lookalikes of each other', async () => {
    first.routes.set('/agents/other.json', { body: cardFor(first, 'billing', { name: LOOKALIKE }) });
    const doc = {
      specVersion: '1.0',
      entries: [
        { identifier: 'urn:air:first.example:agent:billing', type: A2A, url: `${first.origin}/agents/billing.json` },
        { identifier: 'urn:air:first.example:agent:payments', type: A2A, url: `${first.origin}/agents/other.json` },
      ],
    };
    const r = await probeAiCatalogDocument(JSON.stringify(doc), { label: 'ai-catalog.json', policy, fetcher, interfacePolicy: policy, check: { allowLoopback: true } });
    assert.deepEqual(r.entries.map((e) => [e.verdict, e.lookalike ?? null]), [['accepted', null], ['accepted', null]]);
  });

  test('a registry catalog: the later entry from another origin is flagged', async () => {
    const r = await probeCatalog(
      JSON.stringify({
        agents: [
          { name: 'billing', url: first.origin },
          { name: 'payments', url: second.origin },
        ],
      }),
      { policy, fetcher, interfacePolicy: policy, check: { allowLoopback: true } },
    );
    assert.deepEqual(r.entries.map((e) => [e.report?.accepted, e.lookalike ?? null]), [
      [true, null],
      [true, { of: 'billing', origin: first.origin, reason: reason() }],
    ]);
  });
});
