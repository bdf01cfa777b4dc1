/**
 * DNS-AID zone lines (packages/core/src/sources/dns-zone.ts): names, SVCB and TXT presentation
 * format, what is skipped and why; and the round trip — the printed lines served by a real knotd
 * decode back to the same cap and capsha256.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { dnsAidZone, zoneCharacterString, zoneComment, zoneDomainNameProblem, type DnsAidPublishedAgent } from '../../packages/core/src/sources/dns-zone.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { DNS_SKIP, decodeSvcb, queryDns, startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { unescapeComment, unquoteCharacterString, zoneLine } from '../helpers/zone-lines.js';

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

/** Any string, with the characters a zone file reads as syntax (and lone surrogates) common. */
const hostile = fc.string({
  unit: fc.oneof(
    fc.constantFrom('"', '\\', ';', '(', ')', '$', ' ', '\t', '\n', '\r', '\0', '\u007f', '\u0085', '\u2028', '\u202e', '.', '_', '-', 'é', '\ud800'),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
    fc.constantFrom('$INCLUDE /etc/passwd', '\n_injected 60 IN TXT "boom"', 'a', 'Z', '9'),
  ),
  maxLength: 30,
});

describe('zone-file text: character-strings, comments, names', () => {
  test('zoneCharacterString escapes " and \\ with a backslash, other bytes outside printable ASCII as \\DDD', () => {
    assert.equal(zoneCharacterString('a "b" \\c'), '"a \\"b\\" \\\\c"');
    assert.equal(zoneCharacterString('x\ny\rz\u0000'), '"x\\010y\\013z\\000"');
    assert.equal(zoneCharacterString(';()$INCLUDE /etc/passwd'), '";()$INCLUDE /etc/passwd"');
    assert.equal(zoneCharacterString('é'), '"\\195\\169"');
    assert.equal(zoneCharacterString(new Uint8Array([0x22, 0xff])), '"\\"\\255"');
  });

  test('property: for any string, the quoted form is one line, starts and ends with ", and unescapes to its bytes', () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string({ unit: 'binary' })), (value) => {
        const quoted = zoneCharacterString(value);
        assert.ok(!/[\r\n]/.test(quoted));
        assert.ok(quoted.startsWith('"') && quoted.endsWith('"') && quoted.length >= 2);
        assert.ok(/^[\x20-\x7e]*$/.test(quoted), 'printable ASCII only');
        assert.deepEqual(unquoteCharacterString(quoted), Buffer.from(value, 'utf8'));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        assert.deepEqual(unquoteCharacterString(zoneCharacterString(bytes)), Buffer.from(bytes));
      }),
    );
  });

  test('property: for any string, zoneComment is one comment line that unescapes to its bytes', () => {
    fc.assert(
      fc.property(fc.oneof(hostile, fc.string({ unit: 'binary' })), (text) => {
        const line = zoneComment(text);
        assert.ok(line.startsWith('; '));
        assert.ok(!/[\p{Cc}\p{Zl}\p{Zp}\p{Cs}\u202a-\u202e\u2066-\u2069]/u.test(line), JSON.stringify(line));
        const parsed = zoneLine(line);
        assert.deepEqual(parsed.fields, []);
        assert.deepEqual(unescapeComment(line.slice(2)), Buffer.from(text, 'utf8'));
      }),
      { numRuns: 2000 },
    );
    assert.equal(zoneComment('x\n$INCLUDE /etc/passwd\r\\'), '; x\\010$INCLUDE /etc/passwd\\013\\\\');
  });

  test('zoneDomainNameProblem: labels of letters, digits, - and _, 1–63 octets, 255 in all', () => {
    for (const ok of ['example.com', 'example.com.', 'xn--bcher-kva.example', '_a2a._tcp.example.com', 'a_b.example', `${'a'.repeat(63)}.com`, Array.from({ length: 4 }, () => 'a'.repeat(62)).join('.')]) {
      assert.equal(zoneDomainNameProblem(ok), undefined, ok);
    }
    for (const bad of ['', '.', 'a..b', 'a;b.example.com', 'a(b).example.com', 'x"y.example', '$include.example', 'a b.example', 'a\\b.example', 'x\ny.example', 'bücher.example', `${'a'.repeat(64)}.com`, Array.from({ length: 5 }, () => 'a'.repeat(50)).join('.') + '.ab']) {
      assert.match(zoneDomainNameProblem(bad) ?? '', /not a domain name|octets as a DNS name/, JSON.stringify(bad));
    }
  });
});

