/**
 * The DNS test harness itself (test/helpers/dns-server.ts): a real knotd serves DNS-AID SVCB
 * records from zone text and reloads them; a real unbound validates the zone knot signs (AD set)
 * and not the unsigned one (AD absent).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DNS_SKIP, decodeSvcb, queryDns, startDnsServer, startValidatingResolver, type TestDnsServer, type TestResolver } from '../helpers/dns-server.js';

const CAP = 'https://billing.example.com/.well-known/agent-card.json';
const SHA = 'a'.repeat(64);

function records(sha: string): string {
  return [
    `_billing._a2a._agents SVCB 1 billing.example.com. alpn=h2 port=443 key65400="${CAP}" key65401="${sha}"`,
    `_billing._a2a._agents TXT "cap=${CAP}" "capsha256=${sha}"`,
  ].join('\n');
}

async function capsha256(server: { host: string; port: number }, name: string): Promise<string> {
  const r = await queryDns(server, name, 64);
  const svcb = r.answers.filter((a) => a.type === 'UNKNOWN_64').map((a) => decodeSvcb(a.data as Buffer));
  assert.equal(svcb.length, 1, `one SVCB at ${name}`);
  return svcb[0].params.get(65401)?.toString() ?? '';
}

describe('DNS test harness (knot + unbound)', { skip: DNS_SKIP }, () => {
  let knot: TestDnsServer;
  let unbound: TestResolver;

  before(async () => {
    knot = await startDnsServer({
      zones: [
        { name: 'signed.test', text: records(SHA), dnssec: true },
        { name: 'plain.test', text: records(SHA) },
      ],
    });
    unbound = await startValidatingResolver({ server: knot });
  });

  after(async () => {
    await unbound?.close();
    await knot?.close();
  });

  test('knot serves the SVCB record with its DNS-AID parameters, and the TXT fallback', async () => {
    const r = await queryDns(knot, '_billing._a2a._agents.plain.test', 64);
    assert.equal(r.rcode, 'NOERROR');
    const svcb = decodeSvcb(r.answers.find((a) => a.type === 'UNKNOWN_64')?.data as Buffer);
    assert.equal(svcb.priority, 1);
    assert.equal(svcb.target, 'billing.example.com');
    assert.equal(svcb.params.get(65400)?.toString(), CAP);
    assert.equal(svcb.params.get(65401)?.toString(), SHA);
    assert.deepEqual(svcb.params.get(1), Buffer.from([2, ...Buffer.from('h2')]));
    assert.equal(svcb.params.get(3)?.readUInt16BE(0), 443);
    const txt = await queryDns(knot, '_billing._a2a._agents.plain.test', 'TXT');
    assert.deepEqual((txt.answers[0].data as Buffer[]).map(String), [`cap=${CAP}`, `capsha256=${SHA}`]);
  });

  test('knot signs the zone given dnssec: true and returns its trust anchor', async () => {
    const anchors = knot.trustAnchors.get('signed.test') ?? [];
    assert.ok(anchors.length > 0 && anchors.every((ds) => /^signed\.test\.\s+DS\s+\d+ 13 \d [0-9a-f]+$/i.test(ds)), anchors.join('\n'));
    assert.equal(knot.trustAnchors.has('plain.test'), false);
    const r = await queryDns(knot, '_billing._a2a._agents.signed.test', 64, { dnssec: true });
    assert.ok(r.answers.some((a) => a.type === 'RRSIG'), 'the SVCB answer is signed');
  });

  test('through unbound, the signed zone\'s answer carries AD; the unsigned zone\'s does not', async () => {
    const signed = await queryDns(unbound, '_billing._a2a._agents.signed.test', 64, { dnssec: true });
    assert.equal(signed.rcode, 'NOERROR');
    assert.equal(signed.authenticData, true, await unbound.log());
    const plain = await queryDns(unbound, '_billing._a2a._agents.plain.test', 64, { dnssec: true });
    assert.equal(plain.rcode, 'NOERROR');
    assert.equal(plain.answers.filter((a) => a.type === 'UNKNOWN_64').length, 1);
    assert.equal(plain.authenticData, false);
    // knot itself is authoritative, not validating: never AD.
    assert.equal((await queryDns(knot, '_billing._a2a._agents.signed.test', 64, { dnssec: true })).authenticData, false);
  });

  test('reload serves new records, for an unsigned and a signed zone', async () => {
    const next = 'b'.repeat(64);
    await knot.reload(records(next), 'plain.test');
    assert.equal(await capsha256(knot, '_billing._a2a._agents.plain.test'), next);
    await knot.reload(records(next), 'signed.test');
    assert.equal(await capsha256(knot, '_billing._a2a._agents.signed.test'), next);
    const r = await queryDns(knot, '_billing._a2a._agents.signed.test', 64, { dnssec: true });
    assert.ok(r.answers.some((a) => a.type === 'RRSIG'), 'still signed after the reload');
  });

  test('a zone knot cannot load fails the start with its log', async () => {
    await assert.rejects(startDnsServer({ zones: [{ name: 'broken.test', text: 'this is not a record' }] }), (err: Error) => {
      assert.match(err.message, /knotd \(zone broken\.test\) failed/);
      assert.match(err.message, /broken\.test.*line \d+ \(unsupported record type\)/);
      return true;
    });
  });
});
