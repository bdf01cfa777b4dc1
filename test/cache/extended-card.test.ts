/**
 * Authenticated extended cards end to end, against real a2a-js servers on loopback: @a2a-js/sdk
 * 1.3.0 (`GetExtendedAgentCard`, `DefaultRequestHandler`'s extended card provider) and 0.3.14
 * (`agent/getAuthenticatedExtendedCard`). Each serves a public card whose skill no need asks for,
 * and, only to a caller with the right bearer token, an extended card with a `billing` skill.
 * Through the discovery loop: the snapshot holds the extended card for that identity and the
 * billing tag selects the agent; without credentials the public card is used; a change of the
 * extended card changes the digest; a 401 or 500 keeps the last good one; the credential never
 * reaches another origin.
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AgentCard as AgentCard13 } from '@a2a-js/sdk';
import * as sdk13 from '@a2a-js/sdk/server';
import * as sdk13Express from '@a2a-js/sdk/server/express';
import type { AgentCard as AgentCard0314 } from 'a2a-sdk-0314';
import * as sdk0314 from 'a2a-sdk-0314/server';
import * as sdk0314Express from 'a2a-sdk-0314/server/express';
import { CardCache, effectiveEntry } from '../../packages/core/src/cache/index.js';
import type { CardStore } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { OriginCredentials } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import { entryFromJson, entryToJson } from '../../packages/store/src/serialize.js';
import { startService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';

const TOKEN = 'xt-secret-7f3a9c1d';

interface Seen {
  method: string;
  path: string;
  rpc: string | undefined;
  version: string | undefined;
  authorization: string | undefined;
}

interface Peer {
  readonly label: string;
  readonly baseUrl: string;
  readonly origin: string;
  /** Every request received (card fetches included). */
  readonly seen: Seen[];
  /** Serve another extended card (a redeploy). */
  setExtraSkill(id: string): void;
  /** Answer every JSON-RPC POST with this HTTP status (undefined: normally). */
  failWith(status: number | undefined): void;
  /** Change the extended card before it is served (1.3.0 only): a rename, a retag. */
  reshape(change: ((card: ReturnType<typeof cardShape>) => void) | undefined): void;
  close(): Promise<void>;
}

const sdkUser = (name: string) => ({ isAuthenticated: true, userName: name });

async function listen(app: express.Application): Promise<{ server: Server; port: number }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return { server, port: (server.address() as AddressInfo).port };
}

function frame(seen: Seen[], fail: () => number | undefined): express.RequestHandler[] {
  return [
    express.json(),
    (req, res, next) => {
      const body = req.body as { method?: unknown } | undefined;
      const v = req.headers['a2a-version'];
      seen.push({ method: req.method, path: req.path, rpc: typeof body?.method === 'string' ? body.method : undefined, version: Array.isArray(v) ? v[0] : v, authorization: req.headers.authorization });
      const status = fail();
      if (req.method === 'POST' && status !== undefined) res.status(status).json({ error: 'refused' });
      else next();
    },
  ];
}

const userBuilder = async (req: express.Request) => (req.headers.authorization === `Bearer ${TOKEN}` ? sdkUser('billing-bot') : new sdk13.UnauthenticatedUser());

function skills(extra: string | undefined): Array<Record<string, unknown>> {
  const list: Array<Record<string, unknown>> = [{ id: 'general', name: 'General', description: 'General questions.', tags: ['general'] }];
  if (extra !== undefined) list.push({ id: extra, name: 'Billing', description: 'Billing disputes.', tags: ['billing'] });
  return list;
}

/** The JSON shape of start13's cards (for `reshape`). */
function cardShape() {
  return { name: '', skills: [] as Array<Record<string, unknown>> };
}

const noExecutor = { execute: async (_c: unknown, bus: { finished(): void }) => bus.finished(), cancelTask: async () => undefined };

