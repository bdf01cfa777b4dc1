/**
 * The DNS source's record readers (packages/core/src/sources/dns-rdata.ts): SVCB rdata in RFC 9460
 * wire format, encoded here by hand as a zone's server would send it, with DNS-AID's
 * private-use keys; the TXT fallback; the `_index._agents` entry.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeSvcb, readDnsAidIndex, svcbFromTxt, txtPairs } from '../../packages/core/src/sources/dns-rdata.js';
import { DNS_AID_PARAM_KEYS, SVCB_PARAM_KEYS } from '../../packages/core/src/rules/dns-aid.js';

/** RFC 9460 §2.2 rdata: priority, uncompressed target, params (key, length, value) in the given order. */
function svcbRdata(priority: number, target: string, params: Array<[number, Buffer]>): Buffer {
  const name = target === '.' ? Buffer.from([0]) : Buffer.concat([...target.split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
  const head = Buffer.alloc(2);
  head.writeUInt16BE(priority);
  const ps = params.map(([k, v]) => {
    const h = Buffer.alloc(4);
    h.writeUInt16BE(k, 0);
    h.writeUInt16BE(v.length, 2);
    return Buffer.concat([h, v]);
  });
  return Buffer.concat([head, name, ...ps]);
}

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};
const SHA = 'ab'.repeat(32);

test('decodes ServiceMode SVCB rdata: target, alpn, port, address hints and every DNS-AID key', () => {
  const rdata = svcbRdata(1, 'Billing.Example.com', [
    [SVCB_PARAM_KEYS.alpn, Buffer.from([2, ...Buffer.from('h2'), 8, ...Buffer.from('http/1.1')])],
    [SVCB_PARAM_KEYS.port, u16(8443)],
    [SVCB_PARAM_KEYS.ipv4hint, Buffer.from([192, 0, 2, 1, 192, 0, 2, 2])],
    [SVCB_PARAM_KEYS.ipv6hint, Buffer.from('20010db8000000000000000000000001', 'hex')],
    [DNS_AID_PARAM_KEYS.cap, Buffer.from('https://billing.example.com/card.json')],
    [DNS_AID_PARAM_KEYS.capsha256, Buffer.from(SHA)],
    [DNS_AID_PARAM_KEYS.bap, Buffer.from('a2a/1.0')],
    [DNS_AID_PARAM_KEYS.policy, Buffer.from('https://example.com/policy')],
    [DNS_AID_PARAM_KEYS.realm, Buffer.from('prod')],
    [65500, Buffer.from('x')],
  ]);
  const d = decodeSvcb(rdata);
  assert.equal(d.priority, 1);
  assert.equal(d.target, 'billing.example.com');
  assert.deepEqual(d.alpn, ['h2', 'http/1.1']);
  assert.equal(d.port, 8443);
  assert.deepEqual(d.ipv4hint, ['192.0.2.1', '192.0.2.2']);
  assert.deepEqual(d.ipv6hint, ['2001:db8:0:0:0:0:0:1']);
  assert.deepEqual({ ...d.dnsAid }, { cap: 'https://billing.example.com/card.json', capsha256: SHA, bap: 'a2a/1.0', policy: 'https://example.com/policy', realm: 'prod' });
  assert.deepEqual(d.otherKeys, [65500]);
  assert.equal(decodeSvcb(svcbRdata(0, '.', [])).target, '.');
});

test('refuses malformed SVCB rdata with a precise message', () => {
  assert.throws(() => decodeSvcb(Buffer.from([0, 1])), /too short/);
  assert.throws(() => decodeSvcb(Buffer.from([0, 1, 5, 0x61])), /TargetName runs past/);
  assert.throws(() => decodeSvcb(Buffer.from([0, 1, 0xc0, 0x0c])), /compressed or malformed/);
  assert.throws(() => decodeSvcb(svcbRdata(1, 'a.example', [[SVCB_PARAM_KEYS.port, u16(1)], [SVCB_PARAM_KEYS.alpn, Buffer.from([2, 104, 50])]])), /out of order/);
  assert.throws(() => decodeSvcb(svcbRdata(1, 'a.example', [[SVCB_PARAM_KEYS.port, Buffer.from([1])]])), /port has 1 bytes/);
  assert.throws(() => decodeSvcb(svcbRdata(1, 'a.example', [[SVCB_PARAM_KEYS.ipv4hint, Buffer.from([1, 2, 3])]])), /ipv4hint of 3 bytes/);
  const truncated = svcbRdata(1, 'a.example', [[DNS_AID_PARAM_KEYS.cap, Buffer.from('https://a.example/card.json')]]);
  assert.throws(() => decodeSvcb(truncated.subarray(0, truncated.length - 3)), /key65400 of length 27 runs past/);
});

test('reads the TXT fallback (one pair per string, or space-separated) and the _index._agents list', () => {
  assert.deepEqual([...txtPairs(['cap=https://a.example/x.json', 'CAP=second', 'flag'])], [['cap', 'https://a.example/x.json'], ['flag', '']]);
  const t = svcbFromTxt([`target=billing.example.com. port=8443 cap=https://billing.example.com/card.json capsha256=${SHA} realm=prod`]);
  assert.equal(t.target, 'billing.example.com');
  assert.equal(t.port, 8443);
  assert.deepEqual({ ...t.dnsAid }, { cap: 'https://billing.example.com/card.json', capsha256: SHA, realm: 'prod' });
  assert.throws(() => svcbFromTxt(['port=99999']), /not a port number/);
  const index = readDnsAidIndex(['agents=billing:a2a,chat:mcp,support', 'registry=https://registry.example.com/']);
  assert.deepEqual(index.agents, ['billing', 'support']);
  assert.deepEqual(index.otherProtocols, ['chat:mcp']);
  assert.equal(index.registry, 'https://registry.example.com/');
});
