/**
 * Issue 24, "Done means": an inspect of a 5,000-entry catalog never delays `/healthz` by more than
 * 100 ms. A real service inspects a 5,000-entry AI Catalog (about 0.9 MB) served by a loopback
 * origin while `/healthz` is polled and the event-loop delay is sampled with
 * `monitorEventLoopDelay({ resolution: 10 })`; its p99 must stay under 100 ms on top of what the
 * machine alone costs at that moment (a control measured just before: a few ms on a quiet machine;
 * this one is shared). This is the one timing the issue demands: the setup is generous (the code
 * paths are warmed by a first inspect of another catalog of the same size), the measured inspect
 * runs once (once more, with a new control, when a neighbouring test file's burst put it over the
 * bound), and the figures are logged.
 * Before the reader, the RFC 8785 forms (digest, signature payload) and the decisions yielded, the
 * p99 was the catalog's one synchronous stretch (hundreds of ms; docs/benchmarks.md).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import type { InspectResult } from '../../packages/service/src/http/inspector.js';
import { DEFAULT_SERVER_LIMITS } from '../../packages/service/src/http/limits.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { cardFor } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import { request } from '../helpers/raw-http.js';
import { LOOP_DELAY_BOUND_MS, controlDelayP99, loopDelayDuring, measureWithinBound } from './loop-delay.js';

const A2A = 'application/a2a-agent-card+json';
const AI_CATALOG = 'application/ai-catalog+json';

/**
 * A 5,000-entry catalog as its JSON text (served as is: the origin does no work per request), as a
 * hostile publisher may write it within the 1 MiB bound: every entry has tags the reader drops
 * with a warning (30,000 in all), and the catalog a signature by a key nobody here trusts (its
 * payload, RFC 8785 of the whole catalog, is still written and checked).
 */
const catalogText = (origin: string, prefix: string): string =>
  JSON.stringify({
    specVersion: '1.0',
    host: { displayName: 'Many agents' },
    signature: 'eyJhbGciOiJFUzI1NiIsImtpZCI6Im5vYm9keSJ9..c2lnbmF0dXJl',
    entries: Array.from({ length: 5_000 }, (_, i) => ({
      identifier: `urn:x:${prefix}${i}`,
      type: A2A,
      url: `${origin}/agents/${prefix}${i}.json`,
      version: `1.${i % 7}.0`,
      tags: Array.from({ length: 6 }, (_, j) => (j % 2 === 0 ? 'a,b' : j)),
    })),
  });

describe('POST /api/inspect of a 5,000-entry catalog and the event loop', () => {
  let origin: JsonServer;
  let s: RunningService;
  before(async () => {
    origin = await startJsonServer();
    s = await startService({ port: 0, policy: { allow: [origin.origin], allowLoopback: true }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }) });
    for (let i = 0; i < 20; i++) origin.routes.set(`/agents/a${i}.json`, { body: cardFor(origin, `a${i}`) });
    origin.routes.set('/warm.json', { headers: { 'content-type': AI_CATALOG }, body: catalogText(origin.origin, 'w') });
    origin.routes.set('/big.json', { headers: { 'content-type': AI_CATALOG }, body: catalogText(origin.origin, 'a') });
  });
  after(async () => {
    await s?.close();
    await origin?.close();
  });

  const inspect = async (path: string): Promise<{ status: number; json: InspectResult }> => {
    const r = await request(s.url, 'POST', '/api/inspect', { 'content-type': 'application/json', origin: s.url }, JSON.stringify({ url: `${origin.origin}${path}` }));
    return { status: r.status, json: JSON.parse(r.body) as InspectResult };
  };

  test(`/healthz is never delayed past ${LOOP_DELAY_BOUND_MS} ms: event-loop delay p99 during the inspect`, async (t) => {
    assert.ok(Buffer.byteLength(catalogText(origin.origin, 'a')) < 1_048_576);
    assert.equal((await inspect('/warm.json')).status, 200);
    // One measure: a control, then the inspect with /healthz polled (once more when over the bound: `measureWithinBound`).
    const measure = async () => {
      const control = await controlDelayP99();
      let done = false;
      const answered: number[] = [];
      const poll = async (): Promise<void> => {
        while (!done) {
          const started = performance.now();
          assert.equal((await request(s.url, 'GET', '/healthz')).status, 200);
          answered.push(performance.now() - started);
        }
      };
      const delay = await loopDelayDuring(async () => {
        const polling = poll();
        const r = await inspect('/big.json');
        done = true;
        await polling;
        return r;
      });
      return { ...delay, control, answered };
    };
    const { result, p99, control, answered } = await measureWithinBound(measure, ({ result: r, p99: p, max: m, control: c, answered: a }, attempt) =>
      t.diagnostic(
        `inspect of 5,000 entries in ${r.json.durationMs.toFixed(0)} ms (measure ${attempt}): event-loop delay p99 ${p.toFixed(1)} ms, max ${m.toFixed(1)} ms ` +
          `(the issue's ${LOOP_DELAY_BOUND_MS} ms ${p < LOOP_DELAY_BOUND_MS ? 'met' : 'NOT met'}; control p99 ${c.toFixed(1)} ms); ` +
          `/healthz answered ${a.length} times, slowest ${Math.max(...a).toFixed(1)} ms`,
      ),
    );
    const { status, json } = result;
    assert.equal(status, 200);
    // What the inspect reads is the whole catalog: its figures stay what they were.
    const c = json.aiCatalog!;
    assert.equal(c.documents[0]?.usable, true);
    assert.equal(c.documents[0]?.signature?.status, 'unverified');
    assert.equal(c.documents[0]?.entries, 5_000);
    assert.equal(c.counts.entries, 5_000);
    assert.equal(c.counts.accepted, 20);
    assert.ok(answered.length > 0, '/healthz answered during the inspect');
    // The bound, on top of what the machine alone costs now (the control: a few ms when it is quiet).
    assert.ok(p99 < LOOP_DELAY_BOUND_MS + control, `event-loop delay p99 ${p99.toFixed(1)} ms during the inspect (bound ${LOOP_DELAY_BOUND_MS} ms + control ${control.toFixed(1)} ms)`);
  });

  test('a catalog whose entries raise 40,000 warnings: each document lists at most 100, so the answer stays within server.limits.inspectMaxAnswerBytes', async () => {
    // Every entry has eight tags the reader drops with a warning (13.8 MB of answer before the document's list was bounded).
    const entries = Array.from({ length: 5_000 }, (_, i) => ({ identifier: `u:${i}`, type: A2A, url: `/a/${i}`, tags: Array.from({ length: 8 }, (_, j) => (j % 2 === 0 ? 'a,b' : j)) }));
    origin.routes.set('/warnings.json', { headers: { 'content-type': AI_CATALOG }, body: JSON.stringify({ specVersion: '1.0', entries }) });
    const r = await request(s.url, 'POST', '/api/inspect', { 'content-type': 'application/json', origin: s.url }, JSON.stringify({ url: `${origin.origin}/warnings.json` }));
    assert.equal(r.status, 200);
    assert.ok(Buffer.byteLength(r.body) <= DEFAULT_SERVER_LIMITS.inspectMaxAnswerBytes, `${Buffer.byteLength(r.body)} bytes`);
    const doc = (JSON.parse(r.body) as InspectResult).aiCatalog!.documents[0]!;
    assert.equal(doc.warnings.length, 100);
    assert.match(doc.warnings[99]!.message, /^and 39901 more \(only the first 99 are listed\)$/);
  });
});
