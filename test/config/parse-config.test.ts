/**
 * parseConfig / loadConfig on valid input: the shipped example, defaults, path resolution, and
 * that each section fits the option type of the stage that uses it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { loadConfig, parseConfig, type DiscoveryConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { TagVocabulary, type Need, type SelectOptions, type TenantPolicy, type VocabularyEntry } from '../../packages/core/src/match/index.js';
import { kubernetesSource, staticSource, wellKnownSource, type StaticAgentConfig } from '../../packages/core/src/sources/index.js';
import type { HealthOptions } from '../../packages/core/src/health/index.js';
import type { DiscoveryLoopOptions } from '../../packages/core/src/loop/index.js';
import type { CardCacheOptions } from '../../packages/core/src/cache/index.js';
import type { CardFetcherOptions } from '../../packages/core/src/fetch/index.js';
import type { SignatureMode } from '../../packages/core/src/card/index.js';
import type { RootKind, RouteHints, TreeFactoryOptions } from '../../packages/core/src/adk/index.js';

const EXAMPLE = new URL('../../examples/discovery.yaml', import.meta.url).pathname;
const EXAMPLES_DIR = new URL('../../examples/', import.meta.url).pathname.replace(/\/$/, '');
const MINIMAL = new URL('../../examples/config/minimal.yaml', import.meta.url).pathname;

const AGENT = `
allow: [https://billing.example.com]
vocabulary: [{ tag: billing, description: Invoices and payments. }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Answers invoices., tags: [billing] }
`;

/** `server:` with nothing set: loopback, the default port, no extra names, the default limits, no catalog, the registry API on, a 25 s drain, V8's own heap growth. */
const SERVER_DEFAULTS = {
  host: '127.0.0.1',
  port: 7340,
  drainTimeoutMs: 25_000,
  heapGrowthPercent: 0,
  allowedHosts: [],
  allowedOrigins: [],
  limits: {
    maxBodyBytes: 65_536,
    maxTraceBodyBytes: 262_144,
    maxInspectBodyBytes: 262_144,
    maxInspections: 2,
    inspectTimeoutMs: 20_000,
    inspectMaxEntries: 5_000,
    inspectMaxDocuments: 10,
    inspectMaxRequests: 72,
    inspectMaxAnswerBytes: 524_288,
    maxStreams: 64,
    maxStreamsPerClient: 8,
    streamQueueEvents: 512,
    streamStallMs: 30_000,
    maxReplayEvents: 256,
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    maxInspectionsPerClient: 1,
    maxSessionsPerClient: 32,
    maxTurnsPerClient: 2,
    maxTurns: 64,
    queueLength: 64,
    queueWaitMs: 10_000,
    activityEndpoints: 10_000,
    leaderTimeoutMs: 5_000,
    leaderMaxBytes: 33_554_432,
  },
  clients: { ipv4Prefix: 32, ipv6Prefix: 64, trustedProxies: [] },
  catalog: { enabled: false, cacheControl: 'max-age=60', hostName: 'a2a-discovery', registryUrl: '/api/registry/' },
  a2a: {
    enabled: true,
    name: 'a2a-discovery',
    description: 'Routes each question to the agent discovery selected for it (its skills: the routed agents or domains) and answers with that agent’s reply.',
    cacheControl: 'max-age=30',
    maxTasks: 1_000,
    listInCatalog: false,
  },
  registry: {
    enabled: true,
    anonymous: false,
    mcp: true,
    maxEntries: 100_000,
    maxBodyBytes: 16_384,
    maxTextLength: 512,
    maxFilterKeys: 16,
    maxFilterValues: 64,
    maxFacets: 16,
    maxQueryTerms: 32,
    maxCandidates: 100_000,
    maxSearches: 4,
    maxSearchesPerClient: 2,
    maxPageSize: 100,
    maxPageTokenBytes: 512,
    pageTokenTtlMs: 600_000,
    maxPinnedSearches: 256,
    maxTombstones: 10_000,
    tombstoneTtlMs: 604_800_000,
    peers: [],
    federation: { maxRegistries: 8, requestTimeoutMs: 2_000, timeoutMs: 3_000, maxBytes: 1_048_576 },
  },
  telemetry: {},
};

