/**
 * The security matrix, outbound half (issue #12; docs/security.md "Security matrix"): one row per
 * attack on discovery's fetching, each run through every surface that handles a URL:
 *
 * - `fetcher`: `createCardFetcher` (the only code that fetches cards);
 * - `cache`: `CardCache.get` / `refresh` over that fetcher;
 * - `probe`: `probeUrl`, what `a2a-discovery probe <url>` runs;
 * - `policyFetch`: `createPolicyFetch`, the fetch handed to the A2A clients;
 * - `service`: `startService` with a source proposing the URL, one discovery cycle.
 *
 * Each test checks what must happen (the refusal code, or success) and that nothing was
 * requested, executed or stored where nothing may be: two loopback trap servers count every
 * TCP connection and request; undici's diagnostics channels count connections and requests
 * sent; the matrix resolver counts DNS lookups; the cache must hold no entry and the snapshot no
 * agent for the URL. Addresses outside 127.0.0.0/8 are only ever judged: matrix-helpers.ts aborts a
 * row before an attempt if the policy would dial one.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPolicyFetch } from '../../packages/core/src/adk/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { probeUrl } from '../../packages/service/src/cli/probe-url.js';
import type { ProbeStage } from '../../packages/core/src/probe/index.js';
import type { DiscoveryErrorCode } from '../../packages/core/src/errors.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { CARD_PATH, createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { startService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { FaultChange, FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';
import { listSource } from '../helpers/list-source.js';
import { assertNeverDialable, fill, safeResolver, watchNetwork } from './matrix-helpers.js';

type Surface = 'fetcher' | 'cache' | 'probe' | 'policyFetch' | 'service';
const ALL: readonly Surface[] = ['fetcher', 'cache', 'probe', 'policyFetch', 'service'];
/** Surfaces that parse no card (they return bytes) or take no DNS override are left out per row. */
const NO_SERVICE: readonly Surface[] = ['fetcher', 'cache', 'probe', 'policyFetch'];

/** What must happen: a refusal with this code (stage checked where the product sets one), or success. */
type Expect = { code: DiscoveryErrorCode; stage?: string } | 'ok';

interface Row {
  attack: string;
  /** The URL handed to each surface: a base URL (`PORT`/`PORT2`: the traps; `EP`: this test's endpoint). */
  url: string;
  /** Allowlist. Default: the URL's own origin — the allowlist names the target and the guard must still refuse. */
  allow?: readonly string[];
  /** The development exemption (http: and loopback addresses for loopback hosts). Default false. */
  allowLoopback?: boolean;
  /** The matrix resolver's table: name → one answer per call (the last repeats). */
  dns?: Readonly<Record<string, ReadonlyArray<readonly string[]>>>;
  /** What the trap's endpoint does when it is reached. */
  serve?: FaultChange;
  /** One fetch that must succeed before the attack (DNS rebinding). */
  prime?: boolean;
  /** Per-origin credentials: origin (placeholders allowed) → Authorization value. */
  credentials?: Readonly<Record<string, string>>;
  expect: Expect;
  /** The probe's answer where it differs: probe admits the origin the user names. */
  probe?: { stage: ProbeStage; message: RegExp };
  /** Traps this row may legitimately reach; every other trap must see no connection at all. */
  reach?: ReadonlyArray<'trap' | 'trap2'>;
  /** Lookups the resolver must see (0: refused before DNS). */
  lookups?: readonly string[];
  /** A trap that must never see an Authorization header. */
  noAuthAt?: 'trap' | 'trap2';
  surfaces: readonly Surface[];
}

// ---------------------------------------------------------------------------------------------
// The rows.
// ---------------------------------------------------------------------------------------------

const BLOCKED = { code: 'ERR_ADDRESS_BLOCKED', stage: 'address' } as const;
const NOT_ALLOWED = { code: 'ERR_HOST_NOT_ALLOWED', stage: 'resolve' } as const;
const INSECURE = { code: 'ERR_INSECURE_URL', stage: 'policy' } as const;
const PROBE_BLOCKED = { stage: 'address' as const, message: /blocked/ };

