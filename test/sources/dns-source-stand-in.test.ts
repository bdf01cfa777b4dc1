/**
 * The DNS source's capsha256 pins and its DNSSEC handling (packages/core/src/sources/dns-source.ts
 * through the real resolver client, dns-resolver.ts) in a plain `npm test`, WITHOUT Knot or Unbound.
 *
 * The DNS server here is a STAND-IN (test/helpers/dns-stand-in.ts): an in-process dns-packet
 * responder on a loopback UDP/TCP port that answers SVCB, TXT, PTR and SRV records from a table
 * and sets the AD bit for the names of `signed.test` only, as a validating resolver does for a
 * signed zone. It proves the source's side (pins, the AD bit, requireDnssec); that Knot serves
 * and signs such zones and Unbound validates them stays proven by dns-source.test.ts and
 * dns-harness.test.ts, which run where Knot and Unbound are installed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import dnsPacket from 'dns-packet';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { resolveEndpoints } from '../../packages/core/src/resolve/index.js';
import { CatalogArtifacts } from '../../packages/core/src/sources/catalog-artifacts.js';
import { createDnsResolver } from '../../packages/core/src/sources/dns-resolver.js';
import { dnsSource } from '../../packages/core/src/sources/dns-source.js';
import { cardFor } from '../helpers/cards.js';
import { startStandInDns, svcbRdata, svcbRecord, txtRecord, zoneHandler, type StandInDns } from '../helpers/dns-stand-in.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';

let cards: JsonServer;
let dns: StandInDns;
let policy: HostPolicy;
const sha = (body: object) => createHash('sha256').update(JSON.stringify(body)).digest('hex');
const bodies: Record<string, object> = {};
const CAP = 65400;
const CAPSHA256 = 65401;
const REALM = 65404;
const ALPN = 1;

before(async () => {
  cards = await startJsonServer();
  for (const name of ['billing', 'legacy', 'tampered', 'research']) {
    const body = cardFor(cards, name);
    bodies[name] = body;
    cards.routes.set(`/${name}/card.json`, { body });
  }
  policy = HostPolicy.from({ allow: [cards.origin], allowLoopback: true });
  const o = cards.origin;
  const svcb = (owner: string, params: ReadonlyArray<readonly [number, string | Buffer]>) => svcbRecord(owner, 60, svcbRdata(1, '.', params));
  const billing = (domain: string) => svcb(`_billing._a2a._agents.${domain}`, [[CAP, `${o}/billing/card.json`], [CAPSHA256, sha(bodies['billing']!)]]);
  dns = await startStandInDns(zoneHandler({
    // agents.test: capsha256 in SVCB, in the TXT fallback, in DNS-SD's TXT; one wrong digest, one malformed.
    '_billing._a2a._agents.agents.test SVCB': [svcb('_billing._a2a._agents.agents.test', [[ALPN, Buffer.from([2, ...Buffer.from('h2')])], [CAP, `${o}/billing/card.json`], [CAPSHA256, sha(bodies['billing']!)], [REALM, 'finance']])],
    '_legacy._a2a._agents.agents.test TXT': [txtRecord('_legacy._a2a._agents.agents.test', 200, [`cap=${o}/legacy/card.json`, `capsha256=${sha(bodies['legacy']!).toUpperCase()}`])],
    '_tampered._a2a._agents.agents.test SVCB': [svcb('_tampered._a2a._agents.agents.test', [[CAP, `${o}/tampered/card.json`], [CAPSHA256, '0'.repeat(64)]])],
    '_badsha._a2a._agents.agents.test SVCB': [svcb('_badsha._a2a._agents.agents.test', [[CAP, `${o}/billing/card.json`], [CAPSHA256, 'not-a-digest']])],
    '_a2a._tcp.agents.test PTR': [{ type: 'PTR', name: '_a2a._tcp.agents.test', ttl: 240, class: 'IN', data: 'research._a2a._tcp.agents.test' }],
    'research._a2a._tcp.agents.test SRV': [{ type: 'SRV', name: 'research._a2a._tcp.agents.test', ttl: 240, class: 'IN', data: { priority: 0, weight: 0, port: cards.port, target: '127.0.0.1' } }],
    'research._a2a._tcp.agents.test TXT': [txtRecord('research._a2a._tcp.agents.test', 240, ['path=/research/card.json', `capsha256=${sha(bodies['research']!)}`])],
    // signed.test answers with AD (a validating resolver's answer for a signed zone); plain.test without.
    '_billing._a2a._agents.signed.test SVCB': [billing('signed.test')],
    '_billing._a2a._agents.plain.test SVCB': [billing('plain.test')],
    '_index._agents.plain.test TXT': [txtRecord('_index._agents.plain.test', 300, ['agents=billing:a2a'])],
    // hijack.test: a hostile answer adds, first and preferred (SVCB priority 1), a record for
    // another owner name naming the same card without capsha256: read as billing's, the pin would go.
    '_billing._a2a._agents.hijack.test SVCB': [
      svcbRecord('_decoy._a2a._agents.hijack.test', 60, svcbRdata(1, '.', [[CAP, `${o}/billing/card.json`]])),
      svcbRecord('_billing._a2a._agents.hijack.test', 60, svcbRdata(2, '.', [[CAP, `${o}/billing/card.json`], [CAPSHA256, sha(bodies['billing']!)]])),
    ],
    // hijacktxt.test: the same against the TXT fallback (its first record is read).
    '_billing._a2a._agents.hijacktxt.test TXT': [
      txtRecord('hijacktxt.test', 60, [`cap=${o}/billing/card.json`]),
      txtRecord('_billing._a2a._agents.hijacktxt.test', 60, [`cap=${o}/billing/card.json`, `capsha256=${sha(bodies['billing']!)}`]),
    ],
  }, { ad: (name) => name.endsWith('.signed.test') }));
});

after(async () => {
  await dns?.close();
  await cards?.close();
});

const resolver = () => createDnsResolver({ servers: [dns.address], timeoutMs: 2_000, retries: 0 });

test('stand-in DNS: capsha256 from SVCB, the TXT fallback and DNS-SD pins each card; a differing digest refuses the card naming the record; a malformed capsha256 refuses the record', async () => {
  const artifacts = new CatalogArtifacts();
  const source = dnsSource({ id: 'dns', scheme: 'http', domains: [{ domain: 'agents.test', agents: ['billing', 'legacy', 'tampered', 'badsha'], dnsSd: true }], resolver: resolver(), hostPolicy: policy, artifacts });
  const fetcher = createCardFetcher({ policy });
  try {
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    const byName = Object.fromEntries(state.records.map((r) => [r.name, r]));
    assert.deepEqual(Object.keys(byName).sort(), ['billing', 'legacy', 'research', 'tampered']);
    assert.deepEqual({ ...byName['billing']!.metadata }, {
      record: '_billing._a2a._agents.agents.test',
      recordType: 'SVCB',
      ttl: '60',
      domain: 'agents.test',
      resolver: dns.address,
      dnssec: 'not validated',
      realm: 'finance',
      alpn: 'h2',
      pinnedSha256: sha(bodies['billing']!),
    });
    // Digests are pinned in lower case whatever case the record uses.
    assert.equal(byName['legacy']!.metadata['recordType'], 'TXT');
    assert.equal(byName['legacy']!.metadata['pinnedSha256'], sha(bodies['legacy']!));
    assert.equal(byName['research']!.metadata['recordType'], 'SRV');
    assert.equal(byName['research']!.baseUrl, `${cards.origin}/research/card.json`);
    assert.equal(byName['research']!.metadata['pinnedSha256'], sha(bodies['research']!));
    const badsha = state.problems?.find((p) => p.path === '_badsha._a2a._agents.agents.test SVCB');
    assert.ok(badsha, JSON.stringify(state.problems));
    assert.match(badsha.message, /^capsha256 .*not-a-digest.* is not a SHA-256 in hex \(64 hex digits\); the record is refused$/);

    const cache = new CardCache({ fetcher: artifacts.fetcher(fetcher), pins: artifacts, hostPolicy: policy, check: { allowLoopback: true } });
    try {
      const { admitted } = resolveEndpoints([state.records], policy);
      const entryOf = (name: string) => cache.get(admitted.find((a) => a.records[0]!.name === name)!.baseUrl);
      for (const name of ['billing', 'legacy', 'research']) assert.equal((await entryOf(name)).rawSha256, sha(bodies[name]!));
      await assert.rejects(entryOf('tampered'), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'ERR_DIGEST_MISMATCH');
        assert.match(err.message, /DNS record _tampered\._a2a\._agents\.agents\.test \(capsha256\)/);
        return true;
      });
    } finally {
      await cache.close();
    }
  } finally {
    await source.close();
    await fetcher.close();
  }
  // A closed source withdraws its pins.
  assert.equal(artifacts.size, 0);
});

test('stand-in DNS: every query asks for the AD bit; answers report it as metadata.dnssec', async () => {
  dns.queries.length = 0;
  const source = dnsSource({ id: 'dns', domains: [{ domain: 'signed.test', agents: ['billing'] }, { domain: 'plain.test', agents: ['billing'] }], resolver: resolver(), hostPolicy: policy });
  try {
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.deepEqual(state.records.map((r) => [r.metadata['record'], r.metadata['dnssec']]), [
      ['_billing._a2a._agents.signed.test', 'validated'],
      ['_billing._a2a._agents.plain.test', 'not validated'],
    ]);
    assert.ok(dns.queries.length >= 2);
    // RFC 6840 §5.7: AD in the query asks the resolver to say whether it validated.
    for (const q of dns.queries) assert.ok(((q.packet.flags ?? 0) & dnsPacket.AUTHENTIC_DATA) !== 0, `AD asked in ${q.name}`);
  } finally {
    await source.close();
  }
});

test('stand-in DNS: requireDnssec admits the answers with the AD bit and refuses the others (agent records and the index) with a clear message', async () => {
  const source = dnsSource({ id: 'dns', requireDnssec: true, domains: [{ domain: 'signed.test', agents: ['billing'] }, { domain: 'plain.test', agents: ['billing'] }, { domain: 'plain.test' }], resolver: resolver(), hostPolicy: policy });
  try {
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.deepEqual(state.records.map((r) => [r.metadata['record'], r.metadata['dnssec'], r.metadata['pinnedSha256']]), [['_billing._a2a._agents.signed.test', 'validated', sha(bodies['billing']!)]]);
    assert.deepEqual(state.problems?.map((p) => p.message), [
      `the SVCB answer for _billing._a2a._agents.plain.test was not DNSSEC-validated by resolver ${dns.address}: no AD bit (requireDnssec: true); refused`,
      `the TXT answer for _index._agents.plain.test was not DNSSEC-validated by resolver ${dns.address}: no AD bit (requireDnssec: true); refused`,
    ]);
  } finally {
    await source.close();
  }
});

test('stand-in DNS: a record for another owner name in an answer is ignored (SVCB and the TXT fallback), so it cannot drop the pin; the source names it in a problem', async () => {
  const source = dnsSource({ id: 'dns', domains: [{ domain: 'hijack.test', agents: ['billing'] }, { domain: 'hijacktxt.test', agents: ['billing'] }], resolver: resolver(), hostPolicy: policy });
  try {
    const state = await source.refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.deepEqual(state.records.map((r) => [r.metadata['record'], r.metadata['recordType'], r.metadata['pinnedSha256']]), [
      ['_billing._a2a._agents.hijack.test', 'SVCB', sha(bodies['billing']!)],
      ['_billing._a2a._agents.hijacktxt.test', 'TXT', sha(bodies['billing']!)],
    ]);
    assert.deepEqual(state.problems, [
      { path: '_billing._a2a._agents.hijack.test SVCB', message: `the answer from resolver ${dns.address} carried SVCB records for other owner names (_decoy._a2a._agents.hijack.test); they are ignored, only records owned by _billing._a2a._agents.hijack.test (or its CNAME target) are read` },
      { path: '_billing._a2a._agents.hijacktxt.test TXT', message: `the answer from resolver ${dns.address} carried TXT records for other owner names (hijacktxt.test); they are ignored, only records owned by _billing._a2a._agents.hijacktxt.test (or its CNAME target) are read` },
    ]);
  } finally {
    await source.close();
  }
});