describe('the shipped example (examples/discovery.yaml)', () => {
  test('loads, with every section as documented', async () => {
    const config = await loadConfig(EXAMPLE);
    assert.deepEqual(config.server, { ...SERVER_DEFAULTS, tokenEnv: 'A2A_DISCOVERY_TOKEN' });
    assert.equal(config.allow.length, 5);
    assert.deepEqual(config.allowCidrs, ['10.0.0.0/8']);
    assert.deepEqual(config.credentials, [{ origin: 'https://billing.example.com', header: 'authorization', prefix: 'Bearer ', valueEnv: 'BILLING_TOKEN' }]);
    assert.deepEqual(config.signatures, {
      mode: 'if-present',
      algorithms: ['ES256', 'EdDSA'],
      keys: [{ kid: 'billing-2025', jwkFile: join(EXAMPLES_DIR, 'config/keys/billing-2025.json'), origins: ['https://billing.example.com'] }],
    });
    assert.deepEqual(config.vocabulary.map((v) => v.tag), ['billing', 'warranty']);
    assert.deepEqual(config.needs[0], { tag: 'billing', inputModes: ['text/plain'], outputModes: ['text/plain'] });
    assert.deepEqual(config.needs[1], { tag: 'warranty' });
    assert.deepEqual(config.static.map((a) => [a.name, a.critical]), [['billing_agent', true], ['warranty_agent', false]]);
    assert.deepEqual(config.sources.wellKnown, { id: 'partners', domains: ['agents.partner.example.com'], pollIntervalMs: 300_000, catalogFirst: false });
    assert.deepEqual(config.sources.registries, [{ id: 'catalog', url: 'https://registry.example.com/agents.json', pollIntervalMs: 300_000, maxPages: 20, maxEntries: 5_000 }]);
    assert.deepEqual(config.sources.aiCatalogs, [
      {
        id: 'platform',
        catalogs: ['https://registry.example.com/.well-known/ai-catalog.json'],
        domains: [],
        pollIntervalMs: 300_000,
        versions: {},
        maxDepth: 4,
        maxEntries: 5_000,
        maxCatalogs: 50,
        maxBytes: 1_048_576,
        signatures: 'if-present',
      },
    ]);
    assert.deepEqual(config.sources.kubernetes, { id: 'cluster', namespace: 'support', labelSelector: 'a2a.example.com/agent=true', scheme: 'https', resyncIntervalMs: 300_000 });
    assert.deepEqual(config.root, { kind: 'routed', name: 'orchestrator', fallback: 'billing_agent' });
    assert.deepEqual(config.policies, { requireStreaming: false, tenant: { providers: ['Example Payments', 'Example Support'], hosts: ['*.example.com'] }, maxAgents: 16, lookalikes: 'flag' });
  });

  test('every value it spells out is the default, so the minimal file gets the same settings', async () => {
    const full = await loadConfig(EXAMPLE);
    const minimal = await loadConfig(MINIMAL);
    for (const section of ['health', 'cache', 'loop', 'sessions'] as const) assert.deepEqual(minimal[section], full[section], section);
    assert.deepEqual(minimal.server, SERVER_DEFAULTS);
    assert.equal(minimal.signatures.mode, full.signatures.mode);
    assert.equal(minimal.policies.maxAgents, full.policies.maxAgents);
    assert.equal(minimal.allowLoopback, full.allowLoopback);
  });
});

