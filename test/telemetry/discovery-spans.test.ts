/**
 * The discovery side's spans (issue 27), with the real OpenTelemetry SDK and its in-memory
 * exporter: the span tree of a discovery cycle against real loopback peers (a registry source and
 * the cards it lists), the cache decisions of a 304 revalidation, a failing peer and a host the
 * fetcher refuses, the trace the loop's events name, and no secret (a credential header, a query
 * value of a card URL) in any attribute, event or status. Without a registered provider the same
 * cycle works unchanged.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { context, propagation, trace, type HrTime } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { aiCatalogSource, registrySource } from '../../packages/core/src/sources/index.js';
import { ATTR, SPAN } from '../../packages/core/src/telemetry/index.js';
import { cardFor } from '../helpers/cards.js';
import type { JsonRoute, JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';

/** An OpenTelemetry time ([seconds, nanoseconds]) in milliseconds. */
const hrTimeToMilliseconds = ([seconds, nanos]: HrTime): number => seconds * 1_000 + nanos / 1e6;

const SECRET_HEADER = 'Bearer static-credential-value';
const SECRET_QUERY = 'secret-query-value';
const SECRETS = ['static-credential-value', SECRET_QUERY];

/** A card route with an ETag and max-age, answering 304 to a matching If-None-Match; `fail` answers 503. */
function cardRoute(card: object, maxAge: number, state: { fail: boolean }): (req: { headers: Record<string, string | string[] | undefined> }) => JsonRoute {
  const body = JSON.stringify(card);
  const etag = `"v${body.length}"`;
  return (req) => {
    if (state.fail) return { status: 503, body: { error: 'down' } };
    const headers = { etag, 'cache-control': `max-age=${maxAge}` };
    return req.headers['if-none-match'] === etag ? { status: 304, body: '', headers } : { body, headers };
  };
}

interface Peers {
  peers: JsonServer;
  /** An origin the loop's allowlist admits but the fetcher's narrower one refuses. */
  refused: JsonServer;
  alphaState: { fail: boolean };
  gammaState: { fail: boolean };
  fetcher: CardFetcher;
  close(): Promise<void>;
}

async function startPeers(): Promise<Peers> {
  const peers = await startJsonServer();
  const refused = await startJsonServer();
  const alphaState = { fail: false };
  const gammaState = { fail: false };
  const skill = (id: string, tag: string) => ({ skills: [{ id, name: id, description: `Does ${id}.`, tags: [tag] }] });
  peers.routes.set('/alpha/.well-known/agent-card.json', cardRoute(cardFor(peers, 'alpha', skill('alpha', 'support')), 10, alphaState));
  peers.routes.set('/beta/.well-known/agent-card.json', cardRoute(cardFor(peers, 'beta', skill('beta', 'billing')), 100_000, { fail: false }));
  // A card given by an exact URL whose query carries an API key (an AI Catalog entry can name one).
  peers.routes.set(`/gamma/card?key=${SECRET_QUERY}`, cardRoute(cardFor(peers, 'gamma', skill('gamma', 'weather')), 10, gammaState));
  peers.routes.set('/agents', {
    body: {
      agents: [
        { name: 'alpha', url: `${peers.origin}/alpha/` },
        { name: 'beta', url: `${peers.origin}/beta/` },
        { name: 'gamma', url: `${peers.origin}/gamma/card?key=${SECRET_QUERY}#card` },
        { name: 'delta', url: `${refused.origin}/delta/` },
      ],
    },
  });
  // The fetcher presents a static credential to the peers' origin, and does not allow the refused one.
  const fetcher = createCardFetcher({
    policy: HostPolicy.from({ allow: [peers.origin], allowLoopback: true }),
    credentials: (origin) => (origin === peers.origin ? { authorization: SECRET_HEADER } : undefined),
  });
  return {
    peers,
    refused,
    alphaState,
    gammaState,
    fetcher,
    async close() {
      await fetcher.close();
      await Promise.all([peers.close(), refused.close()]);
    },
  };
}

interface Harness {
  loop: DiscoveryLoop;
  clock: VirtualClock;
  events: DiscoveryEvent[];
  stop(): Promise<void>;
}

