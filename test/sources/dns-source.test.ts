/**
 * The DNS source (packages/core/src/sources/dns-source.ts) and its resolver client
 * (dns-resolver.ts) against a real authoritative server: Debian's Knot DNS on a loopback port,
 * serving DNS-AID SVCB records, a TXT fallback, an `_index._agents` entry and DNS-SD records for
 * agents whose cards a loopback HTTP server serves. Cards are pinned to `capsha256` by the card
 * cache; the refresh follows the records' TTL on a manual clock; truncated answers are asked
 * again over TCP; an oversized answer is bounded; an outage keeps the last good list.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { RefreshSchedule } from '../../packages/core/src/loop/refresh-schedule.js';
import { resolveEndpoints } from '../../packages/core/src/resolve/index.js';
import { CatalogArtifacts } from '../../packages/core/src/sources/catalog-artifacts.js';
import { createDnsResolver } from '../../packages/core/src/sources/dns-resolver.js';
import { dnsSource } from '../../packages/core/src/sources/dns-source.js';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { cardFor } from '../helpers/cards.js';
import { DNS_SKIP, startDnsServer, startValidatingResolver, type TestDnsServer } from '../helpers/dns-server.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';

let cards: JsonServer;
let knot: TestDnsServer;
let knotAddress: string;
let policy: HostPolicy;
const sha = (body: object) => createHash('sha256').update(JSON.stringify(body)).digest('hex');
const bodies: Record<string, object> = {};

/** The zone: two DNS-AID agents (SVCB), one by TXT only, an index, DNS-SD, and records that must be refused. */
function zone(serial: number, billingPath = '/billing/card.json', billingTtl = 60): string {
  const o = cards.origin;
  const port = cards.port;
  return [
    `$ORIGIN agents.test.`,
    `$TTL 300`,
    `@ SOA ns.agents.test. admin.agents.test. ${serial} 3600 600 86400 60`,
    `@ NS ns.agents.test.`,
    `ns A 127.0.0.1`,
    `_billing._a2a._agents ${billingTtl} SVCB 1 . alpn=h2 key65400="${o}${billingPath}" key65401="${sha(bodies[billingPath]!)}" key65403="https://agents.test/policy" key65404="finance"`,
    `_support._a2a._agents 120 SVCB 1 . key65400="${o}/support/card.json" key65401="${sha(bodies['/support/card.json']!)}"`,
    `_legacy._a2a._agents 200 TXT "cap=${o}/legacy/card.json" "capsha256=${sha(bodies['/legacy/card.json']!)}" "realm=old"`,
    // A record whose digest is not the card's: the card cache refuses the card.
    `_tampered._a2a._agents 200 SVCB 1 . key65400="${o}/tampered/card.json" key65401="${'0'.repeat(64)}"`,
    // A record naming a host the allowlist does not name.
    `_evil._a2a._agents 200 SVCB 1 evil.example. key65400="https://evil.example/card.json"`,
    `_index._agents 300 TXT "agents=billing:a2a,legacy:a2a,chat:mcp"`,
    `_a2a._tcp 240 PTR research._a2a._tcp.agents.test.`,
    `research._a2a._tcp 240 SRV 0 0 ${port} 127.0.0.1.`,
    `research._a2a._tcp 240 TXT "path=/research/card.json"`,
    // Many TXT strings: more than a 512-byte UDP answer holds.
    `_big._a2a._agents 200 TXT ${Array.from({ length: 40 }, (_, i) => `"x${i}=${'y'.repeat(40)}"`).join(' ')} "cap=${o}/support/card.json"`,
    ``,
  ].join('\n');
}

before(async () => {
  cards = await startJsonServer();
  for (const name of ['billing', 'support', 'legacy', 'tampered', 'research']) {
    const body = cardFor(cards, name);
    bodies[`/${name}/card.json`] = body;
    cards.routes.set(`/${name}/card.json`, { body });
  }
  const v2 = cardFor(cards, 'billing-v2');
  bodies['/billing/v2.json'] = v2;
  cards.routes.set('/billing/v2.json', { body: v2 });
  policy = HostPolicy.from({ allow: [cards.origin], allowLoopback: true });
  if (DNS_SKIP !== undefined) return;
  knot = await startDnsServer({ zones: [{ name: 'agents.test', text: zone(1) }] });
  knotAddress = `${knot.host}:${knot.port}`;
});

