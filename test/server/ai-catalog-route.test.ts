/**
 * `GET /.well-known/ai-catalog.json` against real loopback A2A peers (ADK JS toA2a, A2A 0.3;
 * @a2a-js/sdk 1.x, A2A 1.0) and a real service: off by default, one entry per snapshot agent with
 * our reviewed text, the digest as strong ETag (304 on a match), a new document for a new
 * snapshot, a detached signature that verifies (and stops verifying once the document is changed),
 * 503 before the first snapshot, public like an agent card (no token, but the Host check), and
 * the `server.catalog` configuration keys (schema, cross-checks, the signing key as a secret).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JWK } from 'jose';
import { readAiCatalog, AI_CATALOG_MEDIA_TYPE, A2A_CARD_MEDIA_TYPE, type AiCatalog } from '../../packages/core/src/catalog/index.js';
import { verifyDetachedSignature } from '../../packages/core/src/card/index.js';
import { runValidate } from '../../packages/service/src/cli/validate.js';
import { parseConfig, resolveSecrets } from '../../packages/core/src/config/index.js';
import { isDiscoveryError, type DiscoveryError } from '../../packages/core/src/errors.js';
import { serviceOptionsFromConfig, startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { buildAiCatalog } from '../../packages/service/src/http/routes/ai-catalog.js';
import { ownIdentifier } from '../../packages/service/src/registry/entry.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { buildSnapshot } from '../../packages/core/src/snapshot/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer, startV1CardServer, v1Card } from '../helpers/a2a-peers.js';
import { adkStyleCard, snapshotAgent } from '../helpers/cards.js';
import { listSource, type ListSource } from '../helpers/list-source.js';
import { request, type Reply } from '../helpers/raw-http.js';

const PATH = '/.well-known/ai-catalog.json';
const URN = 'urn:air:shipping.example.com:agent:tracking';

let billing: RunningPeer;
let warranty: RunningPeer;
let shipping: RunningPeer;
let dir: string;

before(async () => {
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  warranty = await startV1CardServer({ card: (port) => v1Card(port) });
  shipping = await startV1CardServer({
    card: (port) => v1Card(port, { name: 'Shipping Agent', skills: [{ id: 'track', name: 'Track', description: 'Tracks parcels.', tags: ['shipping'] }] }),
  });
  dir = await mkdtemp(join(tmpdir(), 'ai-catalog-'));
});
after(async () => {
  await Promise.all([billing?.close(), warranty?.close(), shipping?.close()]);
  await rm(dir, { recursive: true, force: true });
});

/** A service over the three peers: two reviewed agents (a base URL, a card URL) and a discovered source. */
function service(extra: Partial<ServiceOptions> = {}): Promise<RunningService> {
  return startService({
    port: 0,
    // The 1.0 cards require a bearer token (v1Card): the service presents one to their origins.
    credentials: (origin) => ([warranty, shipping].some((p) => new URL(p.baseUrl).origin === origin) ? { authorization: 'Bearer test-token' } : undefined),
    policy: { allow: [billing, warranty, shipping].map((p) => new URL(p.baseUrl).origin), allowLoopback: true },
    vocabulary: [
      { tag: 'billing', description: 'Invoices and payments.' },
      { tag: 'warranty', description: 'Warranty status.' },
      { tag: 'shipping', description: 'Parcel tracking.' },
    ],
    needs: [{ tag: 'billing' }, { tag: 'warranty' }, { tag: 'shipping' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
      { name: 'warranty_agent', cardUrl: warranty.cardUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
    ],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
    ...extra,
  });
}

const get = (s: RunningService, headers: Record<string, string> = {}): Promise<Reply> => request(s.url, 'GET', PATH, headers);

function read(reply: Reply): AiCatalog {
  const r = readAiCatalog(Buffer.from(reply.body));
  assert.ok(r.ok, JSON.stringify(!r.ok && r.problems));
  assert.deepEqual(r.warnings, []);
  return r.catalog;
}

function es256(): { privateKey: KeyObject; jwk: JWK } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { privateKey, jwk: publicKey.export({ format: 'jwk' }) as JWK };
}

describe('the AI Catalog route is off by default', () => {
  test('without server.catalog, GET /.well-known/ai-catalog.json is 404 like any unknown path', async () => {
    const s = await service();
    try {
      assert.ok(s.loop.current(), 'a snapshot is published');
      const r = await get(s);
      assert.equal(r.status, 404);
      assert.match(r.headers['content-type'] ?? '', /^application\/problem\+json/);
      assert.deepEqual(JSON.parse(r.body), { type: 'about:blank', title: 'Not Found', status: 404, detail: 'no page /.well-known/ai-catalog.json', error: 'not-found', message: 'no page /.well-known/ai-catalog.json' });
      const off = await service({ catalog: { enabled: false } });
      try {
        assert.equal((await get(off)).status, 404, 'enabled: false is off too');
      } finally {
        await off.close();
      }
    } finally {
      await s.close();
    }
  });
});

describe('the AI Catalog route, on', () => {
  let s: RunningService;
  let partners: ListSource;

  before(async () => {
    partners = listSource('partners');
    s = await service({ catalog: { enabled: true }, extraSources: [partners] });
  });
  after(async () => {
    await s?.close();
  });

  test('one entry per snapshot agent: the card URL, our local name, reviewed description and tags, the digests; the snapshot as an extension', async () => {
    const snapshot = s.loop.current()!;
    assert.deepEqual(snapshot.agents.map((a) => a.localName), ['billing_agent', 'warranty_agent']);
    const r = await get(s);
    assert.equal(r.status, 200, r.body);
    assert.equal(r.headers['content-type'], AI_CATALOG_MEDIA_TYPE);
    assert.equal(r.headers.etag, `"${snapshot.digest}"`);
    assert.equal(r.headers['cache-control'], 'max-age=60');
    assert.equal(r.headers['x-content-type-options'], 'nosniff', 'the guard\'s headers, as on every route');
    const catalog = read(r);
    assert.equal(catalog.specVersion, '1.0');
    assert.deepEqual(catalog.host, { displayName: 'a2a-discovery' });
    assert.deepEqual(catalog.raw['extensions'], {
      'dev.a2a-discovery.snapshot': { digest: snapshot.digest, version: snapshot.version, createdAt: new Date(snapshot.createdAt).toISOString() },
    });
    // The agents, then the service's own registry entry (catalog-announce.test.ts).
    assert.equal(catalog.entries.length, snapshot.agents.length + 1);
    const [b, w] = catalog.entries;
    assert.deepEqual(
      { identifier: b!.identifier, type: b!.type, url: b!.url, displayName: b!.displayName, description: b!.description, tags: b!.tags },
      { identifier: ownIdentifier(billing.baseUrl, 'billing_agent'), type: A2A_CARD_MEDIA_TYPE, url: billing.cardUrl, displayName: 'billing_agent', description: 'Answers invoice questions.', tags: ['billing'] },
      'a base URL: the card URL the cache fetched; the identifier is ours (urn:air: at the endpoint\'s host, the local name)',
    );
    assert.equal(w!.url, warranty.cardUrl, 'an endpoint given by its card URL: that URL');
    // A card URL at a base's well-known path is that base's endpoint (one identity per card).
    assert.equal(w!.identifier, ownIdentifier(warranty.baseUrl, 'warranty_agent'));
    assert.match(w!.identifier, /^urn:air:127\.0\.0\.1:agent\.\d+:warranty_agent$/);
    assert.equal(w!.displayName, 'warranty_agent');
    assert.equal(w!.description, 'Answers warranty questions.', 'our reviewed text, never the card\'s');
    const raw = catalog.raw['entries'] as Array<Record<string, unknown>>;
    snapshot.agents.forEach((a, i) => {
      assert.deepEqual(raw[i]!['extensions'], { 'dev.a2a-discovery.agent': { localName: a.localName, canonicalSha256: a.canonicalSha256, rawSha256: a.rawSha256 } });
      assert.equal(raw[i]!['data'], undefined);
    });
    assert.doesNotMatch(r.body, /Warranty Agent|card text/, 'no card text reaches the catalog');
  });

  test('the ETag is the digest: If-None-Match with it (strong, weak, in a list, or *) is 304 with no body; another tag is 200', async () => {
    const etag = `"${s.loop.current()!.digest}"`;
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const r = await get(s, { 'if-none-match': inm });
      assert.equal(r.status, 304, inm);
      assert.equal(r.body, '');
      assert.equal(r.headers.etag, etag);
      assert.equal(r.headers['cache-control'], 'max-age=60');
    }
    const other = await get(s, { 'if-none-match': '"0000"' });
    assert.equal(other.status, 200);
    assert.equal(other.body, (await get(s)).body);
  });

  test('a new snapshot changes the digest, the ETag and the entries; a discovered record\'s urn:air: identifier is kept', async () => {
    const before = s.loop.current()!;
    const oldTag = `"${before.digest}"`;
    partners.set([{ name: 'shipping', baseUrl: shipping.baseUrl, metadata: { identifier: URN } }]);
    const next = await s.loop.refreshNow();
    assert.ok(next && next.digest !== before.digest, 'a new snapshot was published');
    const r = await get(s, { 'if-none-match': oldTag });
    assert.equal(r.status, 200, 'the old ETag no longer matches');
    assert.equal(r.headers.etag, `"${next.digest}"`);
    const catalog = read(r);
    assert.equal(catalog.entries.length, next.agents.length + 1, 'the agents and the registry entry');
    assert.equal(next.agents.length, 3);
    const agent = next.agents.find((a) => a.baseUrl === shipping.baseUrl)!;
    const entry = catalog.entries.find((e) => e.displayName === agent.localName)!;
    assert.equal(entry.identifier, URN, 'the identifier of the record that proposed it');
    assert.equal(entry.url, shipping.cardUrl);
    assert.equal(entry.description, agent.description, 'composed from the reviewed vocabulary');
    assert.deepEqual(entry.tags, ['shipping']);
    assert.equal((catalog.raw['extensions'] as Record<string, { version: number }>)['dev.a2a-discovery.snapshot']!.version, next.version);
    assert.equal((await get(s, { 'if-none-match': `"${next.digest}"` })).status, 304);
  });
});