/** SSRF spellings: the allowlist names the address (as an operator might), the address guard must still refuse it. */
const SPELLINGS: ReadonlyArray<[string, string]> = [
  ['loopback, decimal', '2130706433'],
  ['loopback, octal', '0177.0.0.1'],
  ['loopback, hex', '0x7f000001'],
  ['loopback, hex short', '0x7f.1'],
  ['loopback, short', '127.1'],
  ['loopback, one octal number', '017700000001'],
  ['loopback, percent-encoded', '%31%32%37.0.0.1'],
  ['loopback, fullwidth digits', '１２７.０.０.１'],
  ['loopback, trailing dot', '127.0.0.1.'],
  ['loopback, another 127/8 address', '127.0.0.2'],
  ['loopback, IPv4-mapped IPv6', '[::ffff:127.0.0.1]'],
  ['loopback, IPv4-mapped IPv6 in hex', '[::ffff:7f00:1]'],
  ['loopback, IPv4-compatible IPv6', '[::7f00:1]'],
  ['loopback, IPv6', '[::1]'],
  ['loopback, IPv6 long form', '[0:0:0:0:0:0:0:1]'],
  ['metadata 169.254.169.254', '169.254.169.254'],
  ['metadata, decimal', '2852039166'],
  ['metadata, dotted hex', '0xa9.0xfe.0xa9.0xfe'],
  ['metadata, IPv4-mapped IPv6', '[::ffff:169.254.169.254]'],
  ['metadata, IPv4-compatible IPv6', '[::a9fe:a9fe]'],
  ['metadata, NAT64', '[64:ff9b::a9fe:a9fe]'],
  ['metadata, 6to4', '[2002:a9fe:a9fe::]'],
  ['metadata, AWS IPv6', '[fd00:ec2::254]'],
  ['metadata, Alibaba (CGNAT)', '100.100.100.200'],
  ['link-local IPv6', '[fe80::1]'],
  ['private 10/8', '10.0.0.1'],
  ['private 10/8, octal', '012.0.0.1'],
  ['private 10/8, decimal', '167772161'],
  ['private 10/8, hex', '0x0a000001'],
  ['private 172.16/12', '172.16.0.1'],
  ['private 192.168/16', '192.168.1.1'],
  ['private, IPv4-mapped IPv6', '[::ffff:10.0.0.1]'],
  ['private, IPv4-compatible IPv6', '[::a00:1]'],
  ['unique-local IPv6', '[fd00::1]'],
  ['carrier-grade NAT', '100.64.0.1'],
  ['unspecified 0.0.0.0', '0.0.0.0'],
  ['unspecified, short', '0'],
  ['unspecified IPv6', '[::]'],
  ['multicast', '224.0.0.1'],
  ['broadcast', '255.255.255.255'],
];