after(async () => {
  await knot?.close();
  await cards?.close();
});

const resolverFor = (extra: Parameters<typeof createDnsResolver>[0] extends infer O ? Partial<O> : never = {}) => createDnsResolver({ servers: [knotAddress], timeoutMs: 2_000, ...extra });

test('two DNS-AID agents served by Knot are discovered, their cards pinned to capsha256; a mismatching capsha256 refuses the card, naming the record', { skip: DNS_SKIP }, async () => {
  const artifacts = new CatalogArtifacts();
  const source = dnsSource({ id: 'dns', domains: [{ domain: 'agents.test', agents: ['billing', 'support', 'tampered'] }], resolver: resolverFor(), hostPolicy: policy, artifacts });
  const fetcher = createCardFetcher({ policy });
  try {
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    const byName = Object.fromEntries(state.records.map((r) => [r.name, r]));
    assert.deepEqual(Object.keys(byName).sort(), ['billing', 'support', 'tampered']);
    assert.equal(byName['billing']!.baseUrl, `${cards.origin}/billing/card.json`);
    assert.deepEqual({ ...byName['billing']!.metadata }, {
      record: '_billing._a2a._agents.agents.test',
      recordType: 'SVCB',
      ttl: '60',
      domain: 'agents.test',
      resolver: knotAddress,
      dnssec: 'not validated',
      policy: 'https://agents.test/policy',
      realm: 'finance',
      alpn: 'h2',
      pinnedSha256: sha(bodies['/billing/card.json']!),
    });
    // The refresh follows the smallest TTL read (60 s), within the bounds.
    assert.equal(source.pollIntervalMs, 60_000);

    const cache = new CardCache({ fetcher: artifacts.fetcher(fetcher), pins: artifacts, hostPolicy: policy, check: { allowLoopback: true } });
    const { admitted } = resolveEndpoints([state.records], policy);
    for (const name of ['billing', 'support']) {
      const entry = await cache.get(admitted.find((a) => a.records[0]!.name === name)!.baseUrl);
      assert.equal(entry.rawSha256, sha(bodies[`/${name}/card.json`]!));
    }
    await assert.rejects(cache.get(admitted.find((a) => a.records[0]!.name === 'tampered')!.baseUrl), (err: Error & { code?: string }) => {
      assert.equal(err.code, 'ERR_DIGEST_MISMATCH');
      assert.match(err.message, /_tampered\._a2a\._agents\.agents\.test/);
      return true;
    });
    await cache.close();
  } finally {
    await source.close();
    await fetcher.close();
  }
  // A closed source withdraws its pins.
  assert.equal(artifacts.size, 0);
});

test('the index, the TXT fallback and DNS-SD; a record naming a host off the allowlist is refused with its record name', { skip: DNS_SKIP }, async () => {
  const source = dnsSource({ id: 'dns', scheme: 'http', domains: [{ domain: 'agents.test', agents: ['evil'], index: true, dnsSd: true }], resolver: resolverFor(), hostPolicy: policy });
  try {
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    const byName = Object.fromEntries(state.records.map((r) => [r.name, r]));
    assert.deepEqual(Object.keys(byName).sort(), ['billing', 'legacy', 'research']);
    assert.equal(byName['legacy']!.baseUrl, `${cards.origin}/legacy/card.json`);
    assert.equal(byName['legacy']!.metadata['recordType'], 'TXT');
    assert.equal(byName['legacy']!.metadata['realm'], 'old');
    assert.equal(byName['legacy']!.metadata['pinnedSha256'], sha(bodies['/legacy/card.json']!));
    assert.equal(byName['research']!.baseUrl, `${cards.origin}/research/card.json`);
    assert.equal(byName['research']!.metadata['record'], 'research._a2a._tcp.agents.test');
    assert.equal(byName['research']!.metadata['recordType'], 'SRV');
    const evil = state.problems?.find((p) => p.path.startsWith('_evil.'));
    assert.ok(evil, JSON.stringify(state.problems));
    assert.equal(evil.path, '_evil._a2a._agents.agents.test SVCB');
    assert.match(evil.message, /names https:\/\/evil\.example\/, which the allowlist refuses: .*not in the allowlist; the record is refused/);
  } finally {
    await source.close();
  }
});

