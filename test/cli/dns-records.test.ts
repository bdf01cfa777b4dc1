/**
 * `a2a-discovery dns-records`, run as a user runs it: from a saved AI Catalog, from a running
 * service's catalog (real loopback A2A peer, real service), its usage errors; and the round trip —
 * the lines it prints, served by a real knotd, decode to the card URL the service read and the
 * SHA-256 of the bytes that URL serves.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService, type RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startAdkPeer, type RunningPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { runCli } from '../helpers/cli.js';
import { DNS_SKIP, decodeSvcb, queryDns, startDnsServer } from '../helpers/dns-server.js';
import { zoneLine } from '../helpers/zone-lines.js';

const SHA = 'c'.repeat(64);
let dir: string;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dns-records-'));
});
after(async () => rm(dir, { recursive: true, force: true }));

describe('dns-records --catalog', () => {
  test('prints SVCB and TXT per agent and the index; entries it cannot publish as comments with the reason', async () => {
    const file = join(dir, 'catalog.json');
    await writeFile(
      file,
      JSON.stringify({
        specVersion: '1.0',
        host: { displayName: 'a2a-discovery' },
        entries: [
          { identifier: 'x#billing_agent', type: 'application/a2a-agent-card+json', url: 'https://billing.example.com/.well-known/agent-card.json', displayName: 'billing_agent', extensions: { 'dev.a2a-discovery.agent': { localName: 'billing_agent', rawSha256: SHA } } },
          { identifier: 'x#inline_agent', type: 'application/a2a-agent-card+json', data: { name: 'Inline' }, displayName: 'inline_agent', extensions: { 'dev.a2a-discovery.agent': { localName: 'inline_agent', rawSha256: SHA } } },
          { identifier: 'x#foreign', type: 'application/a2a-agent-card+json', url: 'https://foreign.example.com/card.json', displayName: 'foreign' },
          { identifier: '/api/registry/#ard-registry', type: 'application/ai-registry+json', url: '/api/registry/', displayName: 'registry' },
        ],
        extensions: { 'dev.a2a-discovery.snapshot': { digest: 'd'.repeat(64), version: 7, createdAt: '2026-12-01T00:00:00.000Z' } },
      }),
    );
    const r = await runCli(['dns-records', '--domain', 'example.com', '--catalog', file, '--ttl', '600']);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.trimEnd().split('\n');
    assert.deepEqual(lines, [
      `; DNS-AID records for example.com: 1 agent, from snapshot version 7 (dddddddddddd) of ${file}`,
      '; inline_agent: skipped: its card is carried inline in the catalog; there is no card URL to publish as cap',
      '; foreign: skipped: the entry has no dev.a2a-discovery.agent rawSha256 (not a catalog of a2a-discovery); there is no card digest to publish as capsha256',
      '_index._agents.example.com. 600 IN TXT "agents=billing-agent:a2a"',
      `_billing-agent._a2a._agents.example.com. 600 IN SVCB 1 billing.example.com. alpn=a2a port=443 key65400="https://billing.example.com/.well-known/agent-card.json" key65401="${SHA}"`,
      `_billing-agent._a2a._agents.example.com. 600 IN TXT "v=1" "target=billing.example.com" "port=443" "alpn=a2a" "cap=https://billing.example.com/.well-known/agent-card.json" "capsha256=${SHA}" "cap-sha256=${SHA}"`,
    ]);

    const json = await runCli(['dns-records', '--domain', 'example.com', '--catalog', file, '--no-index', '--json']);
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { snapshot: unknown; index: unknown; records: Array<{ owner: string }>; problems: Array<{ path: string }> };
    assert.deepEqual(report.snapshot, { digest: 'd'.repeat(64), version: 7 });
    assert.equal(report.index, null);
    assert.deepEqual(report.records.map((x) => x.owner), ['_billing-agent._a2a._agents.example.com.']);
    assert.deepEqual(report.problems.map((p) => p.path), ['inline_agent', 'foreign']);
  });

  test('usage errors: neither --url nor --catalog, a bad domain, a bad TTL — exit 2', async () => {
    const none = await runCli(['dns-records', '--domain', 'example.com', '--json']);
    assert.equal(none.code, 2);
    assert.match((JSON.parse(none.stdout) as { error: { message: string } }).error.message, /give one of --url <service> or --catalog <file>/);
    const file = join(dir, 'empty.json');
    await writeFile(file, JSON.stringify({ specVersion: '1.0', entries: [] }));
    const domain = await runCli(['dns-records', '--domain', 'not a domain', '--catalog', file]);
    assert.equal(domain.code, 2);
    assert.match(domain.stderr, /domain: "not a domain" is not a domain name/);
    const ttl = await runCli(['dns-records', '--domain', 'example.com', '--catalog', file, '--ttl', '-5']);
    assert.equal(ttl.code, 2);
    const empty = await runCli(['dns-records', '--domain', 'example.com', '--catalog', file]);
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /no agent to publish/);
  });
});

/**
 * A catalog from anyone: agent names, card URLs (paths and hosts) and the snapshot digest hold
 * `"`, `;`, `\`, CR, LF, `(`, `)` and `$INCLUDE /etc/passwd`, and lines that would be records of
 * their own (`_injected … TXT "boom"`).
 */