describe('dnsAidZone with hostile input', () => {
  test('a host that is no zone-file name (; ( ) " $ …) is skipped with a comment, never written as a target', () => {
    const hosts = ['a;b.example.com', 'a(b.example.com', 'b).example.com', 'x"y.example.com', '$include.example.com', 'x!y.example.com', 'a..b.example.com'];
    const zone = dnsAidZone(hosts.map((h, i) => ({ name: `agent${i}`, cardUrl: `https://${h}/card.json`, cardSha256: SHA_A })), { domain: 'example.com' });
    assert.deepEqual(zone.records, []);
    assert.deepEqual(zone.problems.map((p) => p.path), hosts.map((_, i) => `agent${i}`));
    for (const p of zone.problems) assert.match(p.message, /^skipped: card URL host ".*" is not a domain name/);
    assert.equal(zone.lines.length, hosts.length);
  });

  test('a long name makes a label of 62 characters: `_{label}` is one DNS label of 63 octets at most', () => {
    const zone = dnsAidZone([{ ...billing, name: `agent_${'x'.repeat(80)}` }], { domain: 'example.com', index: false });
    assert.equal(zone.records[0]?.label, `agent-${'x'.repeat(56)}`);
    assert.equal(zoneDomainNameProblem(zone.records[0].owner), undefined);
  });

  test('a host with a trailing dot is written once-dotted; an IDN host in its punycode form', () => {
    const zone = dnsAidZone(
      [
        { name: 'dot', cardUrl: 'https://billing.example.com./card.json', cardSha256: SHA_A },
        { name: 'idn', cardUrl: 'https://bücher.example/card.json', cardSha256: SHA_A },
      ],
      { domain: 'example.com', index: false },
    );
    assert.match(zone.records[0].svcb, / SVCB 1 billing\.example\.com\. alpn=a2a /);
    assert.match(zone.records[0].txt ?? '', / "target=billing\.example\.com" /);
    assert.match(zone.records[1].svcb, / SVCB 1 xn--bcher-kva\.example\. alpn=a2a /);
  });

  test('an owner name over 255 octets and an SVCB record over 65535 octets are skipped', () => {
    const domain = Array.from({ length: 4 }, () => 'd'.repeat(60)).join('.');
    const zone = dnsAidZone([{ name: 'a'.repeat(40), cardUrl: billing.cardUrl, cardSha256: SHA_A }, { name: 'b', cardUrl: billing.cardUrl, cardSha256: SHA_A }], { domain });
    assert.deepEqual(zone.records.map((r) => r.name), []);
    assert.match(zone.problems[0].message, /^skipped: its owner name ".*" is 300 octets as a DNS name, more than 255/);
    const huge = dnsAidZone([{ name: 'huge', cardUrl: `https://billing.example.com/${'x'.repeat(70_000)}`, cardSha256: SHA_A }, billing], { domain: 'example.com' });
    assert.deepEqual(huge.records.map((r) => r.name), ['billing_agent']);
    assert.match(huge.problems[0].message, /^skipped: its SVCB record would be \d+ octets, more than a record holds \(65535/);
  });

  test('property: whatever the names and URLs, each line is one comment or one record with every field and SvcParam in place', () => {
    const url = fc.tuple(hostile, hostile, fc.constantFrom('https', 'http')).map(([host, path, scheme]) => `${scheme}://${host || 'h'}.example.com/${path}`);
    fc.assert(
      fc.property(fc.uniqueArray(fc.record({ name: hostile, cardUrl: fc.oneof(url, hostile), cardSha256: fc.constantFrom(SHA_A, SHA_B, 'x\n$INCLUDE /etc/passwd') }), { selector: (a) => a.name, maxLength: 5 }), (agents) => {
        const zone = dnsAidZone(agents, { domain: 'example.com' });
        for (const line of zone.lines) {
          assert.ok(!/[\r\n]/.test(line) && !line.startsWith('$'), JSON.stringify(line));
          const { fields, comment } = zoneLine(line);
          if (line.startsWith('; ')) {
            assert.deepEqual(fields, []);
            assert.ok(!/[\p{Cc}\p{Zl}\p{Zp}]/u.test(comment ?? ''), JSON.stringify(line));
            continue;
          }
          assert.equal(comment, undefined, `a record line has no comment: ${line}`);
          const text = fields.map((f) => f.toString('latin1'));
          assert.equal(zoneDomainNameProblem(text[0]!), undefined, line);
          assert.deepEqual(text.slice(1, 3), ['3600', 'IN']);
        }
        for (const r of zone.records) {
          const agent = agents.find((a) => a.name === r.name)!;
          const svcb = zoneLine(r.svcb).fields.map((f) => f.toString('utf8'));
          assert.deepEqual(svcb.slice(0, 5), [r.owner, '3600', 'IN', 'SVCB', '1']);
          assert.ok(svcb[5] === '.' || zoneDomainNameProblem(svcb[5]!) === undefined, r.svcb);
          const params = svcb.slice(6);
          assert.deepEqual(params.map((p) => p.split('=')[0]), ['alpn', 'port', ...(svcb[5] === '.' ? [params[2]!.split('=')[0]!] : []), 'key65400', 'key65401']);
          assert.equal(params.at(-2), `key65400=${new URL(agent.cardUrl).href}`);
          assert.equal(params.at(-1), `key65401=${agent.cardSha256.toLowerCase()}`);
          if (r.txt !== undefined) assert.equal(zoneLine(r.txt).fields.length, 4 + 7);
        }
      }),
      { numRuns: 500 },
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