/** @a2a-js/sdk 1.3.0: protocol 1.0, `extendedAgentCard: true`, the extended card from `DefaultRequestHandler`'s provider. */
async function start13(options: { interfaceOrigin?: string; rest?: boolean; extendedInterface?: string; echoAuthorization?: boolean } = {}): Promise<Peer> {
  const seen: Seen[] = [];
  let status: number | undefined;
  let extra = 'billing-disputes';
  let reshape: ((card: ReturnType<typeof cardShape>) => void) | undefined;
  const app = express();
  app.use(frame(seen, () => status));
  const { server, port } = await listen(app);
  const origin = `http://127.0.0.1:${port}`;
  const card = (withExtra: string | undefined) => ({
    name: 'Ledger Agent',
    description: 'Answers ledger questions.',
    version: '1.0.0',
    supportedInterfaces: [
      options.rest === true
        ? { url: `${origin}/rest`, protocolBinding: 'HTTP+JSON', protocolVersion: '1.0' }
        : { url: `${options.interfaceOrigin ?? origin}/`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    ],
    capabilities: { streaming: false, extendedAgentCard: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: skills(withExtra),
  });
  const handler = new sdk13.DefaultRequestHandler(AgentCard13.fromJSON(card(undefined)), new sdk13.InMemoryTaskStore(), noExecutor as never, undefined, undefined, undefined, async (ctx) => {
    if (ctx.user?.isAuthenticated !== true) throw new Error('authentication required');
    const extended = card(extra);
    if (options.extendedInterface !== undefined) extended.supportedInterfaces.unshift({ url: options.extendedInterface, protocolBinding: 'JSONRPC', protocolVersion: '1.0' });
    reshape?.(extended);
    return AgentCard13.fromJSON(extended);
  });
  app.use('/.well-known/agent-card.json', sdk13Express.agentCardHandler({ agentCardProvider: async () => card(undefined) as unknown as AgentCard13, cache: { maxAge: 60 } }));
  // A peer whose JSON-RPC error repeats the credential it received.
  if (options.echoAuthorization === true) app.post('/', (req, res) => res.json({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: `token ${req.headers.authorization ?? ''} is not valid here` } }));
  if (options.rest === true) app.use('/rest', sdk13Express.restHandler({ requestHandler: handler, userBuilder }));
  else app.use(sdk13Express.jsonRpcHandler({ requestHandler: handler, userBuilder }));
  return {
    label: '@a2a-js/sdk 1.3.0',
    baseUrl: `${origin}/`,
    origin,
    seen,
    setExtraSkill: (id) => (extra = id),
    failWith: (s) => (status = s),
    reshape: (change) => (reshape = change),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** @a2a-js/sdk 0.3.14: protocol 0.3, `supportsAuthenticatedExtendedCard: true`, `agent/getAuthenticatedExtendedCard`. */
async function start0314(): Promise<Peer> {
  const seen: Seen[] = [];
  let status: number | undefined;
  let extra = 'billing-disputes';
  const app = express();
  app.use(frame(seen, () => status));
  const { server, port } = await listen(app);
  const origin = `http://127.0.0.1:${port}`;
  const card = (withExtra: string | undefined): AgentCard0314 => ({
    name: 'Ledger Agent',
    description: 'Answers ledger questions.',
    url: `${origin}/`,
    version: '1.0.0',
    protocolVersion: '0.3.0',
    capabilities: { streaming: false },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: skills(withExtra) as unknown as AgentCard0314['skills'],
    supportsAuthenticatedExtendedCard: true,
  });
  const handler = new sdk0314.DefaultRequestHandler(card(undefined), new sdk0314.InMemoryTaskStore(), noExecutor as never, undefined, undefined, undefined, async (ctx) => {
    if (ctx?.user?.isAuthenticated !== true) throw new Error('authentication required');
    return card(extra);
  });
  app.use('/.well-known/agent-card.json', sdk0314Express.agentCardHandler({ agentCardProvider: handler }));
  app.use(sdk0314Express.jsonRpcHandler({ requestHandler: handler, userBuilder: userBuilder as never }));
  return {
    label: '@a2a-js/sdk 0.3.14',
    baseUrl: `${origin}/`,
    origin,
    seen,
    setExtraSkill: (id) => (extra = id),
    failWith: (s) => (status = s),
    reshape: () => {
      throw new Error('reshape: the 1.3.0 peer only');
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

const peers: Peer[] = [];
after(async () => {
  await Promise.all(peers.map((p) => p.close()));
});

/** The discovery loop over `peers`, with static bearer credentials for `credentialed` origins only. */
function harness(endpoints: Peer[], credentialed: Peer[], store?: CardStore) {
  const clock = new VirtualClock();
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const allowed = new Set(credentialed.map((p) => p.origin));
  const credentials: OriginCredentials = (origin) => (allowed.has(origin) ? { authorization: `Bearer ${TOKEN}` } : undefined);
  const policy = HostPolicy.from({ allow: endpoints.map((p) => p.origin), allowLoopback: true });
  const fetcher = createCardFetcher({ policy, totalTimeoutMs: 5_000, credentials });
  const cache = new CardCache({ fetcher, hostPolicy: policy, clock, events: stream, random: () => 0, check: { allowLoopback: true }, extendedCards: { credentials }, ...(store && { store }) });
  const loop = new DiscoveryLoop({
    sources: [staticSource({ id: 'config', agents: endpoints.map((p, i) => ({ name: `ledger${i}`, url: p.baseUrl, description: 'Reviewed: ledger and billing.', tags: ['billing'] })) })],
    hostPolicy: policy,
    cache,
    select: {
      needs: [{ tag: 'billing' }],
      vocabulary: new TagVocabulary([
        { tag: 'billing', description: 'Billing.' },
        { tag: 'general', description: 'General.' },
      ]),
    },
    clock,
    events: stream,
    cycleIntervalMs: 86_400_000,
    resyncIntervalMs: 86_400_000,
  });
  return {
    loop,
    cache,
    clock,
    events,
    agent: (i = 0) => loop.current()?.agents.find((a) => a.localName === `ledger${i}`),
    stop: async () => {
      await loop.stop();
      await cache.close();
      await fetcher.close();
    },
  };
}

const extendedCalls = (p: Peer) => p.seen.filter((s) => s.rpc === 'GetExtendedAgentCard' || s.rpc === 'agent/getAuthenticatedExtendedCard');

for (const [name, start, rpc, version] of [
  ['@a2a-js/sdk 1.3.0', start13, 'GetExtendedAgentCard', '1.0'],
  ['@a2a-js/sdk 0.3.14', start0314, 'agent/getAuthenticatedExtendedCard', '0.3'],
] as const) {
  describe(`extended cards from ${name}`, () => {
    test('with credentials the snapshot holds the extended card for that identity, and its billing skill selects the agent', async () => {
      const peer = await start();
      peers.push(peer);
      const h = harness([peer], [peer]);
      try {
        await h.loop.start();
        const agent = h.agent();
        assert.ok(agent, 'the agent is selected through the extended card');
        assert.equal(agent.cardKind, 'extended');
        assert.equal(agent.identity, `static authorization header for ${peer.origin}`);
        assert.deepEqual(agent.tags, ['billing']);
        assert.ok(agent.card.skills.some((s) => s.id === 'billing-disputes'));
        const calls = extendedCalls(peer);
        assert.equal(calls.length, 1);
        assert.equal(calls[0]!.rpc, rpc);
        assert.equal(calls[0]!.version, version);
        assert.equal(calls[0]!.authorization, `Bearer ${TOKEN}`);
        const [view] = await h.loop.status();
        assert.equal(view!.cache?.cardKind, 'extended');
        assert.equal(view!.cache?.identity, `static authorization header for ${peer.origin}`);
        // The public card stays what the cache's entry holds; the effective one is the extended card.
        const entry = await h.cache.get(peer.baseUrl);
        assert.ok(!entry.card.skills.some((s) => s.id === 'billing-disputes'));
        assert.ok(effectiveEntry(entry).card.skills.some((s) => s.id === 'billing-disputes'));
      } finally {
        await h.stop();
      }
    });

    test('without credentials the public card is used: nothing is asked and the agent does not fit', async () => {
      const peer = await start();
      peers.push(peer);
      const h = harness([peer], []);
      try {
        await h.loop.start();
        assert.equal(h.agent(), undefined);
        assert.equal(extendedCalls(peer).length, 0);
        assert.ok(peer.seen.every((s) => s.authorization === undefined));
        const [view] = await h.loop.status();
        assert.equal(view!.cache?.cardKind, 'public');
        assert.equal(view!.verdict?.verdict, 'unsuitable');
      } finally {
        await h.stop();
      }
    });

    test('a changed extended card changes the digest on the public card\'s revalidation; a 401 or 500 keeps the last good one', async () => {
      const peer = await start();
      peers.push(peer);
      const h = harness([peer], [peer]);
      try {
        await h.loop.start();
        const first = h.loop.current()!;
        // The public card is fresh (max-age 60 for 1.3.0, the default 300 s for 0.3.14): no extended call before it is revalidated.
        peer.setExtraSkill('billing-refunds');
        await h.loop.refreshNow();
        assert.equal(h.loop.current()!.digest, first.digest);
        assert.equal(extendedCalls(peer).length, 1);
        await h.clock.advance(301_000);
        await h.loop.refreshNow();
        const second = h.loop.current()!;
        assert.notEqual(second.digest, first.digest);
        assert.ok(h.agent()!.card.skills.some((s) => s.id === 'billing-refunds'));
        assert.equal(extendedCalls(peer).length, 2);

        for (const status of [401, 500]) {
          peer.failWith(status);
          await h.clock.advance(301_000);
          await h.loop.refreshNow();
          assert.equal(h.loop.current()!.digest, second.digest, `HTTP ${status}: the last good extended card stays`);
          assert.equal(h.agent()!.cardKind, 'extended');
          const entry = await h.cache.peek(peer.baseUrl);
          assert.equal(entry!.extended?.lastError?.status, status);
          assert.match(entry!.extended!.lastError!.message, new RegExp(`${peer.origin}/ \\(${rpc.replace('/', '\\/')}\\) answered HTTP ${status}`));
          const [view] = await h.loop.status();
          assert.equal(view!.cache?.extendedError?.status, status);
        }
        // One alert while the failure lasts (edge-triggered), naming the URL and the reason.
        const alerts = h.events.filter((e) => e.type === 'alert' && e.kind === 'extended-card');
        assert.equal(alerts.length, 1);
        assert.ok(alerts[0]!.type === 'alert' && alerts[0]!.message.includes(`${peer.origin}/ (${rpc}) answered HTTP 401`) && alerts[0]!.message.includes('the last good extended card stays in use'));
        // No event, entry error or view carries the credential.
        assert.ok(!JSON.stringify(h.events).includes(TOKEN));
        assert.ok(!JSON.stringify(await h.loop.status()).includes(TOKEN));
        peer.failWith(undefined);
        await h.clock.advance(301_000);
        await h.loop.refreshNow();
        assert.equal((await h.cache.peek(peer.baseUrl))!.extended?.lastError, undefined);
        for (let i = 0; i < 3; i++) await h.loop.refreshNow();
        assert.ok(h.events.some((e) => e.type === 'alert.resolved' && e.kind === 'extended-card'));
      } finally {
        await h.stop();
      }
    });
  });
}

describe('extended cards: fallback, other origins, persistence', () => {
  test('over HTTP+JSON (@a2a-js/sdk 1.3.0 restHandler): GET {url}/extendedAgentCard with A2A-Version 1.0', async () => {
    const peer = await start13({ rest: true });
    peers.push(peer);
    const h = harness([peer], [peer]);
    try {
      await h.loop.start();
      assert.equal(h.agent()?.cardKind, 'extended');
      const calls = peer.seen.filter((s) => s.path === '/rest/extendedAgentCard');
      assert.equal(calls.length, 1);
      assert.equal(calls[0]!.method, 'GET');
      assert.equal(calls[0]!.version, '1.0');
      assert.equal(calls[0]!.authorization, `Bearer ${TOKEN}`);
    } finally {
      await h.stop();
    }
  });


  test('a failing extended call with no good card ever leaves the public card in use, and says why', async () => {
    const peer = await start13();
    peers.push(peer);
    peer.failWith(500);
    const h = harness([peer], [peer]);
    try {
      await h.loop.start();
      assert.equal(h.agent(), undefined);
      const [view] = await h.loop.status();
      assert.equal(view!.cache?.cardKind, 'public');
      assert.equal(view!.cache?.extendedError?.status, 500);
      const alert = h.events.find((e) => e.type === 'alert' && e.kind === 'extended-card');
      assert.ok(alert?.type === 'alert' && alert.message.includes('the public card is used') && alert.message.includes(`${peer.origin}/`));
    } finally {
      await h.stop();
    }
  });

  test('an extended card is checked like a public card: one naming an interface outside the allowlist is refused', async () => {
    const peer = await start13({ extendedInterface: 'https://elsewhere.example.com/a2a' });
    peers.push(peer);
    const h = harness([peer], [peer]);
    try {
      await h.loop.start();
      assert.equal(h.agent(), undefined);
      const entry = (await h.cache.peek(peer.baseUrl))!;
      assert.equal(entry.extended?.accepted, undefined);
      assert.equal(entry.extended?.lastError?.code, 'ERR_HOST_NOT_ALLOWED');
      assert.match(entry.extended!.lastError!.message, /elsewhere\.example\.com/);
    } finally {
      await h.stop();
    }
  });

  test('a JSON-RPC error that repeats the credential is reported without it', async () => {
    const peer = await start13({ echoAuthorization: true });
    peers.push(peer);
    const h = harness([peer], [peer]);
    try {
      await h.loop.start();
      const entry = (await h.cache.peek(peer.baseUrl))!;
      assert.match(entry.extended!.lastError!.message, /answered JSON-RPC error -32001: "token \[redacted\] is not valid here"/);
      assert.ok(!JSON.stringify(h.events).includes(TOKEN));
      assert.ok(!JSON.stringify(await h.loop.status()).includes(TOKEN));
    } finally {
      await h.stop();
    }
  });

  test('the credential is never sent to another origin: a card whose interface is elsewhere, and a peer without credentials', async () => {
    const elsewhere = await start13();
    const pointing = await start13({ interfaceOrigin: elsewhere.origin });
    peers.push(elsewhere, pointing);
    // Credentials for `pointing`'s origin only; its card's interface is on `elsewhere`'s origin.
    const h = harness([pointing, elsewhere], [pointing]);
    try {
      await h.loop.start();
      assert.equal(extendedCalls(pointing).length, 0);
      assert.equal(extendedCalls(elsewhere).length, 0);
      assert.ok(elsewhere.seen.length > 0 && elsewhere.seen.every((s) => s.authorization === undefined));
      assert.deepEqual(h.loop.current()!.agents, []);
    } finally {
      await h.stop();
    }
  });

  test('the extended card is persisted with its entry and used again after a restart', async () => {
    const peer = await start13();
    peers.push(peer);
    const h = harness([peer], [peer]);
    try {
      await h.loop.start();
      const entry = (await h.cache.peek(peer.baseUrl))!;
      const loaded = entryFromJson(entryToJson(entry, h.clock), h.clock);
      assert.equal(loaded.extended?.identity, entry.extended?.identity);
      assert.ok(Object.isFrozen(loaded.extended!.accepted!.card));
      assert.equal(effectiveEntry(loaded).canonicalSha256, entry.extended!.accepted!.canonicalSha256);
      assert.ok(!entryToJson(entry, h.clock).includes(TOKEN));
    } finally {
      await h.stop();
    }
  });
});

describe('extended cards that rename or retag the agent (issue 38)', () => {
  const differs = (events: DiscoveryEvent[]) => events.filter((e): e is Extract<DiscoveryEvent, { type: 'alert' }> => e.type === 'alert' && e.kind === 'extended-card-differs');

  test('an extended card that only adds a skill is adopted, and one alert names the skill and tag it adds', async () => {
    const peer = await start13();
    peers.push(peer);
    const h = harness([peer], [peer]);
    try {
      await h.loop.start();
      assert.equal(h.agent()?.cardKind, 'extended');
      const [view] = await h.loop.status();
      assert.deepEqual(view!.cache?.extendedChange, { tagsAdded: ['billing'], tagsRemoved: [], skillsAdded: ['billing-disputes'], skillsRemoved: [], skillsRetagged: [], adopted: true });
      const alerts = differs(h.events);
      assert.equal(alerts.length, 1);
      assert.equal(alerts[0]!.endpoint, peer.baseUrl);
      assert.equal(
        alerts[0]!.message,
        `extended card of ${peer.baseUrl} (agent "Ledger Agent") for static authorization header for ${peer.origin} differs from its public card: tags added: "billing"; skills added: "billing-disputes"; adopted: it only adds or removes skills`,
      );
      // A lasting condition: raised once, not every cycle.
      for (let i = 0; i < 3; i++) await h.loop.refreshNow();
      assert.equal(differs(h.events).length, 1);
    } finally {
      await h.stop();
    }
  });

  test('an extended card that renames the agent ("Official Payments Agent") and retags a skill is not adopted: the public card is used, an alert says which agent and what changed, and the endpoint view shows it', async () => {
    const peer = await start13();
    peers.push(peer);
    peer.reshape((card) => {
      card.name = 'Official Payments Agent';
      card.skills[0]!['tags'] = ['payments'];
    });
    const h = harness([peer], [peer]);
    try {
      await h.loop.start();
      assert.equal(extendedCalls(peer).length, 1);
      // The extended card was fetched and accepted by the checks, but its identity is not adopted.
      const entry = (await h.cache.peek(peer.baseUrl))!;
      assert.equal(entry.extended?.accepted?.card.name, 'Official Payments Agent');
      assert.equal(effectiveEntry(entry), entry);
      // Not selected through the extended card's billing skill: the public card has none.
      assert.equal(h.agent(), undefined);
      const [view] = await h.loop.status();
      assert.equal(view!.cache?.cardKind, 'public');
      assert.deepEqual(view!.cache?.extendedChange, {
        name: { from: 'Ledger Agent', to: 'Official Payments Agent' },
        tagsAdded: ['billing', 'payments'],
        tagsRemoved: ['general'],
        skillsAdded: ['billing-disputes'],
        skillsRemoved: [],
        skillsRetagged: ['general'],
        adopted: false,
      });
      assert.equal(view!.verdict?.verdict, 'unsuitable');
      const alerts = differs(h.events);
      assert.equal(alerts.length, 1);
      assert.equal(alerts[0]!.endpoint, peer.baseUrl);
      assert.equal(
        alerts[0]!.message,
        `extended card of ${peer.baseUrl} (agent "Ledger Agent") for static authorization header for ${peer.origin} differs from its public card: name from "Ledger Agent" to "Official Payments Agent"; tags added: "billing", "payments"; tags removed: "general"; skills added: "billing-disputes"; skills retagged: "general"; not adopted: the public card stays in use for routing, naming and snapshots (an extended card may add detail, never rename the agent)`,
      );
      assert.equal(alerts[0]!.detail?.['identity'], `static authorization header for ${peer.origin}`);
    } finally {
      await h.stop();
    }
  });

  test('an adopted extended card that later renames the agent: a new alert, and the snapshot goes back to the public card', async () => {
    const peer = await start13();
    peers.push(peer);
    const h = harness([peer], [peer]);
    try {
      await h.loop.start();
      assert.equal(h.agent()?.cardKind, 'extended');
      assert.equal(differs(h.events).length, 1);
      peer.reshape((card) => {
        card.name = 'Official Payments Agent';
      });
      await h.clock.advance(301_000);
      await h.loop.refreshNow();
      assert.equal(extendedCalls(peer).length, 2);
      const alerts = differs(h.events);
      assert.equal(alerts.length, 2);
      assert.match(alerts[1]!.message, /name from "Ledger Agent" to "Official Payments Agent"; tags added: "billing"; skills added: "billing-disputes"; not adopted/);
      // The public card is in use again: no agent is selected through the renamed card, none is published under its name.
      assert.equal(h.agent(), undefined);
      assert.ok(!JSON.stringify(h.loop.current()).includes('Official Payments Agent'));
      const [view] = await h.loop.status();
      assert.equal(view!.cache?.cardKind, 'public');
      assert.equal(view!.cache?.extendedChange?.adopted, false);
    } finally {
      await h.stop();
    }
  });

  test('a retag alone (a skill the public card declares, with other tags) is not adopted either', async () => {
    const peer = await start13();
    peers.push(peer);
    peer.reshape((card) => {
      card.skills[0]!['tags'] = ['general', 'payments'];
    });
    const h = harness([peer], [peer]);
    try {
      await h.loop.start();
      const [view] = await h.loop.status();
      assert.equal(view!.cache?.cardKind, 'public');
      assert.deepEqual(view!.cache?.extendedChange, { tagsAdded: ['billing', 'payments'], tagsRemoved: [], skillsAdded: ['billing-disputes'], skillsRemoved: [], skillsRetagged: ['general'], adopted: false });
      assert.match(differs(h.events)[0]!.message, /skills retagged: "general"; not adopted: .* never retag its skills\)$/);
    } finally {
      await h.stop();
    }
  });

  test('an extended card the same as the public card in name, skills and tags raises nothing', async () => {
    const peer = await start13();
    peers.push(peer);
    peer.reshape((card) => {
      card.skills.splice(1);
    });
    const h = harness([peer], [peer]);
    try {
      await h.loop.start();
      const [view] = await h.loop.status();
      assert.equal(view!.cache?.extendedChange, undefined);
      assert.equal(differs(h.events).length, 0);
    } finally {
      await h.stop();
    }
  });
});

describe('extended cards in the service', () => {
  test('the service asks with its peer credentials: /api/snapshot and /api/endpoints say extended and the identity, never the token', async () => {
    const peer = await start13();
    peers.push(peer);
    const service = await startService({
      port: 0,
      policy: { allow: [peer.origin], allowLoopback: true },
      credentials: (origin) => (origin === peer.origin ? { authorization: `Bearer ${TOKEN}` } : undefined),
      vocabulary: [
        { tag: 'billing', description: 'Billing.' },
        { tag: 'general', description: 'General.' },
      ],
      needs: [{ tag: 'billing' }],
      static: [{ name: 'ledger', url: peer.baseUrl, description: 'Reviewed: ledger and billing.', tags: ['billing'] }],
      loop: { cycleIntervalMs: 600_000 },
      logger: createLogger({ level: 'silent' }),
    });
    try {
      type Agent = { localName: string; cardKind: string; identity?: string; card: { skills: Array<{ id: string }> } };
      let agents: Agent[] = [];
      for (let i = 0; i < 50 && agents.length === 0; i++) {
        const res = await fetch(`${service.url}/api/snapshot`);
        if (res.ok) agents = ((await res.json()) as { agents: Agent[] }).agents;
        else await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(agents.length, 1);
      assert.equal(agents[0]!.cardKind, 'extended');
      assert.equal(agents[0]!.identity, `static authorization header for ${peer.origin}`);
      assert.ok(agents[0]!.card.skills.some((s) => s.id === 'billing-disputes'));
      const endpoints = await (await fetch(`${service.url}/api/endpoints`)).text();
      assert.match(endpoints, /"cardKind":"extended"/);
      assert.match(endpoints, /"extendedChange":\{"tagsAdded":\["billing"\],"tagsRemoved":\[\],"skillsAdded":\["billing-disputes"\],"skillsRemoved":\[\],"skillsRetagged":\[\],"adopted":true\}/);
      assert.ok(!endpoints.includes(TOKEN));
      assert.equal(extendedCalls(peer)[0]?.authorization, `Bearer ${TOKEN}`);
    } finally {
      await service.close();
    }
  });
});
