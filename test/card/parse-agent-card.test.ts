import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { request } from 'undici';
import type { RemoteA2AAgentConfig } from '@google/adk';
import { RemoteA2AAgent } from '@google/adk';
import { parseAgentCard, parseFailure, toAdkCard } from '../../packages/core/src/card/index.js';
import type { UrlJudge } from '../../packages/core/src/card/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer, startV1CardServer, v1Card } from '../helpers/a2a-peers.js';

const dev = { allowLoopback: true };

async function get(url: string, headers: Record<string, string> = {}): Promise<Buffer> {
  const res = await request(url, { headers });
  assert.equal(res.statusCode, 200);
  return Buffer.from(await res.body.arrayBuffer());
}

function legacyCard(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'Returns Agent',
    description: 'Handles returns.',
    url: 'https://returns.example.com/a2a/jsonrpc',
    version: '1.4.0',
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    capabilities: { streaming: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'returns', name: 'Returns', description: 'Starts a return.', tags: ['returns'] }],
    ...overrides,
  };
}

describe('cards served by real A2A servers', () => {
  let adk: RunningPeer;
  let v1: RunningPeer;
  before(async () => {
    adk = await startAdkPeer({ name: 'billing', description: 'Billing questions.' });
    v1 = await startV1CardServer({ card: (port) => v1Card(port) });
  });
  after(async () => {
    await adk.close();
    await v1.close();
  });

  test('an ADK JS toA2a card is 0.3, keeps "text" modes, and loses its repeated interface', async () => {
    const body = await get(adk.cardUrl);
    const r = parseAgentCard(body, dev);
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    assert.equal(r.protocolVersion, '0.3');
    const card = r.card!;
    assert.deepEqual(card.defaultInputModes, ['text']);
    assert.deepEqual(
      card.supportedInterfaces.map((i) => [i.protocolBinding, new URL(i.url).pathname, i.protocolVersion]),
      [
        ['JSONRPC', '/jsonrpc', '0.3'],
        ['HTTP+JSON', '/rest', '0.3'],
      ],
    );
    assert.ok(r.warnings.some((w) => /repeats the JSONRPC interface/.test(w.message)), 'the duplicate is reported');
    assert.ok(Object.isFrozen(card) && Object.isFrozen(card.skills[0]!.tags), 'the card is deeply frozen');
  });

  test('the same ADK card is a policy refusal without the loopback exemption, never a parse error', async () => {
    const r = parseAgentCard(await get(adk.cardUrl));
    assert.equal(r.ok, false);
    assert.equal(r.stage, 'policy');
    assert.equal(r.code, 'ERR_INSECURE_INTERFACE');
    assert.ok(r.card, 'the card itself parsed');
    const paths = r.problems.map((p) => p.path);
    assert.deepEqual(paths, ['url', 'additionalInterfaces[0].url', 'additionalInterfaces[1].url']);
    assert.equal(parseFailure(r).failure, 'policy');
  });

  test('ADK receives the original 0.3 JSON, and RemoteA2AAgent accepts it without fetching', async () => {
    const body = await get(adk.cardUrl);
    const r = parseAgentCard(body, dev);
    const adkCard = toAdkCard(r.card!);
    assert.equal(adkCard.kind, 'adk');
    if (adkCard.kind !== 'adk') return;
    assert.equal(adkCard.source, 'original');
    assert.deepEqual(adkCard.card, JSON.parse(body.toString('utf8')));
    // Compile-time check too: our 0.3 shape is assignable to ADK's own config type.
    const config: RemoteA2AAgentConfig = { name: 'billing', description: 'Reviewed text.', agentCard: adkCard.card };
    const agent = new RemoteA2AAgent(config);
    assert.equal(agent.name, 'billing');
  });

  test('an @a2a-js/sdk 1.x agentCardHandler card is 1.0 with security schemes, reachable only by a 1.x client', async () => {
    const r = parseAgentCard(await get(v1.cardUrl, { 'a2a-version': '1.0' }), dev);
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    assert.equal(r.protocolVersion, '1.0');
    assert.deepEqual(Object.keys(r.card!.securitySchemes ?? {}), ['bearer']);
    assert.ok(r.card!.securitySchemes!.bearer!.httpAuthSecurityScheme);
    const adkCard = toAdkCard(r.card!);
    assert.equal(adkCard.kind, 'v1-only');
  });

  test('a host policy judges every interface of a real card', async () => {
    const refuseAll: UrlJudge = { check: (u) => ({ allowed: false, code: 'ERR_HOST_NOT_ALLOWED', reason: `${new URL(u).origin} is not allowlisted` }) };
    const r = parseAgentCard(await get(v1.cardUrl), { ...dev, hostPolicy: refuseAll });
    assert.equal(r.stage, 'policy');
    assert.equal(r.code, 'ERR_HOST_NOT_ALLOWED');
    assert.match(r.problems[0]!.message, /not allowlisted/);
    const allowAll: UrlJudge = { check: () => ({ allowed: true }) };
    assert.equal(parseAgentCard(await get(v1.cardUrl), { ...dev, hostPolicy: allowAll }).ok, true);
  });
});