describe('the state store', () => {
  test('memory, a SQLite path under the data directory, or a PostgreSQL URL whose password comes from env or a file', () => {
    assert.equal(parseConfig(`${AGENT}store: memory\n`).store, 'memory');
    assert.equal(parseConfig(`${AGENT}dataDir: /var/lib/a2ad\nstore: sqlite:state/discovery.db\n`).store, 'sqlite:/var/lib/a2ad/state/discovery.db');
    assert.equal(parseConfig(`${AGENT}store: sqlite:/abs/x.db\n`).store, 'sqlite:/abs/x.db');
    const pg = parseConfig(`${AGENT}store: postgres://a2a@db.internal:5432/a2a\nstorePasswordEnv: A2A_DB_PASSWORD\n`);
    assert.equal(pg.store, 'postgres://a2a@db.internal:5432/a2a');
    assert.equal(pg.storePasswordEnv, 'A2A_DB_PASSWORD');
  });

  test('a store that is not one, a password inside the URL, and a password for a non-PostgreSQL store are each reported', () => {
    const problems = (yaml: string) => {
      try {
        parseConfig(yaml);
      } catch (err) {
        assert.ok(isDiscoveryError(err));
        return err.problems.map((p) => `${p.path}: ${p.message}`);
      }
      return [];
    };
    assert.match(problems(`${AGENT}store: redis://cache\n`).join('\n'), /^store: must be memory, sqlite, sqlite:<path> or postgres:/);
    const leaked = problems(`${AGENT}store: postgres://a2a:hunter2@db/a2a\n`).join('\n');
    assert.match(leaked, /storePasswordEnv or storePasswordFile/);
    assert.doesNotMatch(leaked, /hunter2/);
    assert.match(problems(`${AGENT}storePasswordEnv: X\n`).join('\n'), /storePasswordEnv: is only used with a PostgreSQL store/);
  });
});

describe('defaults', () => {
  test('a config with one static agent gets every default', () => {
    const config = parseConfig(AGENT);
    assert.deepEqual(config.server, SERVER_DEFAULTS);
    assert.equal(config.allowLoopback, false);
    assert.deepEqual(config.allowCidrs, []);
    assert.deepEqual(config.credentials, []);
    assert.deepEqual(config.signatures, { mode: 'if-present', keys: [] });
    assert.deepEqual(config.needs, []);
    assert.deepEqual(config.policies, { requireStreaming: false, maxAgents: 16, lookalikes: 'flag' });
    // Lookalike agents (docs/security.md): flagged by default, excluded on request, nothing else.
    assert.equal(parseConfig(`${AGENT}policies: { lookalikes: exclude }\n`).policies.lookalikes, 'exclude');
    assert.throws(() => parseConfig(`${AGENT}policies: { lookalikes: block }\n`), (e: unknown) => isDiscoveryError(e) && /lookalikes/.test(e.message));
    assert.deepEqual(config.sources, { aiCatalogs: [], registries: [], ard: [], dns: [] });
    assert.deepEqual(config.health, { enterAfter: 2, leaveAfter: 3, leaveWhileUsable: false, staticEnterAfter: 1, callLeaveAfter: 5, activeCheck: { enabled: false, intervalMs: 60_000, timeoutMs: 5_000, maxConcurrent: 4 } });
    // Staged rollouts (docs/rollouts.md): breaking changes reach 5 %, then 25 %, of new sessions before all.
    assert.deepEqual(config.rollout, { trigger: 'breaking', steps: [5, 25, 100], holdMs: 600_000, minTurns: 20, minSamples: 10, maxErrorRateIncrease: 0.05, maxLatencyRatio: 1.5, minLatencyIncreaseMs: 250 });
    assert.throws(() => parseConfig(`${AGENT}rollout: { steps: [25, 5] }\n`), (e: unknown) => isDiscoveryError(e) && /steps must grow/.test(e.message));
    assert.throws(() => parseConfig(`${AGENT}rollout: { trigger: sometimes }\n`), (e: unknown) => isDiscoveryError(e) && /rollout\.trigger/.test(e.message));
    assert.deepEqual(config.cache, {
      defaultTtlMs: 300_000,
      minTtlMs: 30_000,
      maxTtlMs: 3_600_000,
      maxStaleMs: 3_600_000,
      backoffBaseMs: 5_000,
      backoffMaxMs: 300_000,
      maxConcurrentFetches: 32,
      maxConcurrentFetchesDuringTurns: 4,
      maxFetchesPerOrigin: 1,
      originRequestsPerSecond: 50,
      originBurst: 200,
      originMaxWaitMs: 30_000,
      maxBodyBytes: 65_536,
      totalTimeoutMs: 5_000,
    });
    assert.deepEqual(config.loop, { cycleIntervalMs: 5_000, resyncIntervalMs: 3_600_000, startupTimeoutMs: 10_000, maxRemovalShare: 0.5, minPublishIntervalMs: 0, removalGraceMs: 600_000 });
    assert.deepEqual(config.root, { kind: 'routed', name: 'orchestrator' });
    assert.deepEqual(config.sessions, { idleTimeoutMs: 3_600_000, maxSessions: 10_000, allowAdkMetadata: false, history: 'store' });
    assert.equal(config.dataDir, resolve(process.cwd(), 'data'), 'relative to the base directory (the config file\'s folder when loaded)');
    assert.equal(config.store, `sqlite:${resolve(process.cwd(), 'data', 'a2a-discovery.sqlite')}`, 'serve keeps its state in a SQLite file under the data directory');
    assert.deepEqual(config.retention, { journalMaxEvents: 100_000, journalMaxEventsPerType: 10_000, journalMaxAgeMs: 604_800_000, snapshots: 50, snapshotHistory: 200 });
    assert.deepEqual(config.static[0], { name: 'billing_agent', url: 'https://billing.example.com/', description: 'Answers invoices.', tags: ['billing'], critical: false });
  });

  test('defaults fill in around the keys that are set, and an empty section means the defaults', () => {
    const config = parseConfig(`${AGENT}cache:\n  maxBodyBytes: 131072\nhealth:\nloop: {}\nsources:\n  registries:\n`);
    assert.equal(config.cache.maxBodyBytes, 131_072);
    assert.equal(config.cache.defaultTtlMs, 300_000);
    assert.deepEqual(config.health, { enterAfter: 2, leaveAfter: 3, leaveWhileUsable: false, staticEnterAfter: 1, callLeaveAfter: 5, activeCheck: { enabled: false, intervalMs: 60_000, timeoutMs: 5_000, maxConcurrent: 4 } });
    assert.equal(config.loop.cycleIntervalMs, 5_000);
    assert.deepEqual(config.sources.registries, []);
  });

  test('the result is deeply frozen', () => {
    const config = parseConfig(AGENT);
    assert.ok(Object.isFrozen(config));
    assert.ok(Object.isFrozen(config.static));
    assert.ok(Object.isFrozen(config.static[0]));
    assert.ok(Object.isFrozen(config.static[0]!.tags));
    assert.ok(Object.isFrozen(config.cache));
    assert.throws(() => {
      (config.cache as { maxBodyBytes: number }).maxBodyBytes = 1;
    }, TypeError);
  });

  test('a model root is typed with its model; a routed root with its fallback', () => {
    const model = parseConfig(`${AGENT}root: { kind: model, model: gemini-2.5-flash, name: concierge }`);
    assert.deepEqual(model.root, { kind: 'model', name: 'concierge', model: 'gemini-2.5-flash' });
    const routed = parseConfig(`${AGENT}root: { fallback: billing_agent }`);
    assert.deepEqual(routed.root, { kind: 'routed', name: 'orchestrator', fallback: 'billing_agent' });
  });

  test('credential origins are normalized and header names lower-cased', () => {
    const config = parseConfig(`${AGENT}credentials:\n  - { origin: "HTTPS://Billing.Example.com:443", header: X-Api-Key, valueEnv: KEY }\n`);
    assert.deepEqual(config.credentials, [{ origin: 'https://billing.example.com', header: 'x-api-key', valueEnv: 'KEY' }]);
  });
});