const ROWS: Row[] = [
  ...SPELLINGS.map(
    ([what, host]): Row => ({
      attack: `SSRF spelling: ${what} (${host}), allowlisted, exemption off`,
      url: `https://${host}:PORT/EP/`,
      expect: BLOCKED,
      lookups: [],
      surfaces: ALL,
    }),
  ),
  // The same spellings as an operator would never allow them: http and not in the list.
  ...['2130706433', '0177.0.0.1', '0x7f000001', '127.1', '[::ffff:127.0.0.1]', '[::7f00:1]', '169.254.169.254', '[fd00::1]', '10.0.0.1', '0.0.0.0'].map(
    (host): Row => ({
      attack: `SSRF spelling over http: http://${host}/, exemption off`,
      url: `http://${host}:PORT/EP/`,
      allow: ['https://agents.example.com'],
      expect: INSECURE,
      probe: { stage: 'source', message: /http: is refused/ },
      lookups: [],
      surfaces: ALL,
    }),
  ),
  {
    attack: 'SSRF: a private address the allowlist does not name',
    url: 'https://10.0.0.1/EP/',
    allow: ['https://agents.example.com'],
    expect: NOT_ALLOWED,
    probe: PROBE_BLOCKED,
    lookups: [],
    surfaces: ALL,
  },
  {
    attack: 'loopback exemption on: metadata over http is still refused',
    url: 'http://169.254.169.254/EP/',
    allow: ['http://localhost:PORT'],
    allowLoopback: true,
    expect: INSECURE,
    probe: { stage: 'source', message: /http: is refused/ },
    lookups: [],
    surfaces: ALL,
  },
  {
    attack: 'loopback exemption on: an allowlisted https metadata address is still refused',
    url: 'https://169.254.169.254:PORT/EP/',
    allowLoopback: true,
    expect: BLOCKED,
    lookups: [],
    surfaces: ALL,
  },

  // Names that resolve to blocked addresses (the check runs inside the connector).
  ...([
    ['loopback', ['127.0.0.1']],
    ['metadata', ['169.254.169.254']],
    ['AWS IPv6 metadata', ['fd00:ec2::254']],
    ['IPv4-mapped loopback', ['::ffff:127.0.0.1']],
    ['IPv4-compatible loopback', ['::7f00:1']],
    ['NAT64 metadata', ['64:ff9b::a9fe:a9fe']],
    ['0.0.0.0', ['0.0.0.0']],
    ['private and loopback together', ['10.0.0.1', '127.0.0.1']],
  ] as const).map(
    ([what, answer]): Row => ({
      attack: `DNS: an allowlisted name resolving to ${what}`,
      url: 'https://internal.test:PORT/EP/',
      dns: { 'internal.test': [answer] },
      expect: BLOCKED,
      probe: PROBE_BLOCKED,
      lookups: ['internal.test'],
      surfaces: NO_SERVICE,
    }),
  ),
  {
    attack: 'DNS: loopback exemption on, one allowed and one blocked address in the answer',
    url: 'http://localhost:PORT/EP/',
    allowLoopback: true,
    dns: { localhost: [['127.0.0.1', '10.0.0.1']] },
    expect: BLOCKED,
    probe: PROBE_BLOCKED,
    lookups: ['localhost'],
    surfaces: NO_SERVICE,
  },
  {
    attack: 'DNS: loopback exemption on, a loopback name resolving to metadata',
    url: 'http://localhost:PORT/EP/',
    allowLoopback: true,
    dns: { localhost: [['169.254.169.254']] },
    expect: BLOCKED,
    probe: PROBE_BLOCKED,
    lookups: ['localhost'],
    surfaces: NO_SERVICE,
  },
  {
    attack: 'DNS rebinding: the resolver answers 127.0.0.1, then 10.0.0.1',
    url: 'http://localhost:PORT/EP/',
    // The trap's card names its interface on 127.0.0.1, so both names are allowed.
    allow: ['http://localhost:PORT', 'http://127.0.0.1:PORT'],
    allowLoopback: true,
    dns: { localhost: [['127.0.0.1'], ['10.0.0.1']] },
    // The trap closes every connection, so the second fetch must resolve (and be judged) again.
    serve: { headers: { connection: 'close' }, cacheControl: 'no-cache' },
    prime: true,
    expect: BLOCKED,
    reach: ['trap'],
    lookups: ['localhost', 'localhost'],
    surfaces: ['fetcher', 'cache', 'policyFetch'],
  },
  {
    attack: 'DNS rebinding: the resolver answers 127.0.0.1, then ::ffff:169.254.169.254',
    url: 'http://localhost:PORT/EP/',
    // The trap's card names its interface on 127.0.0.1, so both names are allowed.
    allow: ['http://localhost:PORT', 'http://127.0.0.1:PORT'],
    allowLoopback: true,
    dns: { localhost: [['127.0.0.1'], ['::ffff:169.254.169.254']] },
    serve: { headers: { connection: 'close' }, cacheControl: 'no-cache' },
    prime: true,
    expect: BLOCKED,
    reach: ['trap'],
    lookups: ['localhost', 'localhost'],
    surfaces: ['fetcher', 'cache', 'policyFetch'],
  },

  // Redirects: never followed, whatever the target.
  {
    attack: 'redirect off-host (302 to another origin)',
    url: 'http://127.0.0.1:PORT/EP/',
    allow: ['http://127.0.0.1:PORT', 'http://127.0.0.1:PORT2'],
    allowLoopback: true,
    serve: { mode: 'redirect', location: 'http://127.0.0.1:PORT2/EP/.well-known/agent-card.json' },
    expect: { code: 'ERR_REDIRECT_REFUSED', stage: 'fetch' },
    probe: { stage: 'fetch', message: /refused redirect 302/ },
    reach: ['trap'],
    surfaces: ALL,
  },
  {
    attack: 'redirect to the metadata address (302)',
    url: 'http://127.0.0.1:PORT/EP/',
    allowLoopback: true,
    serve: { mode: 'redirect', location: 'http://169.254.169.254/latest/meta-data/' },
    expect: { code: 'ERR_REDIRECT_REFUSED', stage: 'fetch' },
    probe: { stage: 'fetch', message: /refused redirect 302/ },
    reach: ['trap'],
    surfaces: ALL,
  },
  {
    attack: 'redirect on-host (307 to another path of the same origin)',
    url: 'http://127.0.0.1:PORT/EP/',
    allowLoopback: true,
    serve: { mode: 'redirect', status: 307, location: '/secret/.well-known/agent-card.json' },
    expect: { code: 'ERR_REDIRECT_REFUSED', stage: 'fetch' },
    probe: { stage: 'fetch', message: /refused redirect 307/ },
    reach: ['trap'],
    surfaces: ALL,
  },

  // Userinfo and authority tricks: only the parsed host counts, userinfo is refused.
  ...([
    ['userinfo naming the allowed host', 'https://agents.example.com@127.0.0.1:PORT/EP/', { stage: 'source', message: /username or password/ }],
    ['userinfo with a password', 'https://agents.example.com:pw@127.0.0.1:PORT/EP/', { stage: 'source', message: /username or password/ }],
    ['credentials on the allowed host itself', 'https://user:pass@agents.example.com/EP/', { stage: 'source', message: /username or password/ }],
    ['fragment before @', 'https://127.0.0.1:PORT#@agents.example.com/', PROBE_BLOCKED],
    ['backslash before @', 'https://127.0.0.1:PORT\\@agents.example.com/', PROBE_BLOCKED],
    ['slash-backslash authority', 'https:/\\127.0.0.1:PORT/EP/', PROBE_BLOCKED],
  ] as const).map(
    ([what, url, probe]): Row => ({
      attack: `authority trick: ${what}`,
      url,
      allow: ['https://agents.example.com'],
      expect: NOT_ALLOWED,
      probe,
      lookups: [],
      surfaces: ALL,
    }),
  ),

  // Allowlist pitfalls: exact (scheme, ASCII host, port); wildcards on a label boundary only.
  ...([
    ['suffix: the allowed host as a prefix of another domain', 'https://agents.example.com.evil.test/EP/'],
    ['suffix: a longer label ending in the allowed name', 'https://evilagents.example.com/EP/'],
    ['wildcard: a label ending in the wildcard suffix', 'https://evilpartners.example.com/EP/'],
    ['wildcard: the bare apex', 'https://partners.example.com/EP/'],
    ['wildcard: the suffix followed by another domain', 'https://a.partners.example.com.evil.test/EP/'],
    ['percent-encoded dot', 'https://agents.example.com%2eevil.test/EP/'],
    ['IDN look-alike (Cyrillic а)', 'https://\u0430gents.example.com/EP/'],
    ['IDN look-alike, punycode', 'https://xn--gents-4ve.example.com/EP/'],
    ['another port', 'https://agents.example.com:8443/EP/'],
    ['two trailing dots', 'https://agents.example.com../EP/'],
  ] as const).map(
    ([what, url]): Row => ({
      attack: `allowlist pitfall: ${what}`,
      url,
      allow: ['https://agents.example.com', 'https://*.partners.example.com'],
      expect: NOT_ALLOWED,
      lookups: [],
      surfaces: ['fetcher', 'cache', 'policyFetch', 'service'],
    }),
  ),
  {
    attack: 'allowlist pitfall: plain http to the allowed host',
    url: 'http://agents.example.com/EP/',
    allow: ['https://agents.example.com'],
    expect: INSECURE,
    lookups: [],
    surfaces: ['fetcher', 'cache', 'policyFetch', 'service'],
  },
  // The same host written differently is the same origin: admitted, normalized, then judged by
  // its address (here a blocked one, so nothing is dialled). The lookup shows the name used.
  ...([
    ['one trailing dot', 'https://agents.example.com./EP/'],
    ['upper case and a trailing dot', 'https://AGENTS.Example.COM./EP/'],
    ['fullwidth letters', 'https://ａｇｅｎｔｓ.example.com/EP/'],
    ['the default port written out', 'https://agents.example.com:443/EP/'],
  ] as const).map(
    ([what, url]): Row => ({
      attack: `allowlist: ${what} is the same origin (admitted as agents.example.com, then address-checked)`,
      url,
      allow: ['https://agents.example.com'],
      dns: { 'agents.example.com': [['10.0.0.1']] },
      expect: BLOCKED,
      lookups: ['agents.example.com'],
      surfaces: ['fetcher', 'cache', 'policyFetch'],
    }),
  ),
  ...(['file:///etc/passwd', 'ftp://agents.example.com/EP/', 'data:application/json,{}', 'javascript:alert(1)'] as const).map(
    (url): Row => ({
      attack: `scheme: ${url.split(':')[0]}:`,
      url,
      allow: ['https://agents.example.com'],
      expect: INSECURE,
      probe: { stage: 'source', message: /cannot be fetched|http: is refused/ },
      lookups: [],
      surfaces: ALL,
    }),
  ),

  // Credentials: computed per exact origin, never carried elsewhere.
  {
    attack: 'credentials for one origin are not offered to another (another port)',
    url: 'http://127.0.0.1:PORT2/EP/',
    allow: ['http://127.0.0.1:PORT', 'http://127.0.0.1:PORT2'],
    allowLoopback: true,
    credentials: { 'http://127.0.0.1:PORT': 'Bearer secret-for-trap-1' },
    expect: 'ok',
    reach: ['trap2'],
    noAuthAt: 'trap2',
    surfaces: ['fetcher', 'cache', 'policyFetch', 'service'],
  },
  {
    attack: 'credentials for one origin are not offered to another name of the same server',
    url: 'http://localhost:PORT/EP/',
    allow: ['http://127.0.0.1:PORT', 'http://localhost:PORT'],
    allowLoopback: true,
    dns: { localhost: [['127.0.0.1']] },
    credentials: { 'http://127.0.0.1:PORT': 'Bearer secret-for-127' },
    expect: 'ok',
    reach: ['trap'],
    noAuthAt: 'trap',
    lookups: ['localhost'],
    surfaces: ['fetcher', 'cache', 'policyFetch'],
  },
  {
    attack: 'credentials: a credentialed origin redirects to another origin',
    url: 'http://127.0.0.1:PORT/EP/',
    allow: ['http://127.0.0.1:PORT', 'http://127.0.0.1:PORT2'],
    allowLoopback: true,
    credentials: { 'http://127.0.0.1:PORT': 'Bearer secret-for-trap-1' },
    serve: { mode: 'redirect', location: 'http://127.0.0.1:PORT2/EP/.well-known/agent-card.json' },
    expect: { code: 'ERR_REDIRECT_REFUSED', stage: 'fetch' },
    reach: ['trap'],
    noAuthAt: 'trap2',
    surfaces: ['fetcher', 'cache', 'policyFetch', 'service'],
  },

  // Bodies and time: bounded, never decompressed, never stored.
  ...([
    ['oversized body with content-length (1 MiB)', { mode: 'big', bytes: 1024 * 1024, contentLength: true }, 'ERR_BODY_TOO_LARGE', /exceeds maxBodyBytes/],
    ['oversized body without content-length (64 MiB)', { mode: 'big', bytes: 64 * 1024 * 1024, contentLength: false }, 'ERR_BODY_TOO_LARGE', /exceeds maxBodyBytes/],
    ['gzip bomb (20 KB inflating to 50 MB)', { mode: 'gzip', decompressedBytes: 50 * 1024 * 1024 }, 'ERR_CONTENT_ENCODING', /content-encoding/],
    ['slow headers (never answers)', { mode: 'hang' }, 'ERR_FETCH_TIMEOUT', /deadline|timeout/],
    ['slow-drip body (one byte every 20 ms)', { mode: 'drip', intervalMs: 20 }, 'ERR_FETCH_TIMEOUT', /deadline|timeout/],
  ] as const).map(
    ([what, serve, code, message]): Row => ({
      attack: `body: ${what}`,
      url: 'http://127.0.0.1:PORT/EP/',
      allowLoopback: true,
      serve: serve as FaultChange,
      expect: { code, stage: 'fetch' },
      probe: { stage: 'fetch', message },
      reach: ['trap'],
      surfaces: ['fetcher', 'cache', 'probe', 'service'],
    }),
  ),
  ...([
    ['deep nesting (depth 5,000)', `{"name":"deep","x":${'['.repeat(5000)}${']'.repeat(5000)}}`, /nesting deeper/],
    ['a __proto__ key', '{"name":"proto","__proto__":{"polluted":true},"skills":[]}', /__proto__/],
    ['a nested __proto__ key', '{"name":"proto","capabilities":{"__proto__":{"polluted":true}}}', /__proto__/],
    ['a 30,000-item array', `{"name":"wide","x":[${new Array(30_000).fill(0).join(',')}]}`, /items|limit/],
  ] as const).map(
    ([what, card, message]): Row => ({
      attack: `card JSON: ${what}`,
      url: 'http://127.0.0.1:PORT/EP/',
      allowLoopback: true,
      serve: { card },
      expect: { code: 'ERR_CARD_MALFORMED' },
      probe: { stage: 'parse', message },
      reach: ['trap'],
      // The fetcher and policyFetch return bytes; parsing is the cache's (and probe's) job.
      surfaces: ['cache', 'probe', 'service'],
    }),
  ),
];

