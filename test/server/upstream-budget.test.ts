/**
 * Request amplification (issue 24, item 4): an inspect of a catalog with 60 nested catalogs made
 * up to 72 upstream requests, and callers in a loop multiplied that without any rate limit on the
 * allowlisted host. The service now draws every upstream request — discovery's and the
 * inspector's — on one budget per origin (`cache.originRequestsPerSecond`, `cache.originBurst`):
 * counted at the origin, many inspects from several clients cause at most
 * `burst + rate × elapsed`; the inspector is refused at once past it (the answer names the
 * budget, `a2a_discovery_upstream_budget_exhausted_total{caller="inspector"}` counts it) while
 * discovery, sharing the same tokens, waits for its turn.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import type { InspectResult } from '../../packages/service/src/http/inspector.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { cardFor } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import { metric, request } from '../helpers/raw-http.js';

const A2A = 'application/a2a-agent-card+json';
const AI_CATALOG = 'application/ai-catalog+json';

async function inspect(s: RunningService, url: string): Promise<{ status: number; json: InspectResult }> {
  const r = await request(s.url, 'POST', '/api/inspect', { 'content-type': 'application/json', origin: s.url }, JSON.stringify({ url }));
  return { status: r.status, json: JSON.parse(r.body) as InspectResult };
}

describe('the upstream request budget per origin, shared by discovery and the inspector', () => {
  let origin: JsonServer;
  before(async () => {
    origin = await startJsonServer();
    // The shape: a root catalog listing 60 nested catalogs, each listing one card.
    const nested = Array.from({ length: 60 }, (_, i) => ({ identifier: `urn:air:example.com:catalog:n${i}`, type: AI_CATALOG, url: `${origin.origin}/nested/n${i}.json` }));
    origin.routes.set('/tree.json', { headers: { 'content-type': AI_CATALOG }, body: { specVersion: '1.0', entries: nested } });
    for (let i = 0; i < 60; i++) {
      const entry = { identifier: `urn:air:example.com:agent:a${i}`, type: A2A, url: `${origin.origin}/agents/a${i}.json` };
      origin.routes.set(`/nested/n${i}.json`, { headers: { 'content-type': AI_CATALOG }, body: { specVersion: '1.0', entries: [entry] } });
      origin.routes.set(`/agents/a${i}.json`, { headers: { etag: `"a${i}"` }, body: cardFor(origin, `a${i}`) });
    }
  });
  after(async () => {
    await origin?.close();
  });

  test('many inspects of a nested catalog from several callers: the origin receives at most burst + rate × elapsed', async (t) => {
    const rate = 2;
    const burst = 30;
    const s = await startService({
      port: 0,
      policy: { allow: [origin.origin], allowLoopback: true },
      vocabulary: [],
      needs: [],
      logger: createLogger({ level: 'silent' }),
      cache: { originRequestsPerSecond: rate, originBurst: burst },
      limits: { maxInspections: 4, maxInspectionsPerClient: 4 },
    });
    try {
      origin.requests.length = 0;
      const started = performance.now();
      // Four callers, five inspects each, one after the other per caller, the callers at once.
      const answers = await Promise.all(
        [1, 2, 3, 4].map(async () => {
          const mine: InspectResult[] = [];
          for (let i = 0; i < 5; i++) {
            const { status, json } = await inspect(s, `${origin.origin}/tree.json`);
            assert.equal(status, 200);
            mine.push(json);
          }
          return mine;
        }),
      );
      const elapsedSeconds = (performance.now() - started) / 1000;
      const received = origin.requests.length;
      const bound = burst + rate * Math.ceil(elapsedSeconds);
      t.diagnostic(`20 inspects in ${elapsedSeconds.toFixed(1)} s: the origin received ${received} requests (bound ${bound})`);
      // Before: each inspect made its 72 requests, 1,440 in all.
      assert.ok(received <= bound, `the origin received ${received} requests in ${elapsedSeconds.toFixed(1)} s; the budget allows ${bound}`);
      const all = answers.flat();
      const refused = all.filter((r) => r.truncation?.some((m) => /the upstream budget of the origin was spent \(cache\.originRequestsPerSecond, cache\.originBurst\)/.test(m)));
      assert.ok(refused.length >= 15, `${refused.length} answers name the upstream budget`);
      assert.match(JSON.stringify(refused.at(-1)), new RegExp(`not requested: the upstream budget for ${origin.origin.replace(/[.]/g, '\\.')} is spent`));
      const exhausted = await metric(s.url, 'a2a_discovery_upstream_budget_exhausted_total', 'caller="inspector"');
      assert.ok(exhausted > 0, `a2a_discovery_upstream_budget_exhausted_total{caller="inspector"} ${exhausted}`);
    } finally {
      await s.close();
    }
  });

  test('discovery and the inspector share one budget: discovery spends it and waits, the inspector is refused', async () => {
    // Discovery refreshes the 60 cards of the tree on every 100 ms cycle (nothing stays fresh), one
    // request at a time per origin (`cache.maxFetchesPerOrigin`): far more than 20 requests per
    // second, so it keeps the origin's bucket empty, waiting for each turn. The inspector, asking
    // for one card (3 requests, well inside a burst of its own), finds no token left.
    const s = await startService({
      port: 0,
      policy: { allow: [origin.origin], allowLoopback: true },
      vocabulary: [],
      needs: [],
      logger: createLogger({ level: 'silent' }),
      aiCatalogs: [{ id: 'tree', catalogs: [`${origin.origin}/tree.json`] }],
      loop: { cycleIntervalMs: 100 },
      cache: { originRequestsPerSecond: 20, originBurst: 20, originMaxWaitMs: 60_000, defaultTtlMs: 1, minTtlMs: 0 },
    });
    try {
      // Discovery has waited for its turns already (startup reads the tree and its cards).
      assert.ok((await metric(s.url, 'a2a_discovery_upstream_budget_waits_total', 'caller="discovery"')) > 0, 'discovery waited for its turns');
      const { status, json } = await inspect(s, `${origin.origin}/agents/a0.json`);
      assert.equal(status, 200);
      assert.match(JSON.stringify(json.report), /not requested: the upstream budget for \S+ is spent/);
      assert.ok(json.truncation?.some((m) => /upstream budget of the origin was spent/.test(m)), JSON.stringify(json.truncation));
      assert.ok((await metric(s.url, 'a2a_discovery_upstream_budget_exhausted_total', 'caller="inspector"')) >= 1);
    } finally {
      await s.close();
    }
  });
});