function harness(p: Peers): Harness {
  const clock = new VirtualClock();
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const hostPolicy = HostPolicy.from({ allow: [p.peers.origin, p.refused.origin], allowLoopback: true });
  const cache = new CardCache({ fetcher: p.fetcher, hostPolicy, clock, events: stream, random: () => 0, minTtlMs: 0, expiryJitter: 0, check: { allowLoopback: true } });
  const loop = new DiscoveryLoop({
    sources: [registrySource({ id: 'registry', url: `${p.peers.origin}/agents`, fetcher: p.fetcher, events: stream, clock, pollIntervalMs: 1_000 })],
    hostPolicy,
    cache,
    select: { needs: [{ tag: 'support' }, { tag: 'billing' }], vocabulary: new TagVocabulary([{ tag: 'support', description: 'Support.' }, { tag: 'billing', description: 'Billing.' }]) },
    health: { enterAfter: 1 },
    routing: { evaluate: () => ({ accuracy: 0.9, minAccuracy: 0.8, passed: true, evaluated: 10 }) },
    clock,
    events: stream,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
  });
  return {
    loop,
    clock,
    events,
    async stop() {
      await loop.stop();
      await cache.close();
    },
  };
}

describe('without a registered provider', () => {
  test('the same cycle works unchanged, and its events name no trace', async () => {
    const p = await startPeers();
    const h = harness(p);
    try {
      await h.loop.start();
      assert.deepEqual(h.loop.current()?.agents.map((a) => a.localName).sort(), ['alpha', 'beta']);
      const published = h.events.find((e) => e.type === 'snapshot.published');
      assert.ok(published);
      assert.equal(published.traceId, undefined);
      assert.ok(h.events.every((e) => e.traceId === undefined));
    } finally {
      await h.stop();
      await p.close();
    }
  });
});

