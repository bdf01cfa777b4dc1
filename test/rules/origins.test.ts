/**
 * One definition of loopback: `isLoopbackHost`, and every rule that relaxes something for
 * loopback hosts (the allowlist's `http:` exemption, the card's interface policy without a host
 * policy) answering exactly as it does. (The configuration's and the service's bind checks call
 * the same function.) One definition of an origin: `originOf` (the origin of a URL) and
 * `normalizeOrigin` (a value that must be an origin), which the configuration, the credentials
 * lookup and the signature check share, where their own copies used to disagree.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair } from 'jose';
import { isLoopbackHost, normalizeOrigin, originOf, originOfNormalized } from '../../packages/core/src/rules/origins.js';
import { checkCard, parseAgentCard, signCard, verifyCardSignatures } from '../../packages/core/src/card/index.js';
import { parseConfig, resolveSecrets } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { cardFor } from '../helpers/cards.js';

/** Host as written in a URL → loopback? */
const HOSTS: ReadonlyArray<[string, boolean]> = [
  ['localhost', true],
  ['LOCALHOST', true],
  ['localhost.', true],
  ['127.0.0.1', true],
  ['127.9.9.9', true],
  ['[::1]', true],
  ['[0:0:0:0:0:0:0:1]', true],
  // IPv4-mapped IPv6 of 127/8: a dual-stack socket reaches 127.0.0.1 through it.
  ['[::ffff:127.0.0.1]', true],
  ['[::ffff:7f00:1]', true],
  // RFC 6761 names under .localhost: Node's resolver may send them to DNS, so not loopback.
  ['foo.localhost', false],
  ['a.b.localhost', false],
  ['localhost.evil.test', false],
  ['evil-localhost', false],
  ['128.0.0.1', false],
  ['10.0.0.1', false],
  ['[::2]', false],
  // IPv4-compatible (deprecated) IPv6 is not loopback, and is blocked at connect time anyway.
  ['[::7f00:1]', false],
  ['[::ffff:10.0.0.1]', false],
];

describe('isLoopbackHost', () => {
  test('localhost, 127/8, ::1 and IPv4-mapped 127/8; never names under .localhost or look-alikes', () => {
    for (const [host, loopback] of HOSTS) assert.equal(isLoopbackHost(host), loopback, host);
    // Without brackets too, as a bind address is written.
    for (const host of ['::1', '::ffff:127.0.0.1', '::ffff:7f00:1']) assert.equal(isLoopbackHost(host), true, host);
    // Spellings that are not four decimal parts: `new URL()` rewrites them before anyone asks.
    for (const host of ['127.1', '0x7f000001', '2130706433', '']) assert.equal(isLoopbackHost(host), false, host);
  });

  test('the allowlist and the card interface policy give the same loopback answer for every host', () => {
    const policy = HostPolicy.from({ allow: [], allowLoopback: true });
    for (const [host, loopback] of HOSTS) {
      const url = `http://${host}:8080/a2a`;
      // The allowlist: http: passes the scheme rule only for loopback hosts (then fails on the empty list).
      const verdict = policy.check(url);
      assert.equal(verdict.allowed, false);
      assert.equal(!verdict.allowed && verdict.code, loopback ? 'ERR_HOST_NOT_ALLOWED' : 'ERR_INSECURE_URL', `allowlist, ${host}`);
      // The interface policy without a host policy: an http: interface only on a loopback host.
      const card = cardFor({ origin: `http://${host}:8080` }, 'dev');
      const parsed = parseAgentCard(JSON.stringify(card), { allowLoopback: true });
      assert.equal(parsed.ok, loopback, `interface policy, ${host}: ${JSON.stringify(parsed.problems)}`);
      if (!loopback) assert.equal(parsed.code, 'ERR_INSECURE_INTERFACE', host);
    }
  });

});