describe('public like an agent card', () => {
  test('with a bearer token the catalog needs none (a plain GET from another instance), but /api still does and the Host check applies', async () => {
    const s = await service({ token: 'catalog-test-token', catalog: { enabled: true } });
    try {
      assert.equal((await get(s)).status, 200);
      assert.equal((await get(s, { authorization: 'Bearer wrong' })).status, 200, 'a wrong token on a public route is not a refusal');
      assert.equal((await request(s.url, 'GET', '/api/snapshot')).status, 401);
      const rebinding = await get(s, { host: 'attacker.example' });
      assert.equal(rebinding.status, 421);
      assert.doesNotMatch(rebinding.body, /dev\.a2a-discovery/);
    } finally {
      await s.close();
    }
  });
});

describe('the signed catalog', () => {
  const kid = 'catalog-2026';
  const { privateKey, jwk } = es256();
  let s: RunningService;

  before(async () => {
    s = await service({ catalog: { enabled: true, hostName: 'Example discovery', cacheControl: 'public, max-age=300', signing: { key: privateKey, kid } } });
  });
  after(async () => {
    await s?.close();
  });

  test('verifies with verifyDetachedSignature against the public key; a changed document does not', async () => {
    const r = await get(s);
    assert.equal(r.headers['cache-control'], 'public, max-age=300');
    const catalog = read(r);
    assert.deepEqual(catalog.host, { displayName: 'Example discovery' });
    const signature = catalog.raw['signature'];
    assert.match(String(signature), /^[\w-]+\.\.[\w-]+$/, 'a detached compact JWS');
    const keys = [{ kid, jwk }];
    const ok = await verifyDetachedSignature(catalog.raw, { mode: 'required', keys });
    assert.equal(ok.status, 'verified', JSON.stringify(ok.problems));
    assert.equal(ok.ok, true);
    assert.equal(ok.kid, kid);
    assert.equal(ok.alg, 'ES256');

    const doc = JSON.parse(r.body) as { entries: Array<Record<string, unknown>> };
    doc.entries[0]!['displayName'] = 'someone_else';
    const tampered = await verifyDetachedSignature(doc, { mode: 'required', keys });
    assert.equal(tampered.status, 'invalid');
    assert.equal(tampered.ok, false);
    const other = await verifyDetachedSignature(catalog.raw, { mode: 'required', keys: [{ kid, jwk: es256().jwk }] });
    assert.equal(other.status, 'invalid', 'another key with the same kid does not verify it');
  });

  test('built and signed once per digest: repeated GETs return the same bytes (ECDSA signatures are randomized)', async () => {
    const [a, b] = await Promise.all([get(s), get(s)]);
    const c = await get(s);
    assert.equal(a.body, b.body);
    assert.equal(a.body, c.body);
  });

  test('a key that cannot sign with its alg refuses to start, naming server.catalog.signing', async () => {
    const { privateKey: ed } = generateKeyPairSync('ed25519');
    await assert.rejects(
      service({ catalog: { enabled: true, signing: { key: ed, kid, alg: 'ES256' } } }),
      (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID' && err.path === 'server.catalog.signing' && /cannot sign/.test(err.message),
    );
  });
});

describe('before the first snapshot', () => {
  test('503 with a JSON error and Retry-After; 200 once discovery has published', async () => {
    const port = await freePort();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // A source whose start never finishes until released: the server listens, the loop has not run.
    const slow = { ...listSource('slow'), start: () => gate };
    const starting = service({ port, catalog: { enabled: true }, extraSources: [slow] });
    const url = `http://127.0.0.1:${port}`;
    let r: Reply | undefined;
    for (let i = 0; i < 200 && r === undefined; i++) {
      r = await request(url, 'GET', PATH).catch(async () => {
        await new Promise((t) => setTimeout(t, 25));
        return undefined;
      });
    }
    assert.ok(r, 'the service listens while its first discovery pass waits');
    assert.equal(r.status, 503);
    assert.equal(r.headers['retry-after'], '5');
    // The API's one error shape (RFC 9457, problem.ts): the stable code and message beside its members.
    assert.match(r.headers['content-type'] ?? '', /^application\/problem\+json/);
    assert.deepEqual(JSON.parse(r.body), { type: 'about:blank', title: 'Service Unavailable', status: 503, detail: 'no snapshot has been published yet', error: 'not-ready', message: 'no snapshot has been published yet' });
    release();
    const s = await starting;
    try {
      assert.equal((await get(s)).status, 200);
    } finally {
      await s.close();
    }
  });
});

describe('buildAiCatalog', () => {
  test('a card carried inline in another catalog (#card= key) is published as data, the card as received; a #card key by its exact URL', async () => {
    const key = `https://catalog.example.com/.well-known/ai-catalog.json#card=${encodeURIComponent(URN)}`;
    const fixture = snapshotAgent('finance_agent', ['finance']);
    const body = JSON.stringify({ name: 'Finance', note: 'the publisher\'s bytes' });
    const exact = { ...snapshotAgent('research_agent'), baseUrl: 'https://agents.example.com/agents/research#card' };
    const snapshot = buildSnapshot([{ ...fixture, baseUrl: key, body, identifier: URN }, snapshotAgent('billing_agent'), exact], 7, Date.UTC(2026, 0, 2));
    const doc = buildAiCatalog(snapshot, { hostName: 'h' });
    const r = readAiCatalog(Buffer.from(JSON.stringify(doc)));
    assert.ok(r.ok, JSON.stringify(!r.ok && r.problems));
    const [billingEntry, finance, research] = r.catalog.entries;
    assert.equal(research!.url, 'https://agents.example.com/agents/research', 'another catalog gave its exact card URL: published without the #card mark');
    assert.equal(finance!.identifier, URN);
    assert.equal(finance!.url, undefined);
    assert.deepEqual(finance!.data, JSON.parse(body));
    assert.equal(billingEntry!.url, 'https://agents.example.com/billing_agent/.well-known/agent-card.json', 'no recorded card URL: the well-known path under the base URL');
    assert.equal(billingEntry!.identifier, 'urn:air:agents.example.com:agent:billing_agent', 'ours: urn:air: at the endpoint\'s host, the local name');
    assert.equal(research!.identifier, 'urn:air:agents.example.com:agent:research_agent');
    assert.deepEqual(doc['extensions'], { 'dev.a2a-discovery.snapshot': { digest: snapshot.digest, version: 7, createdAt: '2026-01-02T00:00:00.000Z' } });
    // An inline card without a urn:air: identifier: the host of the catalog that carried it, and the local name.
    const plain = buildAiCatalog(buildSnapshot([{ ...fixture, baseUrl: key, body }], 8, 0), { hostName: 'h' });
    assert.equal((plain['entries'] as Array<{ identifier: string }>)[0]!.identifier, 'urn:air:catalog.example.com:agent:finance_agent');
    // Two agents that came with one identifier (two catalogs claim it): the first keeps it, the other gets ours.
    const twice = buildAiCatalog(buildSnapshot([{ ...snapshotAgent('a_agent'), identifier: URN }, { ...snapshotAgent('b_agent'), identifier: URN }], 9, 0), { hostName: 'h' });
    assert.deepEqual((twice['entries'] as Array<{ identifier: string }>).map((e) => e.identifier), [URN, 'urn:air:agents.example.com:agent:b_agent']);
    // The card URL the snapshot recorded (a peer answering only at the A2A 0.2 path) is the one published.
    const legacy = buildAiCatalog(buildSnapshot([{ ...snapshotAgent('old_agent'), cardUrl: 'https://agents.example.com/old_agent/.well-known/agent.json' }], 10, 0), { hostName: 'h' });
    assert.equal((legacy['entries'] as Array<{ url: string }>)[0]!.url, 'https://agents.example.com/old_agent/.well-known/agent.json');
  });
});

// ---------------------------------------------------------------------------------------------
// server.catalog in discovery.yaml

const AGENT = `allow: [https://billing.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Answers invoices., tags: [billing] }
`;

function invalid(text: string): DiscoveryError {
  try {
    parseConfig(text, { file: 'test.yaml' });
  } catch (err) {
    assert.ok(isDiscoveryError(err), String(err));
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    return err;
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

/** `line:col path: message` for each problem. */
function where(err: DiscoveryError): string[] {
  return err.problems.map((p) => `${p.line}:${p.column} ${p.path}: ${p.message}`);
}

async function secretsFailure(text: string, env: NodeJS.ProcessEnv = {}): Promise<DiscoveryError> {
  try {
    await resolveSecrets(parseConfig(text, { baseDir: dir }), env);
  } catch (err) {
    assert.ok(isDiscoveryError(err), String(err));
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    return err;
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

describe('server.catalog in discovery.yaml', () => {
  test('defaults: off, max-age=60, host name a2a-discovery, unsigned; the service gets no catalog', async () => {
    const config = parseConfig(AGENT);
    assert.deepEqual(config.server.catalog, { enabled: false, cacheControl: 'max-age=60', hostName: 'a2a-discovery', registryUrl: '/api/registry/' });
    assert.equal(serviceOptionsFromConfig(config, await resolveSecrets(config, {})).catalog, undefined);
  });

  test('every key set: the key file resolves against the base directory, alg defaults to ES256, and the options map onto the service', async () => {
    const { privateKey } = es256();
    await writeFile(join(dir, 'catalog.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const config = parseConfig(
      `${AGENT}server:\n  catalog:\n    enabled: true\n    cacheControl: "public, max-age=300"\n    hostName: Example discovery\n    signing: { keyFile: catalog.pem, kid: catalog-2026 }\n`,
      { baseDir: dir },
    );
    assert.deepEqual(config.server.catalog, {
      enabled: true,
      cacheControl: 'public, max-age=300',
      hostName: 'Example discovery',
      registryUrl: '/api/registry/',
      signing: { keyFile: join(dir, 'catalog.pem'), kid: 'catalog-2026', alg: 'ES256' },
    });
    const secrets = await resolveSecrets(config, {});
    assert.equal(secrets.catalogSigningKey?.asymmetricKeyType, 'ec');
    assert.doesNotMatch(JSON.stringify(secrets), /PRIVATE KEY/);
    assert.match(JSON.stringify(secrets), /"catalogSigningKey":"\[redacted\]"/);
    const options = serviceOptionsFromConfig(config, secrets);
    assert.deepEqual({ ...options.catalog, signing: { ...options.catalog?.signing, key: undefined } }, {
      enabled: true,
      cacheControl: 'public, max-age=300',
      hostName: 'Example discovery',
      registryUrl: '/api/registry/',
      signing: { key: undefined, kid: 'catalog-2026', alg: 'ES256' },
    });
    assert.equal(options.catalog?.signing?.key, secrets.catalogSigningKey);
  });

  test('a private JWK in an environment variable, with EdDSA', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const config = parseConfig(`${AGENT}server:\n  catalog: { enabled: true, signing: { keyEnv: CATALOG_KEY, kid: k1, alg: EdDSA } }\n`);
    const secrets = await resolveSecrets(config, { CATALOG_KEY: JSON.stringify(privateKey.export({ format: 'jwk' })) });
    assert.equal(secrets.catalogSigningKey?.asymmetricKeyType, 'ed25519');
  });

  test('bad values are reported at their line and column, every one at once', () => {
    const err = invalid(`${AGENT}server:
  catalog:
    enabled: "yes"
    cacheControl: "max-age=60\\r\\nSet-Cookie: a=b"
    hostName: ""
    tls: true
    signing: { keyFile: k.pem, kid: k1, alg: HS256 }
`);
    assert.deepEqual(where(err), [
      '7:14 server.catalog.enabled: must be true or false, got "yes"',
      '8:19 server.catalog.cacheControl: must be a Cache-Control header value such as "max-age=60" or "public, max-age=300" (comma-separated directives, at most 256 characters), got "max-age=60\\r\\nSet-Cookie: a=b"',
      '9:15 server.catalog.hostName: must be a display name of 1-256 characters without line breaks, got ""',
      '10:5 server.catalog.tls: unknown key "tls" (allowed here: enabled, cacheControl, hostName, registryUrl, signing)',
      '11:46 server.catalog.signing.alg: "HS256" uses a shared secret, so anyone able to verify could also sign; it cannot be allowed',
    ]);
  });

  test('signing: exactly one of keyFile and keyEnv, a kid, and only with the catalog enabled', () => {
    assert.deepEqual(where(invalid(`${AGENT}server:\n  catalog:\n    enabled: true\n    signing: { kid: k1 }\n`)), [
      '8:14 server.catalog.signing: needs exactly one of keyFile (a file) or keyEnv (an environment variable) holding the private key; keys are never written in the configuration',
    ]);
    assert.deepEqual(where(invalid(`${AGENT}server:\n  catalog:\n    enabled: true\n    signing: { keyFile: k.pem, keyEnv: K }\n`)), [
      '8:14 server.catalog.signing.kid: is required (a string)',
      '8:25 server.catalog.signing.keyFile: set exactly one of keyFile and keyEnv, not both',
    ]);
    assert.deepEqual(where(invalid(`${AGENT}server:\n  catalog:\n    signing: { keyEnv: K, kid: k1 }\n`)), [
      '7:14 server.catalog.signing: is only used when the catalog is served; set server.catalog.enabled: true, or remove signing',
    ]);
  });

  test('an unusable key is a configuration problem at its line, naming the file or variable and never the key', async () => {
    const { privateKey, publicKey } = es256Pair();
    const { privateKey: ed } = generateKeyPairSync('ed25519');
    await writeFile(join(dir, 'public.pem'), publicKey.export({ type: 'spki', format: 'pem' }));
    await writeFile(join(dir, 'ed.pem'), ed.export({ type: 'pkcs8', format: 'pem' }));
    await writeFile(join(dir, 'garbage.pem'), 'not a key');
    const yaml = (signing: string): string => `${AGENT}server:\n  catalog:\n    enabled: true\n    signing: ${signing}\n`;
    const cases: Array<[string, NodeJS.ProcessEnv, RegExp]> = [
      ['{ keyFile: public.pem, kid: k1 }', {}, /^8:25 server\.catalog\.signing\.keyFile: key file .*public\.pem: is a public key or certificate; the catalog is signed with the private key$/],
      ['{ keyFile: ed.pem, kid: k1 }', {}, /^8:25 server\.catalog\.signing\.keyFile: key file .*ed\.pem: cannot sign with ES256: /],
      ['{ keyFile: garbage.pem, kid: k1 }', {}, /^8:25 server\.catalog\.signing\.keyFile: key file .*garbage\.pem: must hold a private key, as PEM/],
      ['{ keyFile: missing.pem, kid: k1 }', {}, /^8:25 server\.catalog\.signing\.keyFile: cannot read key file .*missing\.pem: no such file$/],
      ['{ keyEnv: CATALOG_KEY, kid: k1 }', {}, /^8:24 server\.catalog\.signing\.keyEnv: environment variable CATALOG_KEY \(the catalog signing key\) is not set$/],
      ['{ keyEnv: CATALOG_KEY, kid: k1 }', { CATALOG_KEY: JSON.stringify(publicKey.export({ format: 'jwk' })) }, /keyEnv: environment variable CATALOG_KEY \(the catalog signing key\): is a public key/],
      ['{ keyEnv: CATALOG_KEY, kid: k1 }', { CATALOG_KEY: JSON.stringify({ ...(privateKey.export({ format: 'jwk' }) as object), kid: 'other' }) }, /the key's own kid "other" differs from the configured kid "k1"/],
    ];
    for (const [signing, env, expected] of cases) {
      const err = await secretsFailure(yaml(signing), env);
      assert.equal(err.problems.length, 1, signing);
      assert.match(where(err)[0]!, expected, signing);
      assert.doesNotMatch(JSON.stringify(err.problems) + err.message, /MI[A-Za-z0-9+/]{20}|"d":/, 'no key material in messages');
    }
  });

  test('a2a-discovery validate prints catalog problems as file:line:col path: message', async () => {
    const file = join(dir, 'catalog.yaml');
    await writeFile(file, `${AGENT}server:\n  catalog:\n    enabled: true\n    cacheControl: "max age"\n    signing: { keyEnv: CATALOG_KEY, kid: k1 }\n`);
    const out: string[] = [];
    const valid = await runValidate(file, { json: false, io: { out: (t) => out.push(t), err: () => undefined } });
    assert.equal(valid, false);
    assert.equal(out.join(''), `${file}:8:19 server.catalog.cacheControl: must be a Cache-Control header value such as "max-age=60" or "public, max-age=300" (comma-separated directives, at most 256 characters), got "max age"\n`);
    await writeFile(file, `${AGENT}server:\n  catalog:\n    enabled: true\n    signing: { keyEnv: CATALOG_KEY, kid: k1 }\n`);
    out.length = 0;
    assert.equal(await runValidate(file, { json: false, io: { out: (t) => out.push(t), err: () => undefined } }), false);
    assert.equal(out.join(''), `${file}:8:24 server.catalog.signing.keyEnv: environment variable CATALOG_KEY (the catalog signing key) is not set\n`);
  });
});

function es256Pair(): { privateKey: KeyObject; publicKey: KeyObject } {
  return generateKeyPairSync('ec', { namedCurve: 'P-256' });
}

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
