/**
 * The unroutable-interface rule (`unroutableHost`, `reviewedInterface`) and what selection does
 * with it: a card whose chosen interface names `0.0.0.0` or `::` is kept (warned at the
 * interface's JSON path) but selected only when its static entry's `interfaceUrl` says where the
 * agent answers; a routable interface is never rewritten; the rewrite is shown and its key is
 * part of the snapshot digest.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAgentCard, reviewedInterface } from '../../packages/core/src/card/index.js';
import { unroutableHost } from '../../packages/core/src/card/interface-policy.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { selectAgents, TagVocabulary, type Candidate, type SelectOptions } from '../../packages/core/src/match/index.js';
import { buildSnapshot, toSnapshotAgents } from '../../packages/core/src/snapshot/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import type { EndpointRecord } from '../../packages/core/src/sources/index.js';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { admitted, entryFor, rawCard } from './fixtures.js';

const base: SelectOptions = { needs: [{ tag: 'billing' }], vocabulary: new TagVocabulary([{ tag: 'billing', description: 'Invoices.' }]) };

/** A billing card served at `host` whose interface URL is `interfaceOrigin` + /a2a/jsonrpc. */
function card(interfaceOrigin: string): Record<string, unknown> {
  return rawCard(interfaceOrigin, { skills: [{ id: 'b', tags: ['billing'] }], overrides: { securitySchemes: undefined, securityRequirements: undefined } });
}

function candidate(name: string, host: string, interfaceOrigin: string, record: Partial<EndpointRecord> = {}, source = 'static'): Candidate {
  const baseUrl = `https://${host}/`;
  const rec = Object.freeze({ name, baseUrl, source, metadata: { description: 'Reviewed.', tags: 'billing', critical: 'false' }, ...record });
  return { endpoint: admitted(baseUrl, [rec as EndpointRecord]), entry: entryFor(baseUrl, card(interfaceOrigin)) };
}

const reviewed = [{ source: 'static', name: 'beeai', description: 'Reviewed.', tags: ['billing'], critical: false }];

describe('unroutableHost', () => {
  test('0.0.0.0/8 and :: (also IPv4-mapped) are unroutable; loopback, private and names are not', () => {
    assert.equal(unroutableHost('http://0.0.0.0:9999'), 'the interface host 0.0.0.0 is unroutable (this network)');
    assert.equal(unroutableHost('http://[::]:9999/a2a'), 'the interface host [::] is unroutable (unspecified)');
    assert.equal(unroutableHost('http://[::ffff:0.0.0.0]:1/'), 'the interface host [::ffff:0:0] is unroutable (this network)');
    for (const url of ['http://127.0.0.1:9999', 'https://10.0.0.1/', 'https://agents.example.com/', 'http://[::1]:1/', 'not a url']) assert.equal(unroutableHost(url), undefined, url);
  });
});

describe('parseAgentCard: an interface at 0.0.0.0', () => {
  test('is kept with a warning at its JSON path instead of a host-policy refusal of the card', () => {
    const policy = HostPolicy.from({ allow: ['https://agents.example.com'] });
    const r = parseAgentCard(JSON.stringify(card('http://0.0.0.0:9999')), { hostPolicy: policy });
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    assert.deepEqual(
      r.warnings.filter((w) => w.path === 'supportedInterfaces[0].url'),
      [{ path: 'supportedInterfaces[0].url', message: "the interface host 0.0.0.0 is unroutable (this network): no client can call http://0.0.0.0:9999/a2a/jsonrpc; a static entry's interfaceUrl can name where the agent answers" }],
    );
    // Any other host outside the allowlist is still refused.
    assert.equal(parseAgentCard(JSON.stringify(card('https://10.0.0.1')), { hostPolicy: policy }).ok, false);
  });
});

