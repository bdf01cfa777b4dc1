import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { FlattenedSign, base64url, exportJWK, generateKeyPair, generateSecret } from 'jose';
import type { CryptoKey, JSONWebKeySet, JWK } from 'jose';
import { generateAgentCardSignature, verifyAgentCardSignature } from '@a2a-js/sdk';
import type { AgentCard } from '@a2a-js/sdk';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { checkCard } from '../../packages/core/src/card/check-card.js';
import {
  canonicalCardPayload,
  signCard,
  signatureFailure,
  verifyCardSignatures,
} from '../../packages/core/src/card/signature.js';
import type { SignatureMode, SignatureOptions, TrustedKey } from '../../packages/core/src/card/signature.js';

type Json = Record<string, unknown>;

/** A 1.0 card as published on the wire, with security schemes (their JSON and TS forms differ). */
function v1Card(): Json {
  return {
    name: 'Billing Agent',
    description: 'Answers questions about invoices.',
    version: '1.2.0',
    supportedInterfaces: [{ url: 'https://billing.example.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    provider: { organization: 'Example Corp', url: 'https://example.com' },
    capabilities: { streaming: true, pushNotifications: false },
    securitySchemes: {
      bearer: { httpAuthSecurityScheme: { scheme: 'Bearer', bearerFormat: 'JWT' } },
      key: { apiKeySecurityScheme: { location: 'header', name: 'X-API-Key' } },
    },
    securityRequirements: [{ schemes: { bearer: { list: ['invoices.read'] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills: [{ id: 'invoice-status', name: 'Invoice status', description: 'Looks up an invoice.', tags: ['billing', 'invoices'], examples: ['Is INV-7 paid?'] }],
    iconUrl: '',
  };
}

/** A 0.3 card as ADK JS publishes it. */
function v03Card(): Json {
  return {
    name: 'recipes',
    description: 'Finds recipes.',
    url: 'https://recipes.example.com/a2a',
    preferredTransport: 'JSONRPC',
    protocolVersion: '0.3.0',
    version: '0.0.1',
    capabilities: { streaming: true },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [{ id: 'find', name: 'find', description: 'Finds a recipe.', tags: ['recipes'] }],
    additionalInterfaces: [{ url: 'https://recipes.example.com/a2a', transport: 'JSONRPC' }],
  };
}

interface KeyPair {
  privateKey: CryptoKey;
  jwk: JWK;
}

async function keyPair(alg: 'ES256' | 'EdDSA' = 'ES256'): Promise<KeyPair> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { privateKey, jwk: await exportJWK(publicKey) };
}

const es = await keyPair('ES256');
const ed = await keyPair('EdDSA');
const other = await keyPair('ES256');

function trust(kid: string, pair: KeyPair, origins?: string[]): TrustedKey {
  return { kid, jwk: pair.jwk, ...(origins && { origins }) };
}

/** What the card looks like after a trip over the wire. */
function wire<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function tamper(card: Json, patch: Json): Json {
  return { ...structuredClone(card), ...patch };
}

async function signRawPayload(payload: string, header: Json, key: CryptoKey | Uint8Array): Promise<{ protected: string; signature: string }> {
  const jws = await new FlattenedSign(new TextEncoder().encode(payload)).setProtectedHeader(header).sign(key);
  return { protected: jws.protected as string, signature: jws.signature };
}

// --- Interop -------------------------------------------------------------------------------

test('a 1.0 card with security schemes signed by @a2a-js/sdk 1.x (JSON wire form) verifies', async () => {
  const sign = generateAgentCardSignature(es.privateKey, { alg: 'ES256', kid: 'sdk-1', typ: 'JOSE' });
  const signed = wire(await sign(v1Card() as unknown as AgentCard)) as unknown as Json;
  const result = await verifyCardSignatures(signed, { mode: 'required', keys: [trust('sdk-1', es)] });
  assert.equal(result.status, 'verified');
  assert.equal(result.ok, true);
  assert.equal(result.kid, 'sdk-1');
  assert.equal(result.alg, 'ES256');
  assert.equal(result.form, 'a2a-v1');
  assert.deepEqual(result.problems, []);
});

test('a card signed with signCard is accepted by the @a2a-js/sdk 1.x verifier', async () => {
  const signed = wire(await signCard(v1Card(), es.privateKey, { alg: 'ES256', kid: 'ours' }));
  const verify = verifyAgentCardSignature(async (kid) => {
    assert.equal(kid, 'ours');
    return es.jwk;
  });
  await verify(signed as unknown as AgentCard);
});

test('a 0.3 card signed by the SDK 1.x signer is refused: its form leaves out the endpoint url', async () => {
  const sign = generateAgentCardSignature(es.privateKey, { alg: 'ES256', kid: 'sdk-1', typ: 'JOSE' });
  const signed = wire(await sign(v03Card() as unknown as AgentCard)) as unknown as Json;
  const result = await verifyCardSignatures(signed, { mode: 'if-present', keys: [trust('sdk-1', es)] });
  assert.equal(result.status, 'invalid');
  assert.equal(result.ok, false);
  assert.equal(result.problems[0]?.path, 'signatures[0]');
  assert.match(result.problems[0]?.message ?? '', /leaves out .*\burl\b/);
  // The attack this prevents: the url can be swapped without breaking the SDK's signature.
  const swapped = tamper(signed, { url: 'https://attacker.example/a2a' });
  assert.equal(canonicalCardPayload(swapped, 'a2a-v1'), canonicalCardPayload(signed, 'a2a-v1'));
});

test('an a2a-python 1.x signature (ASCII-escaped payload, PyJWT header) verifies as a2a-v1-ascii', async () => {
  const card: Json = {
    name: 'Café Agent',
    description: 'Réserve une table ✓ 😀',
    version: '1.0.0',
    supportedInterfaces: [{ url: 'https://cafe.example/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'book', name: 'Réserver', description: 'Books a table', tags: ['booking'] }],
  };
  // Golden vector: Python 3 json.dumps(MessageToDict-equivalent, separators=(',',':'), sort_keys=True).
  const python =
    '{"capabilities":{"streaming":true},"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],' +
    '"description":"R\\u00e9serve une table \\u2713 \\ud83d\\ude00","name":"Caf\\u00e9 Agent",' +
    '"skills":[{"description":"Books a table","id":"book","name":"R\\u00e9server","tags":["booking"]}],' +
    '"supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://cafe.example/a2a"}],"version":"1.0.0"}';
  assert.equal(canonicalCardPayload(card, 'a2a-v1-ascii'), python);
  const entry = await signRawPayload(python, { typ: 'JWT', alg: 'ES256', kid: 'py-1', jku: null }, es.privateKey);
  const result = await verifyCardSignatures({ ...card, signatures: [entry] }, { mode: 'required', keys: [trust('py-1', es)] });
  assert.equal(result.status, 'verified');
  assert.equal(result.form, 'a2a-v1-ascii');
});

test('a 0.3 card signed over plain RFC 8785 (JCS) verifies, and signCard chooses that form for it', async () => {
  const signed = wire(await signCard(v03Card(), ed.privateKey, { alg: 'EdDSA', kid: 'ed-1' }));
  const result = await verifyCardSignatures(signed, { mode: 'required', keys: [trust('ed-1', ed)] });
  assert.equal(result.status, 'verified');
  assert.equal(result.form, 'jcs');
  const moved = await verifyCardSignatures(tamper(signed, { url: 'https://attacker.example/a2a' }), { mode: 'required', keys: [trust('ed-1', ed)] });
  assert.equal(moved.status, 'invalid');
});

// --- Integrity -----------------------------------------------------------------------------

const esOptions: SignatureOptions = { mode: 'required', keys: [trust('k1', es)] };
const signedV1 = wire(await signCard(v1Card(), es.privateKey, { alg: 'ES256', kid: 'k1' }));

test('a card signed with signCard verifies and does not change the input', async () => {
  const input = v1Card();
  const signed = await signCard(input, es.privateKey, { alg: 'ES256', kid: 'k1' });
  assert.equal('signatures' in input, false);
  const result = await verifyCardSignatures(wire(signed), esOptions);
  assert.equal(result.status, 'verified');
  assert.equal(result.form, 'a2a-v1');
});

test('changing the description after signing fails with a clear problem', async () => {
  const result = await verifyCardSignatures(tamper(signedV1, { description: 'Also wires money.' }), esOptions);
  assert.equal(result.status, 'invalid');
  assert.equal(result.ok, false);
  assert.deepEqual(result.problems.map((p) => p.path), ['signatures[0]']);
  assert.match(result.problems[0]?.message ?? '', /does not match this card under key "k1"/);
});

test('key re-ordering and whitespace still verify', async () => {
  const reordered = Object.fromEntries(Object.entries(signedV1).reverse());
  const pretty = JSON.parse(JSON.stringify(reordered, null, 4)) as Json;
  assert.equal((await verifyCardSignatures(pretty, esOptions)).status, 'verified');
});

test('property: any deep key order of a signed card verifies, for both signing forms', async () => {
  const signed03 = wire(await signCard(v03Card(), es.privateKey, { alg: 'ES256', kid: 'k1' }));
  const shuffle = (value: unknown, rnd: () => number): unknown => {
    if (Array.isArray(value)) return value.map((v) => shuffle(v, rnd));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value).map(([k, v]) => [k, shuffle(v, rnd)] as const);
    entries.sort(() => rnd() - 0.5);
    return Object.fromEntries(entries);
  };
  await fc.assert(
    fc.asyncProperty(fc.integer(), fc.boolean(), async (seed, which) => {
      let s = seed >>> 0;
      const rnd = (): number => ((s = (s * 1_103_515_245 + 12_345) >>> 0) / 2 ** 32);
      const card = shuffle(which ? signedV1 : signed03, rnd) as Json;
      return (await verifyCardSignatures(card, esOptions)).status === 'verified';
    }),
    { numRuns: 50 },
  );
});

test('wrong key, unknown kid, missing kid, HS256 and alg "none" fail, each with its own problem', async () => {
  const payload = canonicalCardPayload(v1Card(), 'a2a-v1');
  const hs = await signRawPayload(payload, { alg: 'HS256', kid: 'k1' }, await generateSecret('HS256'));
  const none = { protected: base64url.encode(JSON.stringify({ alg: 'none', kid: 'k1' })), signature: '' };
  const noKid = await signRawPayload(payload, { alg: 'ES256', typ: 'JOSE' }, es.privateKey);
  const cases: Array<[string, Json, RegExp]> = [
    ['wrong key', await signCard(v1Card(), other.privateKey, { alg: 'ES256', kid: 'k1' }), /does not match this card under key "k1"/],
    ['missing kid', { ...v1Card(), signatures: [{ ...noKid, header: { kid: 'k1' } }] }, /no "kid" in its protected header.*unprotected header does not count/],
    ['HS256', { ...v1Card(), signatures: [hs] }, /"HS256" uses a shared secret.*never accepted/],
    ['alg none', { ...v1Card(), signatures: [none] }, /"none" means unsigned.*never accepted/],
  ];
  for (const [name, card, message] of cases) {
    const result = await verifyCardSignatures(wire(card), esOptions);
    assert.equal(result.status, 'invalid', name);
    assert.equal(result.ok, false, name);
    assert.equal(result.problems.length, 1, name);
    assert.equal(result.problems[0]?.path, 'signatures[0]', name);
    assert.match(result.problems[0]?.message ?? '', message, name);
  }
});

test('an algorithm outside the allowlist is refused even with the right key', async () => {
  const result = await verifyCardSignatures(signedV1, { ...esOptions, algorithms: ['EdDSA'] });
  assert.equal(result.status, 'invalid');
  assert.match(result.problems[0]?.message ?? '', /algorithm "ES256", which this consumer does not allow \(allowed: EdDSA\)/);
});

test('key rotation: a bad first signature and a good second one verify, and the first is reported', async () => {
  const retired = await signCard(v1Card(), other.privateKey, { alg: 'ES256', kid: 'old' });
  const both = wire(await signCard(retired, ed.privateKey, { alg: 'EdDSA', kid: 'new' }));
  const result = await verifyCardSignatures(both, { mode: 'required', keys: [trust('new', ed)] });
  assert.equal(result.status, 'verified');
  assert.equal(result.kid, 'new');
  assert.equal(result.alg, 'EdDSA');
  assert.deepEqual(result.problems.map((p) => p.path), ['signatures[0]']);
});

// --- Modes ---------------------------------------------------------------------------------

test('modes × cards: off passes everything, if-present refuses only invalid, required accepts only verified', async () => {
  const cards: Record<string, Json> = {
    unsigned: v1Card(),
    valid: signedV1,
    invalid: tamper(signedV1, { name: 'Evil Agent' }),
    unknownKey: wire(await signCard(v1Card(), other.privateKey, { alg: 'ES256', kid: 'stranger' })),
    tamperedUnknownKey: tamper(wire(await signCard(v1Card(), other.privateKey, { alg: 'ES256', kid: 'stranger' })), { name: 'Evil Agent' }),
  };
  const expected: Record<SignatureMode, Record<string, [boolean, string]>> = {
    off: { unsigned: [true, 'skipped'], valid: [true, 'skipped'], invalid: [true, 'skipped'], unknownKey: [true, 'skipped'], tamperedUnknownKey: [true, 'skipped'] },
    'if-present': {
      unsigned: [true, 'unsigned'],
      valid: [true, 'verified'],
      invalid: [false, 'invalid'],
      unknownKey: [true, 'unverified'],
      tamperedUnknownKey: [true, 'unverified'],
    },
    required: { unsigned: [false, 'unsigned'], valid: [true, 'verified'], invalid: [false, 'invalid'], unknownKey: [false, 'unverified'], tamperedUnknownKey: [false, 'unverified'] },
  };
  for (const [mode, row] of Object.entries(expected) as Array<[SignatureMode, Record<string, [boolean, string]>]>) {
    for (const [kind, [ok, status]] of Object.entries(row)) {
      const result = await verifyCardSignatures(cards[kind], { mode, keys: [trust('k1', es)] });
      assert.equal(result.ok, ok, `${mode} × ${kind}`);
      assert.equal(result.status, status, `${mode} × ${kind}`);
    }
  }
  assert.equal((await verifyCardSignatures(cards.invalid, { keys: [trust('k1', es)] })).ok, false, 'mode defaults to if-present');
});

test('a signature by a key the trust store does not hold is unverified, not invalid (if-present)', async () => {
  const signed = wire(await signCard(v1Card(), other.privateKey, { alg: 'ES256', kid: 'their-2025' }));
  // An empty trust store: the card unsigned passes, so the card signed must pass too.
  for (const keys of [[], [trust('k1', es)]]) {
    const result = await verifyCardSignatures(signed, { mode: 'if-present', keys });
    assert.equal(result.status, 'unverified');
    assert.equal(result.ok, true);
    assert.deepEqual(result.problems, [{ path: 'signatures[0]', message: 'is signed by key "their-2025", which is not a trusted key' }]);
  }
  // An allowed jku whose key set does not hold the kid: also an unknown key.
  const jku = 'https://keys.example.com/jwks.json';
  const viaJku = wire(await signCard(v1Card(), other.privateKey, { alg: 'ES256', kid: 'their-2025', jku }));
  const fromSet = await verifyCardSignatures(viaJku, { mode: 'if-present', allowedJku: [jku], fetchJwks: async () => ({ keys: [{ ...es.jwk, kid: 'k1' }] }) });
  assert.equal(fromSet.status, 'unverified');
  // ...but a key set that could not be fetched may hold a trusted key: that is a refusal.
  const unreachable = await verifyCardSignatures(viaJku, { mode: 'if-present', allowedJku: [jku], fetchJwks: () => Promise.reject(new Error('timeout')) });
  assert.equal(unreachable.status, 'invalid');
  // An unknown key next to a trusted key that fails: the trusted one decides.
  const both = wire(await signCard(tamper(signedV1, { version: '9' }), other.privateKey, { alg: 'ES256', kid: 'their-2025' }));
  const mixed = await verifyCardSignatures(both, { mode: 'if-present', keys: [trust('k1', es)] });
  assert.equal(mixed.status, 'invalid');
  assert.equal(mixed.ok, false);
  // An unknown kid with a refused algorithm is not "unknown": it is refused.
  const hs = await signRawPayload(canonicalCardPayload(v1Card(), 'a2a-v1'), { alg: 'HS256', kid: 'stranger' }, await generateSecret('HS256'));
  assert.equal((await verifyCardSignatures({ ...v1Card(), signatures: [hs] }, { mode: 'if-present' })).status, 'invalid');
  // A key trusted only for another origin is a trusted key: it must verify for this one.
  const elsewhere = await verifyCardSignatures(signedV1, { mode: 'if-present', keys: [trust('k1', es, ['https://billing.example.com'])], origin: 'https://evil.example.net' });
  assert.equal(elsewhere.status, 'invalid');
});

test('checkCard: an unverified card passes if-present with its signature problems as warnings, and fails required', async () => {
  const body = JSON.stringify(await signCard(v1Card(), other.privateKey, { alg: 'ES256', kid: 'their-2025' }));
  const lenient = await checkCard(body, { signatures: { mode: 'if-present' } });
  assert.equal(lenient.ok, true, JSON.stringify(lenient.problems));
  assert.equal(lenient.signature?.status, 'unverified');
  assert.ok(lenient.warnings.some((w) => w.path === 'signatures[0]' && /not a trusted key/.test(w.message)));
  const strict = await checkCard(body, { signatures: { mode: 'required', keys: [trust('k1', es)] } });
  assert.equal(strict.ok, false);
  assert.equal(strict.stage, 'signature');
  assert.equal(strict.code, 'ERR_SIGNATURE_INVALID');
  const tampered = JSON.stringify(tamper(signedV1, { description: 'Sends your invoices elsewhere.' }));
  const refused = await checkCard(tampered, { signatures: { mode: 'if-present', keys: [trust('k1', es)] } });
  assert.equal(refused.ok, false);
  assert.equal(refused.signature?.status, 'invalid');
});

test('signatureFailure turns a refusal into ERR_SIGNATURE_MISSING or ERR_SIGNATURE_INVALID', async () => {
  const missing = signatureFailure(await verifyCardSignatures(v1Card(), esOptions), 'https://billing.example.com/.well-known/agent-card.json');
  assert.equal(missing.code, 'ERR_SIGNATURE_MISSING');
  assert.equal(missing.failure, 'invalid');
  assert.equal(missing.stage, 'signature');
  const invalid = signatureFailure(await verifyCardSignatures(tamper(signedV1, { version: '9' }), esOptions));
  assert.equal(invalid.code, 'ERR_SIGNATURE_INVALID');
  assert.equal(invalid.problems[0]?.path, 'signatures[0]');
  assert.throws(() => signatureFailure({ status: 'verified', ok: true, problems: [] }), { code: 'ERR_INTERNAL' });
});

// --- Trust: jku and origins ----------------------------------------------------------------

test('a jku outside allowedJku is reported and never fetched; one inside it is fetched once', async () => {
  const jku = 'https://keys.example.com/jwks.json';
  const signed = wire(await signCard(v1Card(), es.privateKey, { alg: 'ES256', kid: 'remote', jku }));
  let calls = 0;
  const fetchJwks = async (url: string): Promise<JSONWebKeySet> => {
    calls++;
    assert.equal(url, jku);
    return { keys: [{ ...es.jwk, kid: 'remote' }] };
  };

  const refused = await verifyCardSignatures(signed, { mode: 'required', allowedJku: ['https://keys.example.com/other.json'], fetchJwks });
  assert.equal(calls, 0);
  assert.equal(refused.status, 'unverified', 'a key only a jku we do not trust could supply is an unknown key');
  assert.equal(refused.ok, false);
  assert.match(refused.problems[0]?.message ?? '', /jku https:\/\/keys\.example\.com\/jwks\.json is not in the allowed list, so it was not fetched/);

  const twice = { ...signed, signatures: [...(signed.signatures as unknown[]), ...(signed.signatures as unknown[])] };
  const tampered = tamper(twice, { description: 'changed' });
  await verifyCardSignatures(tampered, { mode: 'required', allowedJku: [jku], fetchJwks });
  assert.equal(calls, 1, 'one fetch per jku per call');

  const accepted = await verifyCardSignatures(signed, { mode: 'required', allowedJku: [jku], fetchJwks });
  assert.equal(calls, 2);
  assert.equal(accepted.status, 'verified');
  assert.equal(accepted.kid, 'remote');
});

test('a failing JWKS fetch becomes a problem, not an exception', async () => {
  const jku = 'https://keys.example.com/jwks.json';
  const signed = await signCard(v1Card(), es.privateKey, { alg: 'ES256', kid: 'remote', jku });
  const result = await verifyCardSignatures(signed, {
    mode: 'required',
    allowedJku: [jku],
    fetchJwks: () => Promise.reject(new Error('connect ECONNREFUSED')),
  });
  assert.equal(result.status, 'invalid');
  assert.match(result.problems[0]?.message ?? '', /could not be fetched \(connect ECONNREFUSED\)/);
});

test('a key limited to some origins does not verify cards from another origin', async () => {
  const keys = [trust('k1', es, ['https://billing.example.com'])];
  const elsewhere = await verifyCardSignatures(signedV1, { mode: 'required', keys, origin: 'https://evil.example.net' });
  assert.equal(elsewhere.status, 'invalid');
  assert.match(elsewhere.problems[0]?.message ?? '', /not trusted for cards from https:\/\/evil\.example\.net \(only for https:\/\/billing\.example\.com\)/);
  const unknown = await verifyCardSignatures(signedV1, { mode: 'required', keys });
  assert.equal(unknown.status, 'invalid');
  const home = await verifyCardSignatures(signedV1, { mode: 'required', keys, origin: 'https://billing.example.com/.well-known/agent-card.json' });
  assert.equal(home.status, 'verified');
});

// --- Hostile cards and bad configuration ----------------------------------------------------

test('a card too deep to canonicalize yields a problem, not a crash', async () => {
  let deep: unknown = 'bottom';
  for (let i = 0; i < 20_000; i++) deep = [deep];
  const card = { ...signedV1, capabilities: { extensions: [{ uri: 'x', params: { deep } }] } };
  const result = await verifyCardSignatures(card, esOptions);
  assert.equal(result.status, 'invalid');
  assert.match(result.problems[0]?.message ?? '', /nested deeper than 64 levels/);
  assert.throws(() => canonicalCardPayload(card, 'jcs'), (err) => isDiscoveryError(err) && err.code === 'ERR_CARD_MALFORMED');
});

test('malformed signature entries are reported one by one', async () => {
  const card = { ...v1Card(), signatures: ['jws', { protected: '!!', signature: 'x' }, { protected: 'e30', signature: 'x', header: 'h' }] };
  const result = await verifyCardSignatures(card, esOptions);
  assert.equal(result.status, 'invalid');
  assert.deepEqual(result.problems.map((p) => p.path), ['signatures[0]', 'signatures[1]', 'signatures[2]']);
  assert.match(result.problems[0]?.message ?? '', /not a JWS object/);
  assert.match(result.problems[1]?.message ?? '', /not a base64url-encoded JSON object/);
  assert.match(result.problems[2]?.message ?? '', /"header" that is not a JSON object/);
  const notArray = await verifyCardSignatures({ ...v1Card(), signatures: {} }, { mode: 'if-present' });
  assert.equal(notArray.status, 'invalid');
  assert.equal(notArray.ok, false);
});

test('unsafe configuration is refused with ERR_CONFIG_INVALID', async () => {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  const bad: SignatureOptions[] = [
    { mode: 'required', algorithms: ['HS256'] },
    { mode: 'required', algorithms: ['none'] },
    { mode: 'required', algorithms: [] },
    { mode: 'required', keys: [{ kid: 'k', jwk: privateJwk }] },
    { mode: 'required', keys: [{ kid: 'k', jwk: { kty: 'oct', k: 'c2VjcmV0' } }] },
    { mode: 'required', keys: [{ kid: 'k', jwk: es.jwk, origins: ['not an origin'] }] },
    { mode: 'required', allowedJku: ['https://keys.example.com/jwks.json'] },
    { mode: 'sometimes' as SignatureMode },
  ];
  for (const options of bad) {
    await assert.rejects(verifyCardSignatures(signedV1, options), (err) => isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID', JSON.stringify(options));
  }
  await assert.rejects(signCard(v1Card(), await generateSecret('HS256'), { alg: 'HS256', kid: 'k' }), { code: 'ERR_CONFIG_INVALID' });
});

test('canonicalCardPayload: a2a-v1 drops empty values and signatures; jcs keeps every other member', () => {
  const card = { ...v1Card(), signatures: [{ protected: 'p', signature: 's' }] };
  const v1 = canonicalCardPayload(card);
  const jcs = canonicalCardPayload(card, 'jcs');
  assert.equal(v1.includes('signatures'), false);
  assert.equal(jcs.includes('signatures'), false);
  assert.equal(v1.includes('iconUrl'), false);
  assert.equal(jcs.includes('"iconUrl":""'), true);
  assert.ok(jcs.startsWith('{"capabilities":{"pushNotifications":false,"streaming":true},'));
});