function hostileCatalog(): unknown {
  const entry = (localName: string, url: string | undefined) => ({
    identifier: `x#${localName}`,
    type: 'application/a2a-agent-card+json',
    ...(url !== undefined && { url }),
    displayName: localName,
    extensions: { 'dev.a2a-discovery.agent': { localName, rawSha256: SHA } },
  });
  return {
    specVersion: '1.0',
    entries: [
      entry('billing_agent', 'https://billing.example.com/.well-known/agent-card.json'),
      // A name that makes a label (62 characters), a URL whose path and query hold the lot.
      entry('tricky"; \\ (x)\r\n_injected 60 IN TXT "boom"\n$INCLUDE /etc/passwd', 'https://Tricky.Example.com/a;b(c)"d"/card.json?q=\\x$INCLUDE /etc/passwd;(\r\n)'),
      // Hosts a URL allows and a zone file cannot hold as a target name.
      entry('semi\n$INCLUDE /etc/passwd', 'https://a;b.example.com/card.json'),
      entry('paren\r_injected TXT "boom"', 'https://a(b).example.com/card.json'),
      entry('quote', 'https://x"y.example.com/card.json'),
      // A name that makes no label.
      entry('\n;"()\\\r', 'https://billing.example.com/other.json'),
      { identifier: 'x#inline', type: 'application/a2a-agent-card+json', data: { name: 'x' }, displayName: 'inline\n$INCLUDE /etc/passwd' },
      entry('relative', '\n$INCLUDE /etc/passwd'),
    ],
    extensions: { 'dev.a2a-discovery.snapshot': { digest: 'd\n$INCLUDE /etc/passwd\r_injected TXT "boom" ;()\\', version: 3 } },
  };
}

const TRICKY = 'tricky------x----injected-60-in-txt--boom---include--etc-passw';
const TRICKY_CAP = 'https://tricky.example.com/a;b(c)%22d%22/card.json?q=\\x$INCLUDE%20/etc/passwd;()';

/** The records dns-records must print for {@link hostileCatalog}, as owner, type and fields (unescaped). */
function expectedRecords(domain: string): string[][] {
  const owner = (label: string) => `_${label}._a2a._agents.${domain}.`;
  const txt = (host: string, cap: string) => ['v=1', `target=${host}`, 'port=443', 'alpn=a2a', `cap=${cap}`, `capsha256=${SHA}`, `cap-sha256=${SHA}`];
  const billingCap = 'https://billing.example.com/.well-known/agent-card.json';
  return [
    [`_index._agents.${domain}.`, 'TXT', `agents=billing-agent:a2a,${TRICKY}:a2a`],
    [owner('billing-agent'), 'SVCB', '1', 'billing.example.com.', 'alpn=a2a', 'port=443', `key65400=${billingCap}`, `key65401=${SHA}`],
    [owner('billing-agent'), 'TXT', ...txt('billing.example.com', billingCap)],
    [owner(TRICKY), 'SVCB', '1', 'tricky.example.com.', 'alpn=a2a', 'port=443', `key65400=${TRICKY_CAP}`, `key65401=${SHA}`],
    [owner(TRICKY), 'TXT', ...txt('tricky.example.com', TRICKY_CAP)],
  ];
}