describe('originOf and normalizeOrigin', () => {
  test('originOf: the origin of an http(s) URL, lower case, punycode, no default port, one trailing dot dropped', () => {
    const cases: ReadonlyArray<[string, string | undefined]> = [
      ['https://agents.example.com/a/b?c#d', 'https://agents.example.com'],
      ['HTTPS://Agents.Example.COM:443/', 'https://agents.example.com'],
      ['http://127.0.0.1:80/x', 'http://127.0.0.1'],
      ['https://agents.example.com:8443', 'https://agents.example.com:8443'],
      ['https://bücher.example/', 'https://xn--bcher-kva.example'],
      // The allowlist drops one trailing dot; so does the origin every lookup keys on.
      ['https://agents.example.com./card.json', 'https://agents.example.com'],
      ['https://[::1]:8080/', 'https://[::1]:8080'],
      ['ftp://files.example.com/', undefined],
      ['ws://agents.example.com/', undefined],
      ['https://./', undefined],
      ['/relative/path', undefined],
      ['not a url', undefined],
    ];
    for (const [url, origin] of cases) assert.equal(originOf(url), origin, url);
  });

  test("originOfNormalized: what originOf answers for every URL the host policy normalized (the card cache's per-origin limit)", () => {
    const policy = HostPolicy.from({ allow: ['https://*.example.com', 'https://agents.example.com:8443', 'https://deep.sub.example.com:8443', 'https://xn--bcher-kva.example', 'http://127.0.0.1:8080', 'https://[::1]:8443'], allowLoopback: true });
    const urls = [
      'https://agents.example.com/a/b?c#d',
      'HTTPS://Agents.Example.COM:443/',
      'https://agents.example.com:8443',
      'https://agents.example.com./billing/',
      'https://deep.sub.example.com:8443/x/y/card.json',
      'https://bücher.example/agents/',
      'http://127.0.0.1:8080/h0/',
      'https://[::1]:8443/v2/',
      'https://agents.example.com/a%2Fb/',
    ];
    for (const url of urls) {
      for (const normalize of [(u: string) => policy.normalizeEndpoint(u), (u: string) => policy.normalizeDocumentUrl(u)]) {
        const key = normalize(url);
        assert.equal(originOfNormalized(key), originOf(key), `${url} → ${key}`);
      }
    }
  });

  test('normalizeOrigin: only an origin, nothing after the host but a /', () => {
    const accepted: ReadonlyArray<[string, string]> = [
      ['https://billing.example.com', 'https://billing.example.com'],
      [' HTTPS://Billing.Example.COM:443/ ', 'https://billing.example.com'],
      ['https://billing.example.com.', 'https://billing.example.com'],
      ['http://localhost:3000', 'http://localhost:3000'],
    ];
    for (const [value, origin] of accepted) assert.equal(normalizeOrigin(value), origin, value);
    for (const value of REFUSED_ORIGINS) {
      const r = normalizeOrigin(value);
      assert.equal(typeof r, 'object', value);
      assert.match((r as { problem: string }).problem, /is not an origin such as "https:\/\/agents\.example\.com" \(scheme, host and optional port; no path, query or fragment\)$/, value);
    }
  });

  test('a signing key\'s origins: the configuration and verifyCardSignatures accept and refuse the same values', async () => {
    const { publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const card = { ...cardFor({ origin: 'https://billing.example.com' }, 'billing') };
    for (const value of [...REFUSED_ORIGINS, 'https://billing.example.com', 'https://billing.example.com.']) {
      const yaml = `${BASE}signatures: { keys: [{ kid: k1, jwkFile: k1.jwk, origins: [${JSON.stringify(value)}] }] }\n`;
      let configProblem: string | undefined;
      try {
        parseConfig(yaml);
      } catch (err) {
        assert.ok(isDiscoveryError(err), value);
        configProblem = err.problems.find((p) => p.path === 'signatures.keys[0].origins[0]')?.message;
        assert.ok(configProblem !== undefined, `${value}: ${err.message}`);
      }
      let libraryProblem: string | undefined;
      try {
        await verifyCardSignatures(card, { mode: 'if-present', keys: [{ kid: 'k1', jwk, origins: [value] }] });
      } catch (err) {
        assert.ok(isDiscoveryError(err) && err.code === 'ERR_CONFIG_INVALID', value);
        assert.equal(err.path, 'signatures.keys[0].origins[0]');
        libraryProblem = err.message;
      }
      assert.equal(libraryProblem, configProblem, value);
    }
  });

  test('a signing key for "https://billing.example.com." verifies cards fetched from https://billing.example.com', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = await exportJWK(publicKey);
    const signed = await signCard(cardFor({ origin: 'https://billing.example.com' }, 'billing'), privateKey, { alg: 'ES256', kid: 'k1' });
    const r = await checkCard(JSON.stringify(signed), {
      sourceUrl: 'https://billing.example.com/.well-known/agent-card.json',
      signatures: { mode: 'required', keys: [{ kid: 'k1', jwk, origins: ['https://billing.example.com.'] }] },
    });
    assert.equal(r.ok, true, JSON.stringify(r.problems));
    assert.equal(r.signature?.status, 'verified');
  });

  test('a credential configured for "https://billing.example.com." is sent to the origin the allowlist admits', async () => {
    const config = parseConfig(`${BASE}credentials: [{ origin: "https://billing.example.com.", valueEnv: BILLING_TOKEN }]\n`);
    assert.equal(config.credentials[0]?.origin, 'https://billing.example.com');
    const secrets = await resolveSecrets(config, { BILLING_TOKEN: 'bill-123' });
    const verdict = HostPolicy.from({ allow: ['https://billing.example.com'] }).check('https://billing.example.com./.well-known/agent-card.json');
    assert.ok(verdict.allowed);
    // What the fetcher asks with: the verdict's origin.
    assert.deepEqual(await secrets.credentials.headers(verdict.origin), { authorization: 'bill-123' });
    assert.deepEqual(await secrets.credentials.headers('https://billing.example.com/a2a/v1'), { authorization: 'bill-123' });
  });
});

/** Values that are not an origin: a path, a query, a fragment, user info, another scheme, no scheme. */
const REFUSED_ORIGINS: readonly string[] = [
  'https://billing.example.com/v1',
  'https://billing.example.com/.',
  'https://billing.example.com?x=1',
  'https://billing.example.com/?',
  'https://billing.example.com#',
  'https://user@billing.example.com',
  'ftp://billing.example.com',
  'https:billing.example.com',
  'billing.example.com',
  'not an origin',
];

const BASE = `allow: [https://billing.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Answers invoices., tags: [billing] }
`;