test('the refresh follows the records\' TTL on a manual clock: a record changed in the zone is seen at its TTL, not before', { skip: DNS_SKIP }, async () => {
  const clock = new VirtualClock();
  const source = dnsSource({ id: 'dns', domains: [{ domain: 'agents.test', agents: ['billing'] }], resolver: resolverFor(), hostPolicy: policy, clock, minRefreshMs: 1_000 });
  const cache = new CardCache({ fetcher: createCardFetcher({ policy }), hostPolicy: policy, clock, check: { allowLoopback: true } });
  const schedule = new RefreshSchedule({ sources: [source], cache, clock, random: () => 0.5, resyncIntervalMs: 3_600_000 });
  try {
    await schedule.pollSources(true);
    assert.equal(source.current().records[0]!.baseUrl, `${cards.origin}/billing/card.json`);
    assert.equal(source.pollIntervalMs, 60_000);
    await knot.reload(zone(2, '/billing/v2.json', 30));
    await clock.advance(59_000);
    await schedule.pollSources(false);
    assert.equal(source.current().records[0]!.baseUrl, `${cards.origin}/billing/card.json`, 'not refreshed before the TTL');
    await clock.advance(1_000);
    await schedule.pollSources(false);
    assert.equal(source.current().records[0]!.baseUrl, `${cards.origin}/billing/v2.json`);
    // The new record's TTL (30 s) is now the schedule.
    assert.equal(source.pollIntervalMs, 30_000);
  } finally {
    await knot.reload(zone(3));
    await source.close();
    await cache.close();
  }
});

test('a truncated UDP answer is asked again over TCP; an answer over maxTcpBytes fails the refresh with a clear error and keeps the last good list', { skip: DNS_SKIP }, async () => {
  const small = resolverFor({ udpPayloadSize: 512 });
  const answer = await small.query('_big._a2a._agents.agents.test', 'TXT');
  assert.equal(answer.tcp, true);
  assert.equal((answer.records[0]!.data as string[]).length, 41);

  const bounded = resolverFor({ udpPayloadSize: 512, maxTcpBytes: 1_024 });
  await assert.rejects(bounded.query('_big._a2a._agents.agents.test', 'TXT'), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'ERR_BODY_TOO_LARGE');
    assert.match(err.message, /^DNS TXT _big\._a2a\._agents\.agents\.test at resolver 127\.0\.0\.1:\d+: a TCP answer of \d+ bytes, more than maxTcpBytes 1024$/);
    return true;
  });

  // The source: a good list first, then the same agent's answer grows past the bound.
  let big = false;
  const source = dnsSource({
    id: 'dns',
    domains: [{ domain: 'agents.test', agents: ['support'] }],
    resolver: { servers: bounded.servers, query: (name, type, o) => bounded.query(big && type === 'SVCB' ? '_big._a2a._agents.agents.test' : name, big ? 'TXT' : type, o) },
    hostPolicy: policy,
  });
  try {
    assert.equal((await source.refresh()).records.length, 1);
    big = true;
    const state = await source.refresh();
    assert.equal(state.ok, false);
    assert.equal(state.error?.code, 'ERR_BODY_TOO_LARGE');
    assert.equal(state.records.length, 1, 'the last good list is kept');
  } finally {
    await source.close();
  }
});