describe('dns-records --catalog from anyone: no extra record, no $ directive, no lost SvcParam', () => {
  test('every line is one of the expected records or a one-line comment naming what was skipped and why', async () => {
    const file = join(dir, 'hostile.json');
    await writeFile(file, JSON.stringify(hostileCatalog()));
    const r = await runCli(['dns-records', '--domain', 'example.test', '--catalog', file, '--ttl', '60']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes('\r'), 'no CR anywhere');
    const lines = r.stdout.trimEnd().split('\n');
    assert.ok(lines.every((l) => !l.startsWith('$')), 'no line starts with $');
    const comments = lines.filter((l) => l.startsWith(';'));
    assert.deepEqual(comments, [
      `; DNS-AID records for example.test: 2 agents, from snapshot version 3 (d\\010$INCLUDE /) of ${file}`,
      '; inline\\010$INCLUDE /etc/passwd: skipped: its card is carried inline in the catalog; there is no card URL to publish as cap',
      '; relative: skipped: url "\\\\n$INCLUDE /etc/passwd" is not absolute',
      '; semi\\010$INCLUDE /etc/passwd: skipped: card URL host "a;b.example.com" is not a domain name that a zone file can hold (label "a;b": 1–63 ASCII letters, digits, "-" or "_" per label)',
      '; paren\\013_injected TXT "boom": skipped: card URL host "a(b).example.com" is not a domain name that a zone file can hold (label "a(b)": 1–63 ASCII letters, digits, "-" or "_" per label)',
      '; quote: skipped: card URL host "x\\\\"y.example.com" is not a domain name that a zone file can hold (label "x\\\\"y": 1–63 ASCII letters, digits, "-" or "_" per label)',
      '; \\010;"()\\\\\\013: skipped: no DNS-AID label can be made of its name ("" is not a DNS-AID agent label (1–63 lower-case letters, digits or inner hyphens))',
    ]);
    // The other lines, read as a zone parser reads them: exactly the expected records, each whole.
    const records = lines
      .filter((l) => !l.startsWith(';'))
      .map((l) => {
        const { fields, comment } = zoneLine(l);
        assert.equal(comment, undefined, `a record line with a comment in it: ${l}`);
        const [owner, ttl, klass, ...rest] = fields.map((f) => f.toString('utf8'));
        assert.deepEqual([ttl, klass], ['60', 'IN'], l);
        return [owner!, ...rest];
      });
    assert.deepEqual(records, expectedRecords('example.test'));
  });

  test('served by knot (signed, so that NSEC lists every name): exactly the expected records, no _injected name', { skip: DNS_SKIP }, async () => {
    const file = join(dir, 'hostile-knot.json');
    await writeFile(file, JSON.stringify(hostileCatalog()));
    const r = await runCli(['dns-records', '--domain', 'example.test', '--catalog', file, '--ttl', '60']);
    assert.equal(r.code, 0, r.stderr);
    // knot refuses a zone it cannot parse: startDnsServer then throws with knot's log.
    const knot = await startDnsServer({ zones: [{ name: 'example.test', text: r.stdout, dnssec: true }] });
    try {
      // Walk the NSEC chain from the apex: every name of the zone and its types.
      const names = new Map<string, string[]>();
      let name = 'example.test';
      for (let i = 0; i < 50; i++) {
        const answer = (await queryDns(knot, name, 'NSEC', { dnssec: true })).answers.find((a) => a.type === 'NSEC');
        assert.ok(answer, `no NSEC at ${name}: ${await knot.log()}`);
        const nsec = answer.data as { nextDomain: string; rrtypes: string[] };
        names.set(name.toLowerCase(), nsec.rrtypes.filter((t) => !['RRSIG', 'NSEC'].includes(t)).sort());
        name = nsec.nextDomain;
        if (name.toLowerCase() === 'example.test') break;
      }
      const own = (label: string) => `_${label}._a2a._agents.example.test`;
      assert.deepEqual(
        new Map([...names].filter(([n]) => n !== 'example.test' && n !== 'ns.example.test')),
        new Map([
          ['_index._agents.example.test', ['TXT']],
          [own('billing-agent'), ['TXT', 'UNKNOWN_64']],
          [own(TRICKY), ['TXT', 'UNKNOWN_64']],
        ]),
      );
      assert.ok(![...names.keys()].some((n) => /(^|\.)_injected\./.test(n)), [...names.keys()].join(' '));
      for (const n of ['_injected.example.test', '_injected.example.test.example.test']) {
        assert.equal((await queryDns(knot, n, 'TXT')).rcode, 'NXDOMAIN', n);
      }
      // Each record, as served, is the expected one.
      for (const [owner, type, ...data] of expectedRecords('example.test')) {
        const answers = (await queryDns(knot, owner!, type === 'SVCB' ? 64 : type!)).answers.filter((a) => a.type === (type === 'SVCB' ? 'UNKNOWN_64' : type));
        assert.equal(answers.length, 1, owner);
        if (type === 'TXT') {
          assert.deepEqual((answers[0].data as Buffer[]).map((b) => b.toString('utf8')), data);
        } else {
          const svcb = decodeSvcb(answers[0].data as Buffer);
          assert.deepEqual(
            [String(svcb.priority), `${svcb.target}.`, ...[...svcb.params].map(([k, v]) => (k === 1 ? `alpn=${v.subarray(1).toString()}` : k === 3 ? `port=${v.readUInt16BE(0)}` : `key${k}=${v.toString('utf8')}`))],
            data,
          );
        }
      }
    } finally {
      await knot.close();
    }
  });
});