describe('reviewedInterface', () => {
  const model = (origin: string) => parseAgentCard(JSON.stringify(card(origin)), { allowLoopback: true }).card!;

  test('rewrites only an unroutable chosen interface, only with the key, into a new card', () => {
    const zeros = model('http://0.0.0.0:9999');
    const r = reviewedInterface(zeros, { interfaceUrl: 'http://127.0.0.1:9999/a2a/jsonrpc' });
    assert.equal(r.kind, 'rewritten');
    assert.deepEqual(r.kind === 'rewritten' && r.rewrite, { index: 0, from: 'http://0.0.0.0:9999/a2a/jsonrpc', to: 'http://127.0.0.1:9999/a2a/jsonrpc' });
    assert.equal(r.card.supportedInterfaces[0]!.url, 'http://127.0.0.1:9999/a2a/jsonrpc');
    assert.equal(zeros.supportedInterfaces[0]!.url, 'http://0.0.0.0:9999/a2a/jsonrpc', 'the cached card is not changed');
    assert.deepEqual(reviewedInterface(zeros), { kind: 'unroutable', card: zeros, reason: 'the interface host 0.0.0.0 is unroutable (this network)' });
    const routable = model('https://agents.example.com');
    const unused = reviewedInterface(routable, { interfaceUrl: 'https://other.example.com/' });
    assert.equal(unused.kind, 'as-is');
    assert.equal(unused.card, routable);
    assert.equal(unused.kind === 'as-is' && unused.unused, 'interfaceUrl https://other.example.com/ is not used: the card\'s interface https://agents.example.com/a2a/jsonrpc has a routable host and is called as it is');
    assert.deepEqual(reviewedInterface(routable), { kind: 'as-is', card: routable });
  });
});

describe('selectAgents: interfaceUrl', () => {
  test('without the key a static agent at 0.0.0.0 does not fit, naming the host and the key; a discovered one too', () => {
    const s = selectAgents([candidate('beeai', 'beeai.example.com', 'http://0.0.0.0:9999')], { ...base, reviewed });
    assert.deepEqual(s.selected, []);
    const reason = 'the interface host 0.0.0.0 is unroutable (this network); set interfaceUrl on its static entry to the URL where the agent answers';
    assert.deepEqual(s.verdicts.get('https://beeai.example.com/'), { verdict: 'unsuitable', localName: 'beeai', reason, cause: 'unroutable' });
    assert.deepEqual(s.alerts.map((a) => a.message), [`static agent beeai does not fit: ${reason}`]);
    const found = selectAgents([candidate('helper', 'helper.example.com', 'http://[::]:9999', {}, 'catalog')], base);
    assert.deepEqual(found.verdicts.get('https://helper.example.com/'), {
      verdict: 'unsuitable',
      localName: 'helper',
      reason: 'the interface host [::] is unroutable (unspecified); only a static entry with interfaceUrl can say where the agent answers',
      cause: 'unroutable',
    });
  });

  test('with the key it is selected and shows the rewrite; a routable interface is kept and the key reported unused', () => {
    const transport = { interfaceUrl: 'https://beeai.example.com/a2a' };
    const s = selectAgents([candidate('beeai', 'beeai.example.com', 'http://0.0.0.0:9999', { transport })], { ...base, reviewed });
    assert.deepEqual(s.selected.map((a) => [a.localName, a.interfaceRewritten]), [['beeai', { from: 'http://0.0.0.0:9999/a2a/jsonrpc', to: 'https://beeai.example.com/a2a' }]]);
    assert.deepEqual(s.alerts, []);
    const [agent] = toSnapshotAgents(s.selected, () => ({ degraded: false, transport }));
    assert.deepEqual(agent!.interfaceRewritten, { from: 'http://0.0.0.0:9999/a2a/jsonrpc', to: 'https://beeai.example.com/a2a' });
    const other = toSnapshotAgents(s.selected, () => ({ degraded: false, transport: { interfaceUrl: 'https://beeai.example.com/other' } }));
    assert.notEqual(buildSnapshot([agent!], 1, 0).digest, buildSnapshot(other, 1, 0).digest, 'the interfaceUrl is part of the digest');

    const routable = selectAgents([candidate('beeai', 'beeai.example.com', 'https://beeai.example.com', { transport })], { ...base, reviewed });
    assert.deepEqual(routable.selected.map((a) => [a.localName, a.interfaceRewritten]), [['beeai', undefined]]);
    assert.deepEqual(routable.alerts.map((a) => [a.kind, a.message]), [
      ['interface-url-unused', "beeai: interfaceUrl https://beeai.example.com/a2a is not used: the card's interface https://beeai.example.com/a2a/jsonrpc has a routable host and is called as it is"],
    ]);
  });
});