// ---------------------------------------------------------------------------------------------
// The driver: one test per row per surface.
// ---------------------------------------------------------------------------------------------

interface Outcome {
  ok: boolean;
  code?: string;
  stage?: string;
  message?: string;
  /** For the probe: its report stage. */
  probeStage?: string;
}

let trap: FaultServer;
let trap2: FaultServer;

before(async () => {
  trap = await startFaultServer();
  trap2 = await startFaultServer();
});
after(async () => {
  await Promise.all([trap.close(), trap2.close()]);
});

/** Total deadline per fetch: short where slowness is the attack, generous elsewhere (no row asserts a duration). */
const timeoutFor = (row: Row): number => (row.expect !== 'ok' && row.expect.code === 'ERR_FETCH_TIMEOUT' ? 400 : 5_000);

function errOutcome(err: unknown): Outcome {
  if (!isDiscoveryError(err)) throw err;
  return { ok: false, code: err.code, ...(err.stage !== undefined && { stage: err.stage }), message: err.message };
}

function originOf(url: string): string | undefined {
  try {
    const o = new URL(url).origin;
    return o === 'null' ? undefined : o;
  } catch {
    return undefined;
  }
}

/** The card URL a fetcher is handed for a row's base URL, by plain concatenation (the raw spelling reaches it). */
function cardUrlOf(url: string): string {
  return url.endsWith('/') ? `${url}${CARD_PATH}` : `${url}/${CARD_PATH}`;
}