describe('dns-records --url: a running service, its records served by knot', () => {
  let peer: RunningPeer;
  let service: RunningService;
  let plain: RunningService;

  before(async () => {
    peer = await startAdkPeer({ name: 'billing', description: 'Billing.', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
    const options = {
      port: 0,
      policy: { allow: [new URL(peer.baseUrl).origin], allowLoopback: true },
      vocabulary: [{ tag: 'billing', description: 'Invoices and payments.' }],
      needs: [{ tag: 'billing' }],
      static: [{ name: 'billing_agent', url: peer.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
      health: { enterAfter: 1 },
      cache: { minTtlMs: 0 },
      loop: { cycleIntervalMs: 600_000 },
      logger: createLogger({ level: 'silent' }),
    };
    service = await startService({ ...options, catalog: { enabled: true } });
    plain = await startService(options);
  });
  after(async () => {
    await service?.close();
    await plain?.close();
    await peer?.close();
  });

  test('without server.catalog.enabled the service answers 404: a usage error that says so', async () => {
    const r = await runCli(['dns-records', '--domain', 'example.test', '--url', plain.url]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /answered 404 \(is server\.catalog\.enabled on\?/);
  });

  test('the printed lines, served by knot, decode to the card URL and the SHA-256 of the bytes it serves', { skip: DNS_SKIP }, async () => {
    const r = await runCli(['dns-records', '--domain', 'example.test', '--url', service.url, '--ttl', '60']);
    assert.equal(r.code, 0, r.stderr);
    const knot = await startDnsServer({ zones: [{ name: 'example.test', text: r.stdout }] });
    try {
      const answer = await queryDns(knot, '_billing-agent._a2a._agents.example.test', 64);
      const svcb = decodeSvcb(answer.answers.find((a) => a.type === 'UNKNOWN_64')?.data as Buffer);
      const cap = svcb.params.get(65400)?.toString('utf8') ?? '';
      assert.equal(cap, `${peer.baseUrl}.well-known/agent-card.json`);
      const bytes = Buffer.from(await (await fetch(cap)).arrayBuffer());
      assert.equal(svcb.params.get(65401)?.toString('utf8'), createHash('sha256').update(bytes).digest('hex'));
      assert.equal(svcb.params.get(3)?.readUInt16BE(0), Number(new URL(peer.baseUrl).port));
      const index = await queryDns(knot, '_index._agents.example.test', 'TXT');
      assert.deepEqual((index.answers[0].data as Buffer[]).map(String), ['agents=billing-agent:a2a']);
    } finally {
      await knot.close();
    }
  });
});