describe('selectAgents: interfaceUrl and card security', () => {
  test('credentials are judged for the rewritten interface\'s origin, not 0.0.0.0', () => {
    const secured = (host: string, origin: string, transport?: { interfaceUrl: string }): Candidate => {
      const baseUrl = `https://${host}/`;
      const rec = Object.freeze({ name: 'beeai', baseUrl, source: 'static', metadata: { description: 'Reviewed.', tags: 'billing', critical: 'false' }, ...(transport && { transport }) });
      // rawCard's default security: a bearer scheme, required.
      return { endpoint: admitted(baseUrl, [rec as EndpointRecord]), entry: entryFor(baseUrl, rawCard(origin, { skills: [{ id: 'b', tags: ['billing'] }] })) };
    };
    const presentable = (origin: string) => (origin === 'https://beeai.example.com' ? [{ type: 'http' as const, scheme: 'bearer' }] : []);
    const rewritten = selectAgents([secured('beeai.example.com', 'http://0.0.0.0:9999', { interfaceUrl: 'https://beeai.example.com/a2a' })], { ...base, reviewed, presentable });
    assert.deepEqual(rewritten.selected.map((a) => a.localName), ['beeai'], JSON.stringify([...rewritten.verdicts]));
    const elsewhere = selectAgents([secured('beeai.example.com', 'http://0.0.0.0:9999', { interfaceUrl: 'https://other.example.com/a2a' })], { ...base, reviewed, presentable });
    assert.equal(elsewhere.verdicts.get('https://beeai.example.com/')?.verdict, 'excluded');
    assert.match((elsewhere.verdicts.get('https://beeai.example.com/') as { reason: string }).reason, /^unauthorized: .*https:\/\/other\.example\.com/);
  });
});

describe('configuration and staticSource: interfaceUrl', () => {
  const CONFIG = (url: string): string => `allow: [https://beeai.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
static:
  - { name: beeai, url: "https://beeai.example.com/", description: Answers invoices., tags: [billing], interfaceUrl: "${url}" }
`;

  test('is admitted by the allowlist like any URL, and refused at its path otherwise', () => {
    assert.equal(parseConfig(CONFIG('https://beeai.example.com/a2a'), { file: 't.yaml' }).static[0]!.interfaceUrl, 'https://beeai.example.com/a2a');
    for (const [url, message] of [
      ['https://elsewhere.example.com/a2a', /elsewhere\.example\.com is not in the allowlist; add its origin to allow/],
      ['ftp://beeai.example.com/', /is not an http\(s\) URL/],
    ] as const) {
      try {
        parseConfig(CONFIG(url), { file: 't.yaml' });
        assert.fail(`${url} accepted`);
      } catch (err) {
        assert.ok(isDiscoveryError(err), String(err));
        assert.deepEqual(err.problems.map((p) => p.path), ['static[0].interfaceUrl']);
        assert.match(err.problems[0]!.message, message);
      }
    }
  });

  test('travels in the record\'s transport options; a bad one is refused at its path', () => {
    const source = staticSource({ agents: [{ name: 'beeai', url: 'https://beeai.example.com/', description: 'B.', tags: ['billing'], interfaceUrl: 'https://beeai.example.com/a2a' }] });
    assert.deepEqual(source.current().records[0]!.transport, { interfaceUrl: 'https://beeai.example.com/a2a' });
    assert.throws(
      () => staticSource({ agents: [{ name: 'beeai', url: 'https://beeai.example.com/', description: 'B.', tags: ['billing'], interfaceUrl: 'nope' }] }),
      (err: unknown) => isDiscoveryError(err) && err.problems.some((p) => p.path === 'agents[0].interfaceUrl'),
    );
  });
});
