/**
 * DNS-AID zone lines (packages/core/src/sources/dns-zone.ts): names, SVCB and TXT presentation
 * format, what is skipped and why; and the round trip — the printed lines served by a real knotd
 * decode back to the same cap and capsha256.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { dnsAidZone, type DnsAidPublishedAgent } from '../../packages/core/src/sources/dns-zone.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { DNS_SKIP, decodeSvcb, queryDns, startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';

const SHA_A = 'a'.repeat(64);
const SHA_B = '0123456789abcdef'.repeat(4);
const billing: DnsAidPublishedAgent = { name: 'billing_agent', cardUrl: 'https://billing.example.com/.well-known/agent-card.json', cardSha256: SHA_A };
const weather: DnsAidPublishedAgent = { name: 'weather', cardUrl: 'https://agents.example.com:8443/weather/card.json', cardSha256: SHA_B.toUpperCase() };

describe('dnsAidZone', () => {
  test('an SVCB record with cap and capsha256, its TXT fallback and the index, under the domain', () => {
    const zone = dnsAidZone([billing, weather], { domain: 'example.com.' });
    const owner = '_billing-agent._a2a._agents.example.com.';
    assert.deepEqual(zone.lines, [
      '_index._agents.example.com. 3600 IN TXT "agents=billing-agent:a2a,weather:a2a"',
      `${owner} 3600 IN SVCB 1 billing.example.com. alpn=a2a port=443 key65400="https://billing.example.com/.well-known/agent-card.json" key65401="${SHA_A}"`,
      `${owner} 3600 IN TXT "v=1" "target=billing.example.com" "port=443" "alpn=a2a" "cap=https://billing.example.com/.well-known/agent-card.json" "capsha256=${SHA_A}" "cap-sha256=${SHA_A}"`,
      `_weather._a2a._agents.example.com. 3600 IN SVCB 1 agents.example.com. alpn=a2a port=8443 key65400="https://agents.example.com:8443/weather/card.json" key65401="${SHA_B}"`,
      `_weather._a2a._agents.example.com. 3600 IN TXT "v=1" "target=agents.example.com" "port=8443" "alpn=a2a" "cap=https://agents.example.com:8443/weather/card.json" "capsha256=${SHA_B}" "cap-sha256=${SHA_B}"`,
    ]);
    assert.deepEqual(zone.records.map((r) => [r.name, r.label, r.owner]), [['billing_agent', 'billing-agent', owner], ['weather', 'weather', '_weather._a2a._agents.example.com.']]);
    assert.deepEqual(zone.problems, []);
  });

  test('--ttl and no index', () => {
    const zone = dnsAidZone([billing], { domain: 'Example.COM', ttlSeconds: 300, index: false });
    assert.equal(zone.index, undefined);
    assert.equal(zone.lines.length, 2);
    assert.ok(zone.lines.every((l) => l.startsWith('_billing-agent._a2a._agents.example.com. 300 IN ')), zone.lines.join('\n'));
  });

  test('an IP literal is no target name: "." with an address hint; http keeps its port', () => {
    const zone = dnsAidZone(
      [
        { name: 'local', cardUrl: 'http://127.0.0.1:8123/.well-known/agent-card.json', cardSha256: SHA_A },
        { name: 'six', cardUrl: 'https://[::1]/card.json', cardSha256: SHA_A },
      ],
      { domain: 'example.com', index: false },
    );
    assert.match(zone.records[0].svcb, / SVCB 1 \. alpn=a2a port=8123 ipv4hint=127\.0\.0\.1 key65400="http:\/\/127\.0\.0\.1:8123\/\.well-known\/agent-card\.json" /);
    assert.match(zone.records[0].txt ?? '', /TXT "v=1" "ipv4hint=127\.0\.0\.1" "port=8123" /);
    assert.match(zone.records[1].svcb, / SVCB 1 \. alpn=a2a port=443 ipv6hint=::1 key65400=/);
  });

  test('characters that end or split a zone-file field are quoted (RFC 1035 §5.1)', () => {
    const zone = dnsAidZone([{ name: 'odd', cardUrl: 'https://h.example.com/a;b(c)/card.json', cardSha256: SHA_A }], { domain: 'example.com', index: false });
    assert.match(zone.records[0].svcb, /key65400="https:\/\/h\.example\.com\/a;b\(c\)\/card\.json"/);
    assert.match(zone.records[0].txt ?? '', /"cap=https:\/\/h\.example\.com\/a;b\(c\)\/card\.json"/);
  });

  test('agents without a usable label, digest or URL are skipped with their reason, as zone comments', () => {
    const zone = dnsAidZone(
      [
        billing,
        { ...billing, name: 'billing-agent' },
        { name: '___', cardUrl: billing.cardUrl, cardSha256: SHA_A },
        { name: 'short', cardUrl: billing.cardUrl, cardSha256: 'abc' },
        { name: 'ftp', cardUrl: 'ftp://files.example.com/card.json', cardSha256: SHA_A },
        { name: 'relative', cardUrl: '/card.json', cardSha256: SHA_A },
      ],
      { domain: 'example.com' },
    );
    assert.deepEqual(zone.records.map((r) => r.name), ['billing_agent']);
    assert.deepEqual(
      zone.problems.map((p) => p.path),
      ['billing-agent', '___', 'short', 'ftp', 'relative'],
    );
    assert.match(zone.problems[0].message, /its label "billing-agent" is already billing_agent's/);
    assert.match(zone.problems[1].message, /no DNS-AID label can be made of its name/);
    assert.match(zone.problems[2].message, /"abc" is not a SHA-256 in hex/);
    assert.match(zone.problems[3].message, /not http\(s\)/);
    assert.match(zone.problems[4].message, /not an absolute URL/);
    assert.deepEqual(zone.lines.slice(0, 5).map((l) => l.slice(0, 2)), ['; ', '; ', '; ', '; ', '; ']);
    assert.equal(zone.lines.length, 5 + 3);
  });

  test('a value longer than a TXT character-string leaves the TXT fallback out, not the SVCB record', () => {
    const long = `https://billing.example.com/${'x'.repeat(260)}/card.json`;
    const zone = dnsAidZone([{ ...billing, cardUrl: long }], { domain: 'example.com', index: false });
    assert.equal(zone.records[0].txt, undefined);
    assert.ok(zone.records[0].svcb.includes(long));
    assert.match(zone.problems[0].message, /TXT fallback left out: .* is 302 bytes, more than a TXT character-string holds \(255/);
  });

  test('an index longer than one character-string is left out with its reason', () => {
    const many = Array.from({ length: 12 }, (_, i) => ({ ...billing, name: `agent_with_a_rather_long_name_${i}` }));
    const zone = dnsAidZone(many, { domain: 'example.com' });
    assert.equal(zone.index, undefined);
    assert.equal(zone.records.length, 12);
    assert.match(zone.problems[0].message, /index left out: the list of 12 agents is \d+ bytes/);
  });

  test('a bad domain or TTL is a configuration error naming each', () => {
    assert.throws(
      () => dnsAidZone([billing], { domain: 'not a domain', ttlSeconds: -1 }),
      (err: unknown) => {
        assert.ok(isDiscoveryError(err));
        assert.equal(err.code, 'ERR_CONFIG_INVALID');
        assert.deepEqual(err.problems.map((p) => p.path), ['domain', 'ttl']);
        return true;
      },
    );
  });
});

describe('dns-records round trip through a real knotd', { skip: DNS_SKIP }, () => {
  let knot: TestDnsServer;
  const agents: DnsAidPublishedAgent[] = [
    billing,
    { name: 'odd_one', cardUrl: 'https://h.example.com/a;b(c)/card.json', cardSha256: SHA_B },
    { name: 'local', cardUrl: 'http://127.0.0.1:8123/.well-known/agent-card.json', cardSha256: SHA_A },
  ];

  before(async () => {
    knot = await startDnsServer({ zones: [{ name: 'example.test', text: dnsAidZone(agents, { domain: 'example.test', ttlSeconds: 120 }).lines.join('\n') }] });
  });
  after(async () => knot?.close());

  test('each SVCB decodes to the same cap and capsha256, target and port', async () => {
    const expected = [
      { owner: '_billing-agent._a2a._agents.example.test', cap: billing.cardUrl, sha: SHA_A, target: 'billing.example.com', port: 443 },
      { owner: '_odd-one._a2a._agents.example.test', cap: agents[1].cardUrl, sha: SHA_B, target: 'h.example.com', port: 443 },
      { owner: '_local._a2a._agents.example.test', cap: agents[2].cardUrl, sha: SHA_A, target: '', port: 8123 },
    ];
    for (const e of expected) {
      const r = await queryDns(knot, e.owner, 64);
      const answers = r.answers.filter((a) => a.type === 'UNKNOWN_64');
      assert.equal(answers.length, 1, `${e.owner}: ${await knot.log()}`);
      assert.equal(answers[0].ttl, 120);
      const svcb = decodeSvcb(answers[0].data as Buffer);
      assert.equal(svcb.params.get(65400)?.toString('utf8'), e.cap);
      assert.equal(svcb.params.get(65401)?.toString('utf8'), e.sha);
      assert.equal(svcb.target, e.target);
      assert.equal(svcb.params.get(3)?.readUInt16BE(0), e.port);
      assert.deepEqual(svcb.params.get(1), Buffer.from('\u0003a2a'));
    }
    const local = decodeSvcb((await queryDns(knot, '_local._a2a._agents.example.test', 64)).answers[0].data as Buffer);
    assert.deepEqual([...(local.params.get(4) ?? [])], [127, 0, 0, 1]);
  });

  test('each TXT fallback holds the same key=value pairs, one per character-string; the index lists the labels', async () => {
    const txt = await queryDns(knot, '_odd-one._a2a._agents.example.test', 'TXT');
    const strings = (txt.answers[0].data as Buffer[]).map((b) => b.toString('utf8'));
    assert.deepEqual(strings, ['v=1', 'target=h.example.com', 'port=443', 'alpn=a2a', `cap=${agents[1].cardUrl}`, `capsha256=${SHA_B}`, `cap-sha256=${SHA_B}`]);
    const index = await queryDns(knot, '_index._agents.example.test', 'TXT');
    assert.deepEqual((index.answers[0].data as Buffer[]).map(String), ['agents=billing-agent:a2a,odd-one:a2a,local:a2a']);
  });
});