describe('security matrix: fetching (fetcher, cache, probe, policyFetch, service)', () => {
  ROWS.forEach((row, index) => {
    for (const surface of row.surfaces) {
      test(`${row.attack} [${surface}]`, async (t) => {
        const ep = `r${index}-${surface}`;
        const values = { port: trap.port, port2: trap2.port };
        const sub = (s: string): string => fill(s, values).replaceAll('/EP/', `/${ep}/`);
        const url = sub(row.url);
        const allow = row.allow !== undefined ? row.allow.map(sub) : [originOf(url)!].filter(Boolean);
        const policy = HostPolicy.from({ allow, allowLoopback: row.allowLoopback ?? false });
        const dns = Object.fromEntries(Object.entries(row.dns ?? {}).map(([k, v]) => [k, v]));
        const resolve = safeResolver(policy, dns);
        const credentials = row.credentials
          ? (origin: string): Record<string, string> | undefined => {
              for (const [o, value] of Object.entries(row.credentials!)) if (sub(o) === origin) return { authorization: value };
              return undefined;
            }
          : undefined;

        // Safety first: a literal the policy would dial outside loopback aborts the row here.
        try {
          assertNeverDialable(policy, new URL(url).hostname);
        } catch (err) {
          if (err instanceof TypeError) {
            /* not a URL: nothing to dial */
          } else throw err;
        }

        // The traps' endpoints: what an attacker's server does if it is ever reached.
        const endpoint = trap.endpoint(ep, row.serve !== undefined ? withPorts(row.serve, sub) : { mode: 'ok' });
        const target2 = trap2.endpoint(ep, { mode: 'ok' });
        const secret = trap.endpoint('secret');
        const before1 = { connections: trap.connections, hits: trap.hits };
        const before2 = { connections: trap2.connections, hits: trap2.hits };
        const secretHits = secret.hits;

        const events: DiscoveryEvent[] = [];
        const watch = watchNetwork();
        let outcome: Outcome;
        let stored: () => Promise<{ cached: boolean; inSnapshot: boolean }>;
        try {
          ({ outcome, stored } = await runSurface(surface, { row, url, allow, policy, resolve, credentials, events, t }));
        } finally {
          watch.stop();
        }

        // 1. What must happen.
        if (surface === 'probe') {
          const want = row.probe ?? probeExpectation(row.expect);
          assert.equal(outcome.ok, row.expect === 'ok', `probe accepted? ${outcome.message}`);
          if (row.expect !== 'ok') {
            assert.equal(outcome.probeStage, want.stage, outcome.message);
            assert.match(outcome.message ?? '', want.message);
          }
        } else if (row.expect === 'ok') {
          assert.equal(outcome.ok, true, outcome.message);
        } else {
          assert.equal(outcome.ok, false, `expected ${row.expect.code}, but it succeeded`);
          assert.equal(outcome.code, row.expect.code, outcome.message);
          if (row.expect.stage !== undefined && outcome.stage !== undefined) assert.equal(outcome.stage, row.expect.stage, outcome.message);
        }

        // 2. Nothing requested where nothing may be.
        const reach = new Set(row.reach ?? []);
        if (!reach.has('trap')) {
          assert.equal(trap.connections - before1.connections, 0, 'the trap saw a connection');
          assert.equal(trap.hits - before1.hits, 0, 'the trap saw a request');
        }
        if (!reach.has('trap2')) {
          assert.equal(trap2.connections - before2.connections, 0, 'the second trap saw a connection');
          assert.equal(target2.hits, 0, 'the redirect or credential target was requested');
        }
        assert.equal(secret.hits - secretHits, 0, 'the on-host redirect target was requested');
        if (reach.size === 0) {
          assert.equal(watch.connected, 0, `a connection was established: ${watch.connectedTo.join(', ')}`);
          assert.equal(watch.requestsSent, 0, 'a request was sent');
        }
        if (row.lookups !== undefined && surface !== 'service') {
          // The service resolves with the system resolver, never with the matrix one.
          assert.deepEqual(resolve.calls, [...row.lookups], 'DNS lookups');
        }
        if (row.noAuthAt !== undefined) {
          const at = row.noAuthAt === 'trap' ? endpoint : target2;
          for (const r of at.requests) assert.equal(r.headers['authorization'], undefined, `Authorization reached ${row.noAuthAt}`);
        }
        if (row.expect === 'ok' && row.noAuthAt !== undefined) {
          const at = row.noAuthAt === 'trap' ? endpoint : target2;
          assert.ok(at.hits >= 1, 'the legitimate request arrived (without credentials)');
        }

        // 3. Nothing stored where nothing may be.
        const s = await stored();
        if (row.expect !== 'ok') {
          if (row.prime) {
            if (surface === 'cache') assert.equal(s.cached, true, 'the last good card is kept');
          } else {
            assert.equal(s.cached, false, 'an entry was stored');
          }
          assert.equal(s.inSnapshot, false, 'a snapshot contains the refused endpoint');
        }
        // __proto__ rows: nothing polluted.
        assert.equal(({} as Record<string, unknown>)['polluted'], undefined, 'Object.prototype was polluted');
      });
    }
  });

  test('control: the traps answer a legitimate fetch on every surface (the harness can see success)', async () => {
    const ep = trap.endpoint('control', { mode: 'ok' });
    const policy = HostPolicy.from({ allow: [trap.origin], allowLoopback: true });
    const fetcher = createCardFetcher({ policy });
    try {
      assert.equal((await fetcher.fetch(ep.cardUrl)).status, 200);
      const cache = new CardCache({ fetcher, hostPolicy: policy, check: { allowLoopback: true } });
      assert.equal((await cache.get(ep.baseUrl)).usable, true);
      const report = await probeUrl(ep.baseUrl, { allow: [], allowLoopback: true, signatureMode: 'off', trustKeys: [] });
      assert.equal(report.accepted, true, JSON.stringify(report.problems));
    } finally {
      await fetcher.close();
    }
    const s = await startService({
      port: 0,
      policy: { allow: [trap.origin], allowLoopback: true },
      vocabulary: [{ tag: 'test', description: 'Test agents.' }],
      needs: [{ tag: 'test' }],
      logger: createLogger({ level: 'silent' }),
      extraSources: [withRecords(listSource('matrix'), [{ name: 'control_agent', baseUrl: ep.baseUrl }])],
    });
    try {
      await s.loop.refreshNow();
      assert.ok(s.loop.current()?.agents.some((a) => a.baseUrl === ep.baseUrl), 'the control endpoint is in the snapshot');
    } finally {
      await s.close();
    }
  });
});