test('an outage (no answer in time) keeps the last good list; requireDnssec refuses answers the resolver did not validate', { skip: DNS_SKIP }, async () => {
  let down = false;
  const real = resolverFor();
  const silent = createDnsResolver({ servers: ['127.0.0.1:9'], timeoutMs: 100, retries: 1, backoffMs: 10 });
  const source = dnsSource({ id: 'dns', domains: [{ domain: 'agents.test', agents: ['billing'] }], resolver: { servers: real.servers, query: (n, t, o) => (down ? silent : real).query(n, t, o) }, hostPolicy: policy });
  try {
    assert.equal((await source.refresh()).records.length, 1);
    down = true;
    const state = await source.refresh();
    assert.equal(state.ok, false);
    assert.match(state.error!.code, /^ERR_FETCH_(TIMEOUT|NETWORK)$/);
    assert.equal(state.records.length, 1);
  } finally {
    await source.close();
  }

  // Knot is authoritative and validates nothing: no AD bit, so every answer is refused.
  const strict = dnsSource({ id: 'dns', requireDnssec: true, domains: [{ domain: 'agents.test', agents: ['billing'] }], resolver: resolverFor(), hostPolicy: policy });
  try {
    const state = await strict.refresh();
    assert.equal(state.records.length, 0);
    assert.deepEqual(state.problems?.map((p) => p.message), [
      `the SVCB answer for _billing._a2a._agents.agents.test was not DNSSEC-validated by resolver ${knotAddress}: no AD bit (requireDnssec: true); refused`,
    ]);
  } finally {
    await strict.close();
  }
});

test('requireDnssec through a validating resolver (Unbound): a signed zone\'s records are admitted, an unsigned zone\'s refused with a clear message', { skip: DNS_SKIP }, async () => {
  const record = (body: string) => `_billing._a2a._agents 120 SVCB 1 . key65400="${cards.origin}/billing/card.json" key65401="${sha(bodies[body]!)}"`;
  const server = await startDnsServer({ zones: [{ name: 'signed.test', text: record('/billing/card.json'), dnssec: true }, { name: 'plain.test', text: record('/billing/card.json') }] });
  const unbound = await startValidatingResolver({ server });
  const resolver = createDnsResolver({ servers: [`${unbound.host}:${unbound.port}`] });
  const source = dnsSource({ id: 'dns', requireDnssec: true, domains: [{ domain: 'signed.test', agents: ['billing'] }, { domain: 'plain.test', agents: ['billing'] }], resolver, hostPolicy: policy });
  try {
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.deepEqual(state.records.map((r) => [r.metadata['record'], r.metadata['dnssec']]), [['_billing._a2a._agents.signed.test', 'validated']]);
    assert.deepEqual(state.problems?.map((p) => p.message), [
      `the SVCB answer for _billing._a2a._agents.plain.test was not DNSSEC-validated by resolver ${unbound.host}:${unbound.port}: no AD bit (requireDnssec: true); refused`,
    ]);
  } finally {
    await source.close();
    await unbound.close();
    await server.close();
  }
});

test('each DNS question is a client span: name and type asked, the resolver, rcode, AD bit, transport; a failed one is an error span', { skip: DNS_SKIP }, async () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  try {
    await resolverFor({ udpPayloadSize: 512 }).query('_big._a2a._agents.agents.test', 'TXT');
    await createDnsResolver({ servers: ['127.0.0.1:9'], timeoutMs: 50, retries: 0 }).query('_billing._a2a._agents.agents.test', 'SVCB').catch(() => undefined);
    const [ok, failed] = exporter.getFinishedSpans();
    assert.equal(ok?.name, 'a2a_discovery.dns.query');
    assert.equal(ok.kind, 2);
    assert.deepEqual(ok.attributes, {
      'dns.question.name': '_big._a2a._agents.agents.test',
      'a2a_discovery.dns.question.type': 'TXT',
      'server.address': '127.0.0.1',
      'server.port': knot.port,
      'a2a_discovery.dns.rcode': 'NOERROR',
      'a2a_discovery.dns.authenticated': false,
      'a2a_discovery.dns.tcp': true,
      'a2a_discovery.records': 1,
      'a2a_discovery.dns.attempts': 1,
    });
    assert.equal(failed?.status.code, 2);
    assert.equal(failed.attributes['error.type'], 'ERR_FETCH_TIMEOUT');
  } finally {
    trace.disable();
    context.disable();
    propagation.disable();
    await provider.shutdown();
  }
});
