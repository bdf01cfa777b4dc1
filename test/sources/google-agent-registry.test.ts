/**
 * The Google Cloud Agent Registry adapter, driven through ADK JS's own `AgentRegistry` client
 * (`listAgents`, `getAgentInfo`, `getConnectionUri`) against a loopback STAND-IN of the registry's
 * REST API. The stand-in is not Google's service (which cannot be reached from here): it answers
 * the published shapes of `projects.locations.agents.list` (`pageSize`, `pageToken`, `filter` →
 * `{ agents: [Agent], nextPageToken }`) and `projects.locations.agents.get` (`Agent`: `name`,
 * `agentId`, `displayName`, `version`, `protocols[{ type, protocolVersion, interfaces[{ url,
 * protocolBinding }] }]`, `skills`, `card { type: A2A_AGENT_CARD, content }`).
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo, Socket } from 'node:net';
import { googleAgentRegistryAdapter, registrySource, CatalogArtifacts, type RegistryClientAdapter } from '../../packages/core/src/sources/index.js';
import { HostPolicy, createCardFetcher, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { canonicalJson, sha256Hex } from '../../packages/core/src/card/index.js';
import { resolveEndpoints } from '../../packages/core/src/resolve/resolve-endpoints.js';
import { staticHeaders } from '../../packages/core/src/auth/index.js';
import { parseConfig, resolveSecrets } from '../../packages/core/src/config/index.js';
import { serviceOptionsFromConfig, startService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { cardFor } from '../helpers/cards.js';

type Agent = Record<string, unknown>;

interface StandIn {
  origin: string;
  /** The registry's agents, listed in this order. */
  agents: Agent[];
  /** Agents the list answers in a basic view (no protocols, no card): only `get` has them whole. */
  basic: Set<string>;
  /** Answer every request with this status instead (an outage). */
  down: number | undefined;
  /** Extra routes (a peer's card on the same server is never wanted: peers have their own). */
  requests: Array<{ path: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

const PARENT = 'projects/demo-project/locations/global';

/** A loopback stand-in of the Agent Registry REST API (v1alpha, the version ADK JS uses). */
async function startStandIn(): Promise<StandIn> {
  const sockets = new Set<Socket>();
  const state: Omit<StandIn, 'origin' | 'close'> = { agents: [], basic: new Set(), down: undefined, requests: [] };
  const json = (res: http.ServerResponse, status: number, body: unknown): void => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
  };
  const server = http.createServer((req, res) => {
    state.requests.push({ path: req.url ?? '', authorization: req.headers.authorization });
    if (state.down !== undefined) return json(res, state.down, { error: { code: state.down, message: 'unavailable', status: 'UNAVAILABLE' } });
    const url = new URL(req.url ?? '/', 'http://stand-in');
    if (req.method !== 'GET') return json(res, 405, { error: { code: 405 } });
    if (url.pathname === `/v1alpha/${PARENT}/agents`) {
      // The list method: pageSize (at most that many), pageToken (the offset this stand-in issued), filter.
      const size = Number(url.searchParams.get('pageSize') ?? '50');
      const start = Number(url.searchParams.get('pageToken') ?? '0');
      const filter = url.searchParams.get('filter');
      const matching = state.agents.filter((a) => filter === null || String(a['displayName']).includes(filter.replace(/^displayName:"?|"?$/g, '')));
      const page = matching.slice(start, start + size).map((a) => (state.basic.has(String(a['name'])) ? basicView(a) : a));
      const next = start + size < matching.length ? String(start + size) : undefined;
      return json(res, 200, { agents: page, ...(next !== undefined && { nextPageToken: next }) });
    }
    const found = state.agents.find((a) => url.pathname === `/v1alpha/${String(a['name'])}`);
    if (found !== undefined) return json(res, 200, found);
    return json(res, 404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(state, {
    origin: `http://127.0.0.1:${port}`,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  });
}

function basicView(a: Agent): Agent {
  const { protocols: _p, card: _c, ...rest } = a;
  return rest;
}

/** A registered agent in the published shape, reachable over A2A 1.0 (JSON-RPC) and 0.3 (HTTP+JSON). */
function registered(id: string, baseUrl: string, extra: Agent = {}): Agent {
  return {
    name: `${PARENT}/agents/${id}`,
    agentId: `urn:agent:demo-project:global:${id}`,
    displayName: `The ${id} agent`,
    description: `Does ${id}.`,
    version: '1.2.0',
    protocols: [
      { type: 'A2A_AGENT', protocolVersion: '1.0', interfaces: [{ url: baseUrl, protocolBinding: 'JSONRPC' }] },
      { type: 'A2A_AGENT', protocolVersion: '0.3.0', interfaces: [{ url: `${baseUrl}v03`, protocolBinding: 'HTTP_JSON' }] },
    ],
    skills: [{ id, name: id, description: `Does ${id}.`, tags: [id, 'demo'] }],
    createTime: '2026-11-30T10:00:00Z',
    updateTime: '2026-11-30T10:00:00Z',
    ...extra,
  };
}

describe('google-agent-registry adapter (ADK JS AgentRegistry) against a stand-in of the registry API', () => {
  let standIn: StandIn;
  let peer: http.Server;
  let peerOrigin: string;
  const peerRequests: Array<{ path: string; authorization: string | undefined }> = [];
  const closers: Array<{ close(): Promise<void> }> = [];
  const TOKEN = 'Bearer ya29.stand-in-token';

  const fetcherFor = (options: { credentials?: Parameters<typeof createCardFetcher>[0]['credentials'] } = {}): CardFetcher => {
    // The stand-in and the peer are allowlisted; 127.0.0.2 (an agent off the allowlist) is not.
    const fetcher = createCardFetcher({ policy: HostPolicy.from({ allow: [standIn.origin, peerOrigin], allowLoopback: true }), ...options });
    closers.push(fetcher);
    return fetcher;
  };
  const sourceWith = (fetcher: CardFetcher, adapter: RegistryClientAdapter, extra: Partial<Parameters<typeof registrySource>[0]> = {}) => {
    const source = registrySource({ id: 'gcp', url: standIn.origin, fetcher, adapter, ...extra });
    closers.push(source);
    return source;
  };

  before(async () => {
    standIn = await startStandIn();
    peer = http.createServer((req, res) => {
      peerRequests.push({ path: req.url ?? '', authorization: req.headers.authorization });
      const text = JSON.stringify(cardFor({ origin: peerOrigin }, 'billing'));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    });
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    peerOrigin = `http://localhost:${(peer.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    standIn.agents = [];
    standIn.basic.clear();
    standIn.down = undefined;
    standIn.requests.length = 0;
    peerRequests.length = 0;
  });
  after(async () => {
    await Promise.all(closers.map((c) => c.close()));
    peer.closeAllConnections();
    await new Promise<void>((resolve) => peer.close(() => resolve()));
    await standIn.close();
  });

  test('two pages of agents become endpoint records with their provenance, through ADK list and get', async () => {
    standIn.agents = [
      registered('billing', `${peerOrigin}/billing/`),
      registered('weather', `${peerOrigin}/weather/`),
      registered('travel', `${peerOrigin}/travel/`),
    ];
    standIn.basic.add(`${PARENT}/agents/travel`);
    const adapter = googleAgentRegistryAdapter({ project: 'demo-project', location: 'global', pageSize: 2, credentials: 'configured' });
    const state = await sourceWith(fetcherFor(), adapter).refresh();
    assert.equal(state.ok, true, state.error?.message);
    assert.deepEqual(
      standIn.requests.map((r) => r.path),
      [`/v1alpha/${PARENT}/agents?pageSize=2`, `/v1alpha/${PARENT}/agents?pageSize=2&pageToken=2`, `/v1alpha/${PARENT}/agents/travel`],
      "ADK's listAgents paged by nextPageToken; the agent listed without its interfaces read whole with ADK's getAgentInfo",
    );
    assert.deepEqual(
      state.records.map((r) => [r.name, r.baseUrl]),
      [
        ['billing', `${peerOrigin}/billing/`],
        ['weather', `${peerOrigin}/weather/`],
        ['travel', `${peerOrigin}/travel/`],
      ],
    );
    assert.deepEqual(state.records[0]!.metadata, {
      registry: 'google-agent-registry',
      tags: 'billing,demo',
      project: 'demo-project',
      location: 'global',
      resource: `${PARENT}/agents/billing`,
      displayName: 'The billing agent',
      version: '1.2.0',
      protocolVersions: '1.0,0.3.0',
      interfaces: `1.0 JSONRPC ${peerOrigin}/billing/; 0.3.0 HTTP_JSON ${peerOrigin}/billing/v03`,
    });
  });

  test("a stored card is served to the card cache inline, never requested from the agent's host", async () => {
    const card = cardFor({ origin: peerOrigin }, 'ledger');
    standIn.agents = [registered('ledger', `${peerOrigin}/ledger/`, { card: { type: 'A2A_AGENT_CARD', content: card } })];
    const fetcher = fetcherFor();
    const artifacts = new CatalogArtifacts();
    const adapter = googleAgentRegistryAdapter({ project: 'demo-project', location: 'global', credentials: 'configured' });
    const state = await sourceWith(fetcher, adapter, { artifacts }).refresh();
    assert.equal(state.ok, true, state.error?.message);
    const key = `${standIn.origin}/#card=ledger`;
    assert.equal(state.records[0]?.baseUrl, key);
    const policy = HostPolicy.from({ allow: [standIn.origin, peerOrigin], allowLoopback: true });
    const cache = new CardCache({ fetcher: artifacts.fetcher(fetcher), hostPolicy: policy, pins: artifacts, check: { allowLoopback: true } });
    closers.push(cache);
    const entry = await cache.get(key);
    assert.equal(entry.card.name, 'Agent ledger');
    assert.equal(entry.rawSha256, sha256Hex(canonicalJson(card)), 'the bytes are the RFC 8785 form of the stored card');
    assert.equal(peerRequests.length, 0, "the agent's host was not asked for its card");
    assert.equal(standIn.requests.length, 1, 'one list request carried the card');
  });

  test('an agent whose URL is off the allowlist is refused by the resolver; the others are admitted', async () => {
    standIn.agents = [registered('billing', `${peerOrigin}/billing/`), registered('rogue', 'https://rogue.example.net/a2a/')];
    const adapter = googleAgentRegistryAdapter({ project: 'demo-project', location: 'global', credentials: 'configured' });
    const state = await sourceWith(fetcherFor(), adapter).refresh();
    assert.equal(state.ok, true, state.error?.message);
    const { admitted, refused } = resolveEndpoints([state.records], HostPolicy.from({ allow: [standIn.origin, peerOrigin], allowLoopback: true }));
    assert.deepEqual(
      admitted.map((a) => a.records[0]!.name),
      ['billing'],
    );
    assert.equal(refused.length, 1);
    assert.equal(refused[0]!.record.name, 'rogue');
    assert.equal(refused[0]!.code, 'ERR_HOST_NOT_ALLOWED');
  });

  test('the stand-in down (503, then a redirect) keeps the last listing', async () => {
    standIn.agents = [registered('billing', `${peerOrigin}/billing/`)];
    const adapter = googleAgentRegistryAdapter({ project: 'demo-project', location: 'global', credentials: 'configured' });
    const source = sourceWith(fetcherFor(), adapter);
    const good = await source.refresh();
    assert.equal(good.ok, true, good.error?.message);
    standIn.down = 503;
    const down = await source.refresh();
    assert.equal(down.ok, false);
    assert.equal(down.error?.code, 'ERR_FETCH_STATUS');
    assert.deepEqual(down.records, good.records, 'the last listing is kept');
    standIn.down = 302;
    const redirected = await source.refresh();
    assert.equal(redirected.ok, false);
    assert.equal(redirected.error?.code, 'ERR_REDIRECT_REFUSED', 'the guarded connection follows no redirect');
    assert.deepEqual(redirected.records, good.records);
  });

  test("the credentials' Authorization header reaches the stand-in and nowhere else", async () => {
    standIn.agents = [registered('billing', `${peerOrigin}/billing/`)];
    // A configured credentials entry for the registry's origin, on the shared fetcher.
    const configured = fetcherFor({ credentials: staticHeaders({ origins: [standIn.origin], headers: { authorization: TOKEN } }) });
    const viaFetcher = await sourceWith(configured, googleAgentRegistryAdapter({ project: 'demo-project', location: 'global', credentials: 'configured' })).refresh();
    assert.equal(viaFetcher.ok, true, viaFetcher.error?.message);
    // PeerCredentials given to the adapter: asked through ADK's getAuthHeaders with the registry's origin.
    const plain = fetcherFor();
    const adapterCredentials = staticHeaders({ origins: [standIn.origin], headers: { authorization: TOKEN } });
    const viaAdapter = await sourceWith(plain, googleAgentRegistryAdapter({ project: 'demo-project', location: 'global', credentials: adapterCredentials })).refresh();
    assert.equal(viaAdapter.ok, true, viaAdapter.error?.message);
    assert.equal(standIn.requests.length, 2);
    assert.ok(standIn.requests.every((r) => r.authorization === TOKEN), 'both forms reached the stand-in');
    // The peer's card, fetched through the same fetchers, carries no Authorization.
    for (const f of [configured, plain]) {
      const res = await f.fetch(`${viaAdapter.records[0]!.baseUrl}.well-known/agent-card.json`);
      assert.equal(res.status, 200);
    }
    assert.equal(peerRequests.length, 2);
    assert.ok(peerRequests.every((r) => r.authorization === undefined), 'no Authorization reached the peer');
  });

  test("credentials: google uses ADK's application default credentials; a failure names no secret and sends nothing", async () => {
    standIn.agents = [registered('billing', `${peerOrigin}/billing/`)];
    const dir = await mkdtemp(join(tmpdir(), 'gcr-adc-'));
    const file = join(dir, 'adc.json');
    // A credentials file google-auth-library cannot use (no network is tried for it).
    await writeFile(file, JSON.stringify({ type: 'service_account', private_key: 'SECRET-KEY-MATERIAL', client_email: 'x@demo-project.iam.gserviceaccount.com', private_key_id: 'k1', project_id: 'demo-project', token_uri: 'http://127.0.0.2:9/token' }));
    const saved = process.env['GOOGLE_APPLICATION_CREDENTIALS'];
    process.env['GOOGLE_APPLICATION_CREDENTIALS'] = file;
    try {
      const state = await sourceWith(fetcherFor(), googleAgentRegistryAdapter({ project: 'demo-project', location: 'global' })).refresh();
      assert.equal(state.ok, false);
      assert.equal(state.error?.code, 'ERR_FETCH_NETWORK');
      assert.match(state.error!.message, /application default credentials/);
      assert.doesNotMatch(state.error!.message, /SECRET-KEY-MATERIAL/);
      assert.equal(state.error!.cause, undefined);
      assert.equal(standIn.requests.length, 0, 'nothing was sent without credentials');
    } finally {
      if (saved === undefined) delete process.env['GOOGLE_APPLICATION_CREDENTIALS'];
      else process.env['GOOGLE_APPLICATION_CREDENTIALS'] = saved;
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a filter and a page bound: ADK sends the filter; more pages than maxPages fail the refresh', async () => {
    standIn.agents = ['a1', 'a2', 'a3'].map((id) => registered(id, `${peerOrigin}/${id}/`));
    const adapter = googleAgentRegistryAdapter({ project: 'demo-project', location: 'global', pageSize: 1, filter: 'displayName:"a"', credentials: 'configured' });
    const state = await sourceWith(fetcherFor(), adapter, { maxPages: 2 }).refresh();
    assert.equal(state.ok, false);
    assert.equal(state.error?.code, 'ERR_CARD_TOO_LARGE');
    assert.match(standIn.requests[0]!.path, /filter=displayName%3A%22a%22/);
    assert.equal(standIn.requests.length, 2);
    const entries = await sourceWith(fetcherFor(), googleAgentRegistryAdapter({ project: 'demo-project', location: 'global', pageSize: 2, credentials: 'configured' }), { maxEntries: 2 }).refresh();
    assert.equal(entries.error?.code, 'ERR_CARD_TOO_LARGE');
  });

  test('configuration: registry.kind google-agent-registry, its defaults and its checks', () => {
    const config = parseConfig(
      [
        'allow: ["https://agentregistry.googleapis.com", "https://*.run.app"]',
        'sources:',
        '  registries:',
        '    - id: gcp',
        '      registry: { kind: google-agent-registry, project: my-project, location: us-central1, filter: \'displayName:"billing"\' }',
      ].join('\n'),
    );
    assert.deepEqual(config.sources.registries[0], {
      id: 'gcp',
      url: 'https://agentregistry.googleapis.com',
      pollIntervalMs: 300_000,
      maxPages: 20,
      maxEntries: 5_000,
      registry: { kind: 'google-agent-registry', project: 'my-project', location: 'us-central1', filter: 'displayName:"billing"', pageSize: 50, credentials: 'google' },
    });
    assert.throws(
      () => parseConfig(['allow: ["https://a.example.com"]', 'sources:', '  registries:', '    - id: gcp', '      registry: { kind: google-agent-registry, project: my-project, location: global }'].join('\n')),
      (err: Error) => /agentregistry\.googleapis\.com/.test(err.message) && /allowlist/.test(err.message),
      'the default registry origin must be allowlisted',
    );
    assert.throws(
      () => parseConfig(['allow: ["https://a.example.com"]', 'sources:', '  registries:', '    - id: cat'].join('\n')),
      /catalog URL is required/,
    );
    assert.throws(
      () => parseConfig(['allow: ["https://agentregistry.googleapis.com"]', 'sources:', '  registries:', '    - id: gcp', '      registry: { kind: google-agent-registry, project: my-project, location: global, credentials: configured }'].join('\n')),
      /registry\.credentials.*no credentials entry has the origin https:\/\/agentregistry\.googleapis\.com/,
    );
  });
});

describe('configuration: credentials: configured needs a credentials entry for the registry origin, whatever the URL path', () => {
  const yaml = (url: string, credentials: string[]): string =>
    [
      'allow: ["https://agentregistry.googleapis.com", "https://other.example.com"]',
      ...(credentials.length > 0 ? ['credentials:', ...credentials.map((origin) => `  - { origin: "${origin}", prefix: "Bearer ", valueEnv: GCR_TOKEN }`)] : []),
      'sources:',
      '  registries:',
      '    - id: gcp',
      `      url: "${url}"`,
      '      registry: { kind: google-agent-registry, project: my-project, location: global, credentials: configured }',
    ].join('\n');

  test('a URL with a path and no credentials entry for its origin is refused', () => {
    for (const url of ['https://agentregistry.googleapis.com/v1alpha', 'https://agentregistry.googleapis.com/v1alpha/', 'https://AgentRegistry.googleapis.com:443/v1alpha']) {
      assert.throws(
        () => parseConfig(yaml(url, [])),
        (err: Error & { problems?: Array<{ path: string; message: string }> }) =>
          err.problems?.some((p) => p.path === 'sources.registries[0].registry.credentials' && /no credentials entry has the origin https:\/\/agentregistry\.googleapis\.com:/.test(p.message)) === true,
        url,
      );
    }
    assert.throws(() => parseConfig(yaml('https://agentregistry.googleapis.com/v1alpha', ['https://other.example.com'])), /no credentials entry has the origin https:\/\/agentregistry\.googleapis\.com/);
  });

  test('a credentials entry for the origin is enough, with or without a path', () => {
    for (const url of ['https://agentregistry.googleapis.com', 'https://agentregistry.googleapis.com/v1alpha']) {
      const config = parseConfig(yaml(url, ['https://agentregistry.googleapis.com']));
      assert.equal(config.sources.registries[0]?.url, url);
    }
  });
});

describe('serve: a discovery.yaml with a Google Agent Registry lists agents from the stand-in through ADK', () => {
  test('one agent by its stored card, one by its A2A interface; the token from a credentials entry reaches only the registry', async () => {
    const standIn = await startStandIn();
    const peerRequests: Array<string | undefined> = [];
    const peer = http.createServer((req, res) => {
      peerRequests.push(req.headers.authorization);
      const text = JSON.stringify(cardFor({ origin: peerOrigin }, 'warranty', { skills: [{ id: 'claims', name: 'Claims', description: 'Opens claims.', tags: ['warranty'] }] }));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    });
    await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
    const peerOrigin = `http://localhost:${(peer.address() as AddressInfo).port}`;
    const billingCard = cardFor({ origin: peerOrigin }, 'billing', { skills: [{ id: 'invoices', name: 'Invoices', description: 'Answers invoices.', tags: ['billing'] }] });
    standIn.agents = [
      registered('billing', `${peerOrigin}/billing/`, { card: { type: 'A2A_AGENT_CARD', content: billingCard } }),
      registered('warranty', `${peerOrigin}/warranty/`),
    ];
    const config = parseConfig(
      [
        `allow: ["${standIn.origin}", "${peerOrigin}"]`,
        'allowLoopback: true',
        'store: memory',
        'vocabulary: [{ tag: billing, description: Invoices. }, { tag: warranty, description: Warranty claims. }]',
        'needs: [{ tag: billing }, { tag: warranty }]',
        'credentials:',
        `  - { origin: "${standIn.origin}", prefix: "Bearer ", valueEnv: GCR_TOKEN }`,
        'sources:',
        '  registries:',
        `    - id: gcp`,
        `      url: "${standIn.origin}"`,
        '      registry: { kind: google-agent-registry, project: demo-project, location: global, pageSize: 1, credentials: configured }',
      ].join('\n'),
    );
    const secrets = await resolveSecrets(config, { GCR_TOKEN: 'ya29.from-the-environment' });
    const s = await startService({ ...serviceOptionsFromConfig(config, secrets), port: 0, health: { enterAfter: 1 }, logger: createLogger({ level: 'silent' }) });
    try {
      const snapshot = s.loop.current();
      assert.ok(snapshot, 'a snapshot is published');
      assert.deepEqual(
        snapshot.agents.map((a) => [a.tags.join(','), a.baseUrl, a.sources.join(',')]).sort(),
        [
          ['billing', `${standIn.origin}/#card=billing`, 'gcp'],
          ['warranty', `${peerOrigin}/warranty/`, 'gcp'],
        ],
      );
      assert.deepEqual(
        standIn.requests.map((r) => r.path),
        [`/v1alpha/${PARENT}/agents?pageSize=1`, `/v1alpha/${PARENT}/agents?pageSize=1&pageToken=1`],
      );
      assert.ok(standIn.requests.every((r) => r.authorization === 'Bearer ya29.from-the-environment'));
      assert.ok(peerRequests.length >= 1, "the interface agent's card was fetched from its host");
      assert.ok(peerRequests.every((a) => a === undefined), 'the peer got no Authorization');
    } finally {
      await s.close();
      peer.closeAllConnections();
      await new Promise<void>((resolve) => peer.close(() => resolve()));
      await standIn.close();
    }
  });
});