function withPorts(change: FaultChange, sub: (s: string) => string): FaultChange {
  const c = { ...change } as Record<string, unknown>;
  if (typeof c['location'] === 'string') c['location'] = sub(c['location']);
  return c as FaultChange;
}

function withRecords<T extends ReturnType<typeof listSource>>(source: T, records: Parameters<T['set']>[0]): T {
  source.set(records);
  return source;
}

function probeExpectation(expect: Expect): { stage: ProbeStage; message: RegExp } {
  if (expect === 'ok') return { stage: 'selected', message: /./ };
  switch (expect.code) {
    case 'ERR_ADDRESS_BLOCKED':
      return { stage: 'address', message: /blocked/ };
    case 'ERR_INSECURE_URL':
      return { stage: 'source', message: /https|http:/ };
    case 'ERR_HOST_NOT_ALLOWED':
      return { stage: 'source', message: /allowlist|username|not a valid/ };
    default:
      return { stage: 'fetch', message: /./ };
  }
}

interface RunContext {
  row: Row;
  url: string;
  policy: HostPolicy;
  resolve: ReturnType<typeof safeResolver>;
  credentials: ((origin: string) => Record<string, string> | undefined) | undefined;
  events: DiscoveryEvent[];
  allow: readonly string[];
  t: { after(fn: () => unknown): void };
}