describe('file paths', () => {
  test('relative paths resolve against the file directory (loadConfig) or baseDir (parseConfig)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'config-'));
    try {
      await mkdir(join(dir, 'etc'));
      const text = `${AGENT}server: { tokenFile: ./secrets/token }\ncredentials: [{ origin: "https://billing.example.com", valueFile: ../billing.txt }]\nsignatures: { keys: [{ kid: k1, jwkFile: keys/k1.json }] }\n`;
      await writeFile(join(dir, 'etc', 'discovery.yaml'), text);
      const loaded = await loadConfig(join(dir, 'etc', 'discovery.yaml'));
      assert.equal(loaded.server.tokenFile, join(dir, 'etc', 'secrets', 'token'));
      assert.equal(loaded.credentials[0]!.valueFile, join(dir, 'billing.txt'));
      assert.equal(loaded.signatures.keys[0]!.jwkFile, join(dir, 'etc', 'keys', 'k1.json'));
      const parsed = parseConfig(text, { baseDir: '/srv/a2a' });
      assert.equal(parsed.server.tokenFile, '/srv/a2a/secrets/token');
      assert.equal(parseConfig(`${AGENT}server: { tokenFile: /run/secrets/token }`, { baseDir: '/srv' }).server.tokenFile, '/run/secrets/token');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('an unreadable file is ERR_USAGE naming the file', async () => {
    await assert.rejects(loadConfig('/nonexistent/discovery.yaml'), (err) => {
      assert.ok(isDiscoveryError(err));
      assert.equal(err.code, 'ERR_USAGE');
      assert.match(err.message, /\/nonexistent\/discovery\.yaml: no such file/);
      return true;
    });
    await assert.rejects(loadConfig(tmpdir()), /it is a directory/);
  });
});

describe('the sections fit the stages that use them', () => {
  test('types: each section is assignable to the option type it configures', async () => {
    const c: DiscoveryConfig = await loadConfig(EXAMPLE);
    // Compile-time checks (tsc): these assignments are the contract.
    const health: HealthOptions = c.health;
    const loop: Pick<DiscoveryLoopOptions, 'cycleIntervalMs' | 'resyncIntervalMs' | 'startupTimeoutMs' | 'maxRemovalShare' | 'minPublishIntervalMs' | 'removalGraceMs' | 'staticEnterAfter'> = {
      ...c.loop,
      staticEnterAfter: c.health.staticEnterAfter,
    };
    const cache: Partial<CardCacheOptions> = {
      defaultTtlMs: c.cache.defaultTtlMs,
      minTtlMs: c.cache.minTtlMs,
      maxTtlMs: c.cache.maxTtlMs,
      maxStaleMs: c.cache.maxStaleMs,
      backoffBaseMs: c.cache.backoffBaseMs,
      backoffMaxMs: c.cache.backoffMaxMs,
      maxConcurrentFetches: c.cache.maxConcurrentFetches,
      maxFetchesPerOrigin: c.cache.maxFetchesPerOrigin,
    };
    const fetcher: Partial<CardFetcherOptions> = { maxBodyBytes: c.cache.maxBodyBytes, totalTimeoutMs: c.cache.totalTimeoutMs };
    const needs: readonly Need[] = c.needs;
    const vocabulary: readonly VocabularyEntry[] = c.vocabulary;
    const hints: readonly RouteHints[] = c.vocabulary;
    const tenant: TenantPolicy | undefined = c.policies.tenant;
    const select: Omit<SelectOptions, 'reviewed' | 'vocabulary'> = { needs, required: { streaming: c.policies.requireStreaming }, maxAgents: c.policies.maxAgents, ...(tenant && { tenant }) };
    const agents: readonly StaticAgentConfig[] = c.static;
    const mode: SignatureMode = c.signatures.mode;
    const root: RootKind = c.root.kind === 'model' ? { kind: 'model', model: c.root.model } : { kind: 'routed', hints, ...(c.root.fallback !== undefined && { fallback: c.root.fallback }) };
    const trees: Pick<TreeFactoryOptions, 'idleTimeoutMs' | 'maxSessions'> = { idleTimeoutMs: c.sessions.idleTimeoutMs, maxSessions: c.sessions.maxSessions };
    assert.ok(health && loop && cache && fetcher && select && agents && mode && root && trees && vocabulary);
  });

  test('runtime: the example builds the real allowlist, vocabulary and sources without a complaint', async () => {
    const c = await loadConfig(EXAMPLE);
    const policy = HostPolicy.from({ allow: c.allow, allowLoopback: c.allowLoopback, allowCidrs: c.allowCidrs });
    for (const agent of c.static) assert.equal(policy.check((agent.url ?? agent.cardUrl)!).allowed, true, agent.url);
    const vocabulary = new TagVocabulary(c.vocabulary);
    for (const need of c.needs) assert.ok(vocabulary.has(need.tag));
    assert.deepEqual(staticSource({ agents: c.static }).agents.map((a) => a.name), ['billing_agent', 'warranty_agent']);
    assert.equal(wellKnownSource(c.sources.wellKnown!).current().records[0]!.baseUrl, 'https://agents.partner.example.com/');
    assert.equal(policy.check('https://agents.partner.example.com/').allowed, true);
    assert.equal(policy.check(c.sources.registries[0]!.url).allowed, true);
    const source = kubernetesSource(c.sources.kubernetes!);
    await source.close();
  });
});