describe('with the OpenTelemetry SDK', () => {
  const exporter = new InMemorySpanExporter();
  let provider: NodeTracerProvider;
  let p: Peers;
  let h: Harness;
  /** Every span exported so far, kept across resets (for the no-secret check). */
  const all: ReadableSpan[] = [];
  const reset = () => {
    all.push(...exporter.getFinishedSpans());
    exporter.reset();
  };

  before(async () => {
    provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register();
    p = await startPeers();
    h = harness(p);
  });
  after(async () => {
    await h.stop();
    await p.close();
    trace.disable();
    context.disable();
    propagation.disable();
    await provider.shutdown();
  });

  const id = (s: ReadableSpan) => s.spanContext().spanId;
  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;
  const named = (spans: readonly ReadableSpan[], name: string) => spans.filter((s) => s.name === name);
  const fetchOf = (spans: readonly ReadableSpan[], path: string) => {
    const found = named(spans, SPAN.cardFetch).filter((s) => String(s.attributes[ATTR.endpoint]).includes(path));
    assert.equal(found.length, 1, `one card fetch of ${path}: ${found.length}`);
    return found[0]!;
  };
  /** The spans of the one cycle the exporter holds since the last reset. */
  const oneCycle = () => {
    const spans = exporter.getFinishedSpans();
    const cycles = named(spans, SPAN.cycle);
    assert.equal(cycles.length, 1);
    const cycle = cycles[0]!;
    assert.equal(cycle.parentSpanContext, undefined, 'a cycle is a root span');
    const traceId = cycle.spanContext().traceId;
    assert.ok(spans.every((s) => s.spanContext().traceId === traceId), 'every span of the cycle is in its trace');
    return { spans, cycle, traceId };
  };

  test('one cycle: the span tree, its attributes, and the trace its events name', async () => {
    reset();
    await h.loop.start();
    const snapshot = h.loop.current();
    assert.deepEqual(snapshot?.agents.map((a) => a.localName).sort(), ['alpha', 'beta']);
    const { spans, cycle, traceId } = oneCycle();

    assert.equal(cycle.attributes[ATTR.dueSources], 1);
    assert.equal(cycle.attributes[ATTR.endpoints], 4);
    assert.equal(cycle.attributes[ATTR.due], 4);
    assert.equal(cycle.attributes[ATTR.cacheHits], 0);

    const [list, ...moreLists] = named(spans, SPAN.sourceList);
    assert.ok(list);
    assert.equal(moreLists.length, 0);
    assert.equal(parentOf(list), id(cycle));
    assert.deepEqual([list.attributes[ATTR.source], list.attributes[ATTR.sourceKind], list.attributes[ATTR.records], list.attributes[ATTR.outcome]], ['registry', 'registry', 4, 'ok']);

    const alpha = fetchOf(spans, '/alpha/');
    assert.equal(parentOf(alpha), id(cycle));
    assert.equal(alpha.kind, 2, 'CLIENT');
    assert.equal(alpha.attributes[ATTR.urlFull], `${p.peers.origin}/alpha/.well-known/agent-card.json`);
    assert.equal(alpha.attributes[ATTR.endpoint], `${p.peers.origin}/alpha/`);
    assert.equal(alpha.attributes[ATTR.cacheDecision], 'changed');
    assert.equal(alpha.attributes[ATTR.conditional], false);
    assert.equal(alpha.attributes[ATTR.httpStatus], 200);
    assert.ok(Number(alpha.attributes[ATTR.bytes]) > 100);
    assert.match(String(alpha.attributes[ATTR.cardSha256]), /^[0-9a-f]{64}$/);
    assert.equal(alpha.status.code, 0, 'UNSET');

    // Validation and signature verification ran on the new bytes: children of the fetch.
    const validate = named(spans, SPAN.cardValidate).filter((s) => parentOf(s) === id(alpha));
    const verify = named(spans, SPAN.cardVerify).filter((s) => parentOf(s) === id(alpha));
    assert.equal(validate.length, 1);
    assert.equal(validate[0]!.attributes[ATTR.outcome], 'ok');
    assert.equal(validate[0]!.attributes[ATTR.a2aProtocolVersion], '0.3');
    assert.equal(verify.length, 1);
    assert.equal(verify[0]!.attributes[ATTR.signature], 'unsigned');

    // The card URL with an API key in its query: recorded without its value.
    const gamma = fetchOf(spans, '/gamma/');
    assert.equal(gamma.attributes[ATTR.urlFull], `${p.peers.origin}/gamma/card?key=REDACTED`);
    assert.equal(gamma.attributes[ATTR.cacheDecision], 'changed');

    const match = named(spans, SPAN.match);
    assert.equal(match.length, 1);
    assert.equal(parentOf(match[0]!), id(cycle));
    assert.deepEqual([match[0]!.attributes[ATTR.agentsSelected], match[0]!.attributes[ATTR.agentsUnsuitable], match[0]!.attributes[ATTR.agentsExcluded]], [2, 1, 0]);

    const [publish, ...morePublish] = named(spans, SPAN.publish);
    assert.ok(publish);
    assert.equal(morePublish.length, 0);
    assert.equal(parentOf(publish), id(cycle));
    assert.equal(publish.attributes[ATTR.outcome], 'published');
    assert.equal(publish.attributes[ATTR.snapshotVersion], 1);
    assert.equal(publish.attributes[ATTR.snapshotDigest], snapshot!.digest);
    assert.equal(publish.attributes[ATTR.previousDigest], undefined);
    assert.equal(publish.attributes[ATTR.agentsAdded], 2);
    assert.equal(publish.attributes[ATTR.agentsRemoved], 0);
    assert.equal(publish.attributes[ATTR.held], false);

    const routing = named(spans, SPAN.routingEvaluate);
    assert.equal(routing.length, 1);
    assert.equal(parentOf(routing[0]!), id(publish));
    assert.deepEqual([routing[0]!.attributes[ATTR.routingAccuracy], routing[0]!.attributes[ATTR.routingPassed]], [0.9, true]);

    // The events name the span they were emitted in.
    const published = h.events.find((e) => e.type === 'snapshot.published');
    assert.ok(published);
    assert.equal(published.traceId, traceId);
    assert.equal(published.spanId, id(publish));
    const alphaResult = h.events.find((e) => e.type === 'card.result' && e.endpoint === `${p.peers.origin}/alpha/`);
    assert.equal(alphaResult?.traceId, traceId);
    assert.equal(alphaResult?.spanId, id(alpha));
  });

  test('a refused host: a failed fetch span with the decision `refused`, and no request reached it', () => {
    // (Spans of the first cycle, still in the exporter.)
    const delta = fetchOf(exporter.getFinishedSpans(), '/delta/');
    assert.equal(delta.attributes[ATTR.cacheDecision], 'refused');
    assert.equal(delta.status.code, 2, 'ERROR');
    assert.equal(delta.attributes[ATTR.errorType], 'ERR_HOST_NOT_ALLOWED');
    assert.equal(delta.attributes[ATTR.httpStatus], undefined);
    assert.equal(p.refused.requests.length, 0);
  });

  test('a 304 revalidation: `revalidated`, conditional; a fresh card is a hit counted on the cycle, with no span', async () => {
    // The cycle the source's first list triggered may still be running (a cycle yields to the
    // event loop in slices): wait for it, then count only the cycle below.
    await h.loop.refreshNow();
    reset();
    await h.clock.advance(11_000);
    await h.loop.refreshNow();
    const { spans, cycle } = oneCycle();
    const alpha = fetchOf(spans, '/alpha/');
    assert.equal(alpha.attributes[ATTR.cacheDecision], 'revalidated');
    assert.equal(alpha.attributes[ATTR.conditional], true);
    assert.equal(alpha.attributes[ATTR.httpStatus], 304);
    assert.equal(named(spans, SPAN.cardValidate).length, 0, 'a 304 checks nothing again');
    assert.equal(fetchOf(spans, '/gamma/').attributes[ATTR.cacheDecision], 'revalidated');
    assert.equal(named(spans, SPAN.cardFetch).filter((s) => String(s.attributes[ATTR.endpoint]).includes('/beta/')).length, 0);
    assert.equal(cycle.attributes[ATTR.cacheHits], 1, 'beta was fresh');
    // The same cards: the last selection stands, so nothing is matched or built again.
    assert.equal(named(spans, SPAN.match).length, 0, 'no selection after 304s');
    assert.equal(named(spans, SPAN.publish).length, 0, 'no snapshot built after 304s');
    assert.equal(h.events.filter((e) => e.type === 'snapshot.published').length, 1);
  });

  test('a failing peer: status ERROR with error.type, the decision `stale`, the last card kept', async () => {
    reset();
    p.alphaState.fail = true;
    p.gammaState.fail = true;
    await h.clock.advance(11_000);
    await h.loop.refreshNow();
    const { spans } = oneCycle();
    const alpha = fetchOf(spans, '/alpha/');
    assert.equal(alpha.status.code, 2, 'ERROR');
    assert.equal(alpha.attributes[ATTR.errorType], 'ERR_FETCH_STATUS');
    assert.equal(alpha.attributes[ATTR.cacheDecision], 'stale');
    assert.equal(alpha.attributes[ATTR.httpStatus], 503);
    assert.ok(alpha.events.some((e) => e.name === 'exception'));
    assert.ok(h.loop.current()?.agents.some((a) => a.localName === 'alpha'), 'the stale card still serves');
    // The error names the card URL: recorded without its query value.
    const gamma = fetchOf(spans, '/gamma/');
    assert.equal(gamma.attributes[ATTR.cacheDecision], 'stale');
    assert.match(gamma.status.message ?? '', /gamma\/card\?key=REDACTED answered HTTP 503/);
  });

  test('a failing source: its list span failed, the last list kept', async () => {
    reset();
    p.peers.routes.set('/agents', { status: 500, body: { error: 'down' } });
    await h.clock.advance(2_000);
    await h.loop.refreshNow();
    const { spans } = oneCycle();
    const [list] = named(spans, SPAN.sourceList);
    assert.ok(list);
    assert.equal(list.status.code, 2, 'ERROR');
    assert.equal(list.attributes[ATTR.errorType], 'ERR_FETCH_STATUS');
    assert.equal(list.attributes[ATTR.outcome], 'failed');
    assert.equal(list.attributes[ATTR.records], 4, 'the last good list is kept');
  });

  test('an invalid card: the fetch fails with `invalid`, its validation span fails with the code, no verification runs', async () => {
    reset();
    p.peers.routes.set('/broken/.well-known/agent-card.json', { body: { name: 'Broken', skills: 'none' } });
    const cache = new CardCache({ fetcher: p.fetcher, hostPolicy: HostPolicy.from({ allow: [p.peers.origin], allowLoopback: true }), check: { allowLoopback: true } });
    try {
      await assert.rejects(cache.get(`${p.peers.origin}/broken/`), { code: 'ERR_CARD_INVALID' });
      const spans = exporter.getFinishedSpans();
      const fetch = fetchOf(spans, '/broken/');
      assert.equal(fetch.attributes[ATTR.cacheDecision], 'invalid');
      assert.equal(fetch.attributes[ATTR.errorType], 'ERR_CARD_INVALID');
      assert.equal(fetch.status.code, 2, 'ERROR');
      assert.equal(fetch.parentSpanContext, undefined, 'outside a cycle, a fetch is a root span');
      const [validate, ...more] = named(spans, SPAN.cardValidate);
      assert.ok(validate);
      assert.equal(more.length, 0);
      assert.equal(parentOf(validate), id(fetch));
      assert.equal(validate.status.code, 2, 'ERROR');
      assert.equal(validate.attributes[ATTR.errorType], 'ERR_CARD_INVALID');
      assert.ok(Number(validate.attributes[ATTR.problems]) > 0);
      assert.equal(named(spans, SPAN.cardVerify).length, 0);
    } finally {
      await cache.close();
    }
  });

  test('AI Catalog reads: a client span per document read, with its outcome and entries; an unusable document fails it', async () => {
    reset();
    const url = `${p.peers.origin}/.well-known/ai-catalog.json`;
    const entry = (n: string) => ({ identifier: `urn:air:example.com:agent:${n}`, type: 'application/a2a-agent-card+json', url: `/agents/${n}.json` });
    p.peers.routes.set('/.well-known/ai-catalog.json', { body: { specVersion: '1.0', entries: [entry('one'), entry('two')] }, headers: { 'cache-control': 'max-age=1' } });
    const clock = new VirtualClock();
    const source = aiCatalogSource({ id: 'catalogs', catalogs: [url], fetcher: p.fetcher, hostPolicy: HostPolicy.from({ allow: [p.peers.origin], allowLoopback: true }), clock });
    try {
      assert.equal((await source.refresh()).records.length, 2);
      const [read, ...more] = named(exporter.getFinishedSpans(), SPAN.catalogRead);
      assert.ok(read);
      assert.equal(more.length, 0);
      assert.equal(read.kind, 2, 'CLIENT');
      assert.equal(read.attributes[ATTR.urlFull], url);
      assert.equal(read.attributes[ATTR.outcome], 'ok');
      assert.equal(read.attributes[ATTR.cacheDecision], 'changed');
      assert.equal(read.attributes[ATTR.catalogEntries], 2);
      assert.equal(named(exporter.getFinishedSpans(), SPAN.cardFetch).length, 0, 'a catalog read is not a card fetch');

      reset();
      p.peers.routes.set('/.well-known/ai-catalog.json', { body: { specVersion: '1.0', entries: 'none' } });
      await clock.advance(60_000);
      // The last good catalog keeps serving.
      assert.equal((await source.refresh()).records.length, 2);
      const [bad] = named(exporter.getFinishedSpans(), SPAN.catalogRead);
      assert.ok(bad);
      assert.equal(bad.attributes[ATTR.outcome], 'failed');
      assert.equal(bad.attributes[ATTR.cacheDecision], 'invalid');
      assert.equal(bad.status.code, 2, 'ERROR');
      assert.equal(bad.attributes[ATTR.errorType], 'ERR_CARD_INVALID');
    } finally {
      await source.close();
    }
  });

  test('refreshes waiting for their origin\'s fetch slot begin their span when admitted: on one origin, one at a time', async () => {
    // Each card answers after 100 ms; five endpoints on one origin, one fetch per origin at a time.
    const ANSWER_MS = 100;
    const slow = http.createServer((req, res) => {
      const id = (req.url ?? '/').split('/')[1] ?? 'x';
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(JSON.stringify(cardFor(origin, id))), ANSWER_MS);
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const origin = { origin: `http://127.0.0.1:${(slow.address() as AddressInfo).port}` };
    const policy = HostPolicy.from({ allow: [origin.origin], allowLoopback: true });
    const fetcher = createCardFetcher({ policy });
    const cache = new CardCache({ fetcher, hostPolicy: policy, maxFetchesPerOrigin: 1, check: { allowLoopback: true } });
    try {
      reset();
      const ids = ['a1', 'a2', 'a3', 'a4', 'a5'];
      const entries = await Promise.all(ids.map((id) => cache.get(`${origin.origin}/${id}/`)));
      assert.deepEqual(entries.map((e) => e.card.name), ids.map((id) => `Agent ${id}`));
      const spans = named(exporter.getFinishedSpans(), SPAN.cardFetch).sort((a, b) => hrTimeToMilliseconds(a.startTime) - hrTimeToMilliseconds(b.startTime));
      assert.equal(spans.length, ids.length);
      for (let i = 1; i < spans.length; i++) {
        // Each begins once the fetch before it was answered (before, all five began at once and
        // the last one's time was five answers long, each 2 ms after the one before). A span's
        // start is read in whole ms, and a timer may fire a millisecond early: 5 ms of slack.
        const gap = hrTimeToMilliseconds(spans[i]!.startTime) - hrTimeToMilliseconds(spans[i - 1]!.startTime);
        assert.ok(gap >= ANSWER_MS - 5, `card fetch span ${i} began ${gap} ms after span ${i - 1}, before its fetch was answered`);
      }
    } finally {
      await cache.close();
      await fetcher.close();
      slow.closeAllConnections();
      await new Promise<void>((resolve) => slow.close(() => resolve()));
    }
  });

  test('no credential header value or URL query value in any attribute, event or status of any span', () => {
    // Every span these tests exported.
    reset();
    const spans = all;
    assert.ok(spans.length > 20);
    for (const s of spans) {
      const text = JSON.stringify({ name: s.name, attributes: s.attributes, events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })), status: s.status, links: s.links });
      for (const secret of SECRETS) assert.ok(!text.includes(secret), `${s.name} carries ${secret}: ${text}`);
    }
    // The credential was presented (so it could have leaked): the peer saw it.
    assert.ok(p.peers.requests.some((r) => r.headers.authorization === SECRET_HEADER));
  });
});