async function runSurface(
  surface: Surface,
  c: RunContext,
): Promise<{ outcome: Outcome; stored: () => Promise<{ cached: boolean; inSnapshot: boolean }> }> {
  const { row, url, policy, resolve, credentials } = c;
  const none = async () => ({ cached: false, inSnapshot: false });
  switch (surface) {
    case 'fetcher': {
      const fetcher = createCardFetcher({ policy, lookup: resolve, totalTimeoutMs: timeoutFor(row), ...(credentials && { credentials }) });
      try {
        if (row.prime) assert.equal((await fetcher.fetch(cardUrlOf(url))).status, 200, 'the first (honest) answer is fetched');
        const res = await fetcher.fetch(cardUrlOf(url));
        return { outcome: { ok: res.status === 200, message: `status ${res.status}` }, stored: none };
      } catch (err) {
        return { outcome: errOutcome(err), stored: none };
      } finally {
        await fetcher.close();
      }
    }
    case 'policyFetch': {
      const pf = createPolicyFetch({ policy, resolve, timeoutMs: timeoutFor(row), ...(credentials && { credentials }) });
      try {
        if (row.prime) {
          const first = await pf(cardUrlOf(url));
          await first.arrayBuffer();
          assert.equal(first.status, 200, 'the first (honest) answer is fetched');
        }
        const res = await pf(cardUrlOf(url));
        await res.arrayBuffer();
        return { outcome: { ok: res.status === 200, message: `status ${res.status}` }, stored: none };
      } catch (err) {
        return { outcome: errOutcome(err), stored: none };
      } finally {
        await pf.close();
      }
    }
    case 'cache': {
      const events = new EventStream();
      events.subscribe((e) => c.events.push(e));
      const fetcher = createCardFetcher({ policy, lookup: resolve, totalTimeoutMs: timeoutFor(row), ...(credentials && { credentials }) });
      const cache = new CardCache({ fetcher, hostPolicy: policy, events, check: { allowLoopback: row.allowLoopback ?? false } });
      c.t.after(() => fetcher.close());
      let primed: unknown;
      let outcome: Outcome;
      try {
        if (row.prime) {
          const first = await cache.get(url);
          assert.equal(first.usable, true, 'the first (honest) card is cached');
          primed = first.rawSha256;
          const second = await cache.refresh(url);
          outcome = second.lastError
            ? { ok: false, code: second.lastError.code, ...(second.lastError.stage !== undefined && { stage: second.lastError.stage }), message: second.lastError.message }
            : { ok: true };
          assert.equal(second.stale, true, 'the refused refresh leaves the card stale');
          assert.equal(second.rawSha256, primed, 'the card is the one fetched before the rebinding');
        } else {
          const entry = await cache.get(url);
          outcome = { ok: entry.usable && entry.lastError === undefined, message: entry.lastError?.message ?? '' };
        }
      } catch (err) {
        outcome = errOutcome(err);
      }
      const stored = async () => {
        const entries = await cache.entries();
        if (!row.prime && row.expect !== 'ok') {
          const results = c.events.filter((e) => e.type === 'card.result') as Array<{ outcome: string }>;
          assert.ok(results.every((e) => e.outcome === 'failed' || e.outcome === 'invalid'), `events: ${results.map((e) => e.outcome).join(',')}`);
        }
        return { cached: entries.length > 0, inSnapshot: false };
      };
      return { outcome, stored };
    }
    case 'probe': {
      // Probe admits the origin the user names; names are resolved by the matrix resolver only.
      const injected =
        row.dns !== undefined
          ? createCardFetcher({ policy: HostPolicy.from({ allow: [originOf(url)!], allowLoopback: row.allowLoopback ?? false }), lookup: resolve, totalTimeoutMs: timeoutFor(row) })
          : undefined;
      try {
        const report = await probeUrl(url, {
          allow: [],
          allowLoopback: row.allowLoopback ?? false,
          signatureMode: 'off',
          trustKeys: [],
          totalTimeoutMs: timeoutFor(row),
          ...(injected && { fetcher: injected }),
        });
        return { outcome: { ok: report.accepted, probeStage: report.stage, message: report.problems.map((p) => p.message).join('; ') }, stored: none };
      } catch (err) {
        const o = errOutcome(err);
        return { outcome: { ...o, probeStage: 'usage' }, stored: none };
      } finally {
        await injected?.close();
      }
    }
    case 'service': {
      const source = listSource('matrix');
      source.set([{ name: 'matrix_agent', baseUrl: url }]);
      const s = await startService({
        port: 0,
        policy: { allow: c.allow, allowLoopback: row.allowLoopback ?? false },
        vocabulary: [{ tag: 'test', description: 'Test agents.' }],
        needs: [{ tag: 'test' }],
        logger: createLogger({ level: 'silent' }),
        cache: { totalTimeoutMs: timeoutFor(row) },
        loop: { cycleIntervalMs: 60_000 },
        ...(credentials && { credentials }),
        extraSources: [source],
      });
      try {
        await s.loop.refreshNow();
        const status = await s.loop.status();
        let key: string | undefined;
        try {
          key = s.policy.normalizeEndpoint(url);
        } catch {
          key = undefined;
        }
        const mine = status.find((e) => e.baseUrl === key || e.names.includes('matrix_agent'));
        assert.ok(mine !== undefined, `the proposal is listed (${status.map((e) => e.baseUrl).join(', ')})`);
        let outcome: Outcome;
        if (!mine.admitted) outcome = { ok: false, code: mine.refusal?.code, message: mine.refusal?.reason };
        else if (mine.cache?.lastError) outcome = { ok: false, code: mine.cache.lastError.code, message: mine.cache.lastError.message };
        else if (mine.lastFailure) outcome = { ok: false, code: mine.lastFailure.code, message: mine.lastFailure.message };
        else outcome = { ok: mine.cache?.usable === true, message: JSON.stringify(mine) };
        const entries = await s.cache.entries();
        const snapshot = s.loop.current();
        const result = { cached: entries.some((e) => e.baseUrl === key), inSnapshot: snapshot?.agents.some((a) => a.baseUrl === key || a.localName === 'matrix_agent') ?? false };
        if (row.expect === 'ok') assert.equal(result.inSnapshot, true, 'the legitimate endpoint is published');
        return { outcome, stored: async () => result };
      } finally {
        await s.close();
      }
    }
  }
}