describe('protocol versions', () => {
  test('a 1.0 card that mirrors 0.3 interfaces converts faithfully for ADK', () => {
    const raw = {
      ...v1Card(1),
      supportedInterfaces: [
        { url: 'https://w.example.com/a2a/v1', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'https://w.example.com/a2a/v03', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
      ],
    };
    const r = parseAgentCard(JSON.stringify(raw));
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    const adk = toAdkCard(r.card!);
    assert.equal(adk.kind, 'adk');
    if (adk.kind !== 'adk') return;
    assert.equal(adk.source, 'converted');
    assert.equal(adk.card.url, 'https://w.example.com/a2a/v03');
    assert.equal(adk.card.preferredTransport, 'JSONRPC');
    assert.deepEqual(adk.card.securitySchemes, { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } });
    assert.deepEqual(adk.card.skills[0]!.tags, ['warranty']);
  });

  test('a 0.3/1.0 superset card is read as 1.0 and ADK gets its 0.3 half as published', () => {
    const raw: Record<string, unknown> = { ...legacyCard(), supportedInterfaces: [{ url: 'https://returns.example.com/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '0.3' }] };
    const r = parseAgentCard(JSON.stringify(raw));
    assert.equal(r.protocolVersion, '1.0');
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    const adk = toAdkCard(r.card!);
    assert.ok(adk.kind === 'adk' && adk.source === 'original' && adk.card.url === raw.url);
  });

  test('a 0.2 card (no protocolVersion) is recognised and normalized', () => {
    const raw = legacyCard({ protocolVersion: undefined, preferredTransport: undefined });
    const r = parseAgentCard(JSON.stringify(raw), { sourceUrl: 'https://returns.example.com/.well-known/agent.json' });
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    assert.equal(r.protocolVersion, '0.2');
    assert.deepEqual(r.card!.supportedInterfaces, [{ url: raw.url, protocolBinding: 'JSONRPC', protocolVersion: '0.2' }]);
  });

  test('the same agent published as 0.3 and as 1.0 has the same canonical identity', () => {
    const legacy = legacyCard();
    const modern = {
      name: legacy.name,
      description: legacy.description,
      version: legacy.version,
      supportedInterfaces: [{ url: legacy.url, protocolBinding: 'JSONRPC', protocolVersion: '0.3' }],
      capabilities: legacy.capabilities,
      defaultInputModes: legacy.defaultInputModes,
      defaultOutputModes: legacy.defaultOutputModes,
      skills: legacy.skills,
    };
    const a = parseAgentCard(JSON.stringify(legacy));
    const b = parseAgentCard(JSON.stringify(modern));
    assert.equal(a.canonicalSha256, b.canonicalSha256);
    assert.notEqual(a.rawSha256, b.rawSha256);
  });
});

describe('broken cards: every problem, with its path, and no crash', () => {
  test('all schema problems are reported together', () => {
    const raw = legacyCard({
      capabilities: undefined,
      defaultInputModes: ['text', 7],
      skills: [
        { id: 'a', name: 'A', description: 'ok', tags: ['x'] },
        { id: 'a', name: 'B', description: 'dup id', tags: ['y'] },
        { id: 'c', name: 'C', description: 'no tags' },
        { id: 'd', name: 'D', description: 'bad tags', tags: 'd' },
      ],
    });
    const r = parseAgentCard(JSON.stringify(raw));
    assert.equal(r.ok, false);
    assert.equal(r.stage, 'schema');
    assert.equal(r.code, 'ERR_CARD_INVALID');
    const byPath = Object.fromEntries(r.problems.map((p) => [p.path, p.message]));
    assert.equal(byPath['capabilities'], 'required, must be an object');
    assert.equal(byPath['defaultInputModes[1]'], 'must be a string, found number 7');
    assert.match(byPath['skills[1].id']!, /duplicates the id of skills\[0\]/);
    assert.equal(byPath['skills[2].tags'], 'required, must be an array of strings');
    assert.equal(byPath['skills[3].tags'], 'must be an array of strings, found the string "d"');
    assert.equal(r.problems.length, 5);
    const err = parseFailure(r, 'https://returns.example.com/.well-known/agent-card.json');
    assert.equal(err.failure, 'invalid');
    assert.equal(err.problems.length, 5);
    assert.match(err.message, /and 4 more/);
  });

  test('wrong types and an empty interface list are each reported', () => {
    const r = parseAgentCard(JSON.stringify({ name: 7, description: 'd', version: '1', supportedInterfaces: [], capabilities: [], defaultInputModes: 'text', defaultOutputModes: ['text'], skills: {} }));
    const byPath = Object.fromEntries(r.problems.map((p) => [p.path, p.message]));
    assert.match(byPath['name']!, /must be a string, found number 7/);
    assert.equal(byPath['supportedInterfaces'], 'must be a non-empty array of interfaces');
    assert.match(byPath['capabilities']!, /must be an object, found an array/);
    assert.match(byPath['defaultInputModes']!, /must be an array of strings/);
    assert.equal(byPath['skills'], 'must be an array of skills, found an object');
  });

  const refusals: Array<[string, string | Uint8Array, string, string]> = [
    ['not JSON', '{"name": ', 'ERR_CARD_MALFORMED', 'not valid JSON'],
    ['not UTF-8', new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]), 'ERR_CARD_MALFORMED', 'not valid UTF-8'],
    ['too large', `{"name":"${'x'.repeat(70_000)}"}`, 'ERR_CARD_TOO_LARGE', 'the limit is 65536 bytes'],
    ['too deep', `${'['.repeat(40)}${']'.repeat(40)}`, 'ERR_CARD_MALFORMED', 'nesting deeper than 32'],
    ['__proto__ key', '{"name":"n","__proto__":{"polluted":true}}', 'ERR_CARD_MALFORMED', '"__proto__" is not allowed'],
    ['a huge array', `{"skills":[${Array(1500).fill('1').join(',')}]}`, 'ERR_CARD_MALFORMED', 'array of 1500 items'],
    ['an over-long string', JSON.stringify({ name: 'x'.repeat(20_000) }), 'ERR_CARD_MALFORMED', 'string of 20000 characters'],
  ];
  for (const [what, input, code, message] of refusals) {
    test(`${what} is refused at the parse stage`, () => {
      const r = parseAgentCard(input);
      assert.equal(r.ok, false);
      assert.equal(r.stage, 'parse');
      assert.equal(r.code, code);
      assert.ok(r.problems.some((p) => p.message.includes(message)), JSON.stringify(r.problems));
      assert.equal(r.card, undefined);
    });
  }

  test('a JSON value that is not an object is a schema refusal', () => {
    for (const v of ['[]', '"card"', '42', 'null']) {
      const r = parseAgentCard(v);
      assert.equal(r.stage, 'schema', v);
      assert.match(r.problems[0]!.message, /must be a JSON object/);
    }
  });

  test('limits are configurable', () => {
    const r = parseAgentCard(JSON.stringify(legacyCard()), { maxBytes: 100 });
    assert.equal(r.code, 'ERR_CARD_TOO_LARGE');
  });

  test('parsing never pollutes Object.prototype', () => {
    parseAgentCard('{"constructor":{"prototype":{"polluted":1}},"__proto__":{"polluted":1}}');
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });
});

describe('interface policy', () => {
  test('every URL in the card is listed; only interfaces are judged', () => {
    const raw = legacyCard({
      documentationUrl: 'http://docs.example.com/',
      provider: { organization: 'R', url: 'https://r.example.com' },
      securitySchemes: { oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://id.example.com/.well-known/openid-configuration' } },
    });
    const r = parseAgentCard(JSON.stringify(raw));
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    const roles = Object.fromEntries(r.urls.map((u) => [u.path, [u.role, u.called]]));
    assert.deepEqual(roles, {
      url: ['interface', true],
      documentationUrl: ['documentation', false],
      'provider.url': ['provider', false],
      'securitySchemes.oidc.openIdConnectUrl': ['openid', false],
    });
  });

  test('an http interface is refused even when the rest of the card is fine, and loopback needs the exemption', () => {
    const insecure = parseAgentCard(JSON.stringify(legacyCard({ url: 'http://returns.example.com/a2a' })), dev);
    assert.equal(insecure.code, 'ERR_INSECURE_INTERFACE');
    const loop = JSON.stringify(legacyCard({ url: 'http://127.0.0.1:9/a2a' }));
    assert.equal(parseAgentCard(loop).ok, false);
    assert.equal(parseAgentCard(loop, dev).ok, true);
  });
});

describe('properties', () => {
  test('the canonical hash ignores key order and whitespace', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 4 }), (seed, indent) => {
        const card = v1Card(1);
        const shuffled = shuffleKeys(card, seed);
        const a = parseAgentCard(JSON.stringify(card), dev);
        const b = parseAgentCard(JSON.stringify(shuffled, null, indent), dev);
        assert.equal(a.ok && b.ok, true);
        assert.equal(a.canonicalSha256, b.canonicalSha256);
      }),
      { numRuns: 100 },
    );
  });

  test('a real change to the card changes the canonical hash', () => {
    const a = parseAgentCard(JSON.stringify(v1Card(1)));
    const b = parseAgentCard(JSON.stringify(v1Card(1, { description: 'Something else.' })));
    assert.notEqual(a.canonicalSha256, b.canonicalSha256);
  });

  test('no JSON value crashes the parser', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (v) => {
        const r = parseAgentCard(JSON.stringify(v) ?? 'null');
        assert.equal(typeof r.ok, 'boolean');
        if (!r.ok) assert.ok(r.problems.length > 0);
      }),
      { numRuns: 300 },
    );
  });

  test('no card-shaped mutation crashes the parser', () => {
    const base = legacyCard();
    const keys = Object.keys(base);
    fc.assert(
      fc.property(fc.constantFrom(...keys), fc.jsonValue({ maxDepth: 3 }), (key, value) => {
        const r = parseAgentCard(JSON.stringify({ ...base, [key]: value }));
        assert.equal(typeof r.ok, 'boolean');
        if (!r.ok) assert.ok(r.problems.length > 0 && r.stage !== undefined);
      }),
      { numRuns: 300 },
    );
  });

  test('no byte string crashes the parser', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        const r = parseAgentCard(bytes);
        assert.equal(r.bytes, bytes.byteLength);
      }),
      { numRuns: 300 },
    );
  });
});

function shuffleKeys(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, seed));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  entries.sort((a, b) => hash(a[0] + seed) - hash(b[0] + seed));
  return Object.fromEntries(entries.map(([k, v]) => [k, shuffleKeys(v, seed)]));
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}
