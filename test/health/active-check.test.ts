/**
 * The active check against real peers on loopback: @a2a-js/sdk 1.3.0's compat sample (every
 * binding at A2A 1.0 and 0.3), @a2a-js/sdk 0.3.14's sample and an ADK `toA2a` agent answer the
 * spec's TaskNotFound; a peer answering 500, one that hangs, one the policy does not admit, one
 * whose card names the wrong protocol version each give their own error class. The schedule runs
 * on a virtual clock.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { ActiveCheck } from '../../packages/core/src/health/index.js';
import type { ActiveCheckOptions, ActiveCheckResult, ActiveCheckTarget } from '../../packages/core/src/health/index.js';
import { createPolicyFetch } from '../../packages/core/src/adk/index.js';
import { parseAgentCard } from '../../packages/core/src/card/index.js';
import type { AgentCardModel } from '../../packages/core/src/card/index.js';
import { seededRandom, VirtualClock } from '../../packages/core/src/clock/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { HostPolicy, OriginBudget } from '../../packages/core/src/fetch/index.js';
import { startAdkPeer, startV1CardServer, v1Card } from '../helpers/a2a-peers.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import { waitFor } from '../helpers/wait-for.js';
import { startA2aJs0314Server, startA2aJs1xCompatServer } from '../interop/peers.js';

async function cardAt(url: string): Promise<AgentCardModel> {
  const res = await request(url);
  const parsed = parseAgentCard(Buffer.from(await res.body.arrayBuffer()), { allowLoopback: true });
  assert.equal(parsed.ok, true, JSON.stringify(parsed.problems));
  return parsed.card!;
}

function cardOf(json: Record<string, unknown>): AgentCardModel {
  const parsed = parseAgentCard(JSON.stringify(json), { allowLoopback: true });
  assert.equal(parsed.ok, true, JSON.stringify(parsed.problems));
  return parsed.card!;
}

/** The card with only its interfaces of `binding` at `version` (so the check calls that one). */
function only(card: AgentCardModel, binding: string, version: RegExp): AgentCardModel {
  const supportedInterfaces = card.supportedInterfaces.filter((i) => i.protocolBinding === binding && version.test(i.protocolVersion));
  assert.equal(supportedInterfaces.length > 0, true, `no ${binding} ${String(version)} interface`);
  return { ...card, supportedInterfaces };
}

const origin = (url: string): string => new URL(url).origin;

/** An ActiveCheck whose results are collected; closed (with its policy fetch) after each test. */
function makeCheck(o: Partial<ActiveCheckOptions> & { targets: ActiveCheckOptions['targets']; policy: HostPolicy }, cleanup: Array<() => Promise<void>>): { check: ActiveCheck; results: ActiveCheckResult[] } {
  const results: ActiveCheckResult[] = [];
  const policyFetch = createPolicyFetch({ policy: o.policy });
  const check = new ActiveCheck({ fetch: policyFetch, onResult: (r) => results.push(r), ...o });
  cleanup.push(
    () => check.close(),
    () => policyFetch.close(),
  );
  return { check, results };
}

/** A raw loopback server that holds every request until released; released requests get the spec's TaskNotFound. */
async function startHoldingServer(): Promise<{ url(path: string): string; readonly received: number; release(): void; close(): Promise<void> }> {
  const held: Array<{ id: unknown; res: ServerResponse }> = [];
  let received = 0;
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      received++;
      held.push({ id: (JSON.parse(raw || '{}') as { id?: unknown }).id ?? null, res });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    url: (path) => `http://127.0.0.1:${port}/${path}`,
    get received() {
      return received;
    },
    release() {
      for (const { id, res } of held.splice(0)) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32001, message: 'Task not found' } }));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function jsonRpcCard(name: string, url: string, protocolVersion = '1.0'): AgentCardModel {
  return cardOf({
    name,
    description: `The ${name} agent.`,
    version: '1.0.0',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion }],
    capabilities: {},
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: name, name, description: `Answers as ${name}.`, tags: [name] }],
  });
}

describe('ActiveCheck: what a real agent answers', () => {
  const cleanup: Array<() => Promise<void>> = [];
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  test('an agent in good health answers TaskNotFound on every binding and version it speaks: ok', async () => {
    const compat = await startA2aJs1xCompatServer('1.3.0');
    const legacy = await startA2aJs0314Server();
    const adk = await startAdkPeer({ name: 'warranty_agent', description: 'Answers warranty questions.' });
    cleanup.push(compat.close, legacy.close, adk.close);
    const compatCard = await cardAt(`${compat.baseUrl}.well-known/agent-card.json`);
    const targets: ActiveCheckTarget[] = [
      { localName: 'jsonrpc_1_0', baseUrl: compat.baseUrl, card: only(compatCard, 'JSONRPC', /^1\./) },
      { localName: 'jsonrpc_0_3', baseUrl: compat.baseUrl, card: only(compatCard, 'JSONRPC', /^0\.3/) },
      { localName: 'rest_1_0', baseUrl: compat.baseUrl, card: only(compatCard, 'HTTP+JSON', /^1\./) },
      { localName: 'rest_0_3', baseUrl: compat.baseUrl, card: only(compatCard, 'HTTP+JSON', /^0\.3/) },
      { localName: 'sdk_0_3_14', baseUrl: legacy.baseUrl, card: await cardAt(`${legacy.baseUrl}.well-known/agent-card.json`) },
      { localName: 'adk_to_a2a', baseUrl: adk.baseUrl, card: await cardAt(adk.cardUrl) },
    ];
    const policy = HostPolicy.from({ allow: [origin(compat.baseUrl), origin(legacy.baseUrl), origin(adk.baseUrl)], allowLoopback: true });
    const { check, results } = makeCheck({ targets: () => targets, policy }, cleanup);

    const answered = await check.checkNow();
    assert.deepEqual(
      answered.map((r) => [r.localName, r.ok, r.errorClass, r.message]).sort(),
      targets.map((t) => [t.localName, true, undefined, undefined]).sort(),
    );
    const byName = (list: readonly ActiveCheckResult[]) => [...list].sort((x, y) => x.localName.localeCompare(y.localName));
    assert.deepEqual(byName(results), byName(answered), 'every result is told to onResult');
    // The method of each protocol version, with its A2A-Version header.
    assert.deepEqual(
      compat.calls.map((c) => `${c.method} ${c.version}`).sort(),
      ['GetTask 1.0', 'tasks/get 0.3'],
    );
    assert.deepEqual(legacy.calls.map((c) => `${c.method} ${c.version}`), ['tasks/get 0.3']);
    const rest = results.find((r) => r.localName === 'rest_1_0')!;
    assert.match(rest.interfaceUrl, /\/a2a\/rest$/);
    assert.deepEqual(check.stats, { targets: 6, inFlight: 0, sent: 6, ok: 6, failed: 0, skipped: 0 });
  });

  test('a card that names the wrong protocol version is a protocol failure: the agent does not know the method', async () => {
    const v1Only = await startV1Server();
    const legacy = await startA2aJs0314Server();
    cleanup.push(v1Only.close, legacy.close);
    const targets: ActiveCheckTarget[] = [
      { localName: 'says_0_3', baseUrl: v1Only.baseUrl, card: jsonRpcCard('says_0_3', v1Only.rpcUrl, '0.3') },
      { localName: 'says_1_0', baseUrl: legacy.baseUrl, card: jsonRpcCard('says_1_0', legacy.baseUrl, '1.0') },
    ];
    const policy = HostPolicy.from({ allow: [origin(v1Only.baseUrl), origin(legacy.baseUrl)], allowLoopback: true });
    const { check } = makeCheck({ targets: () => targets, policy }, cleanup);
    const [says03, says10] = await check.checkNow();
    // The 1.0-only SDK server refuses A2A-Version 0.3 (VersionNotSupported, -32009).
    assert.equal(says03?.errorClass, 'protocol');
    assert.match(says03!.message!, /^says_0_3: the active check \(JSON-RPC tasks\/get on http:\/\/127\.0\.0\.1:\d+\/a2a\/jsonrpc\) answered JSON-RPC error -32009 .* instead of TaskNotFound \(-32001\)$/);
    // The 0.3 SDK server does not know the 1.0 method name.
    assert.equal(says10?.errorClass, 'protocol');
    assert.match(says10!.message!, /^says_1_0: the active check \(JSON-RPC GetTask on http:\/\/127\.0\.0\.1:\d+\/\) answered JSON-RPC error -32601 /);
  });

  test('an agent answering 500 is http_500, and the message names the agent and the redacted URL', async () => {
    const peer = await startV1Server({ refuseWith: 500 });
    cleanup.push(peer.close);
    const url = `${peer.rpcUrl}?key=s3cret`;
    const policy = HostPolicy.from({ allow: [origin(peer.baseUrl)], allowLoopback: true });
    const { check } = makeCheck({ targets: () => [{ localName: 'billing', baseUrl: peer.baseUrl, card: jsonRpcCard('billing', url) }], policy }, cleanup);
    const [result] = await check.checkNow('billing');
    assert.equal(peer.requests, 1);
    assert.equal(result?.ok, false);
    assert.equal(result?.errorClass, 'http_500');
    assert.equal(result?.interfaceUrl, `${peer.rpcUrl}?key=REDACTED`);
    assert.equal(result?.message, `billing: the active check (JSON-RPC GetTask on ${peer.rpcUrl}?key=REDACTED) answered HTTP 500`);
    assert.doesNotMatch(JSON.stringify(result), /s3cret/);
    assert.deepEqual(check.stats, { targets: 1, inFlight: 0, sent: 1, ok: 0, failed: 1, skipped: 0 });
  });

  test('an agent that hangs is a timeout once timeoutMs has passed on the clock', async () => {
    const peer = await startV1CardServer({ card: v1Card });
    cleanup.push(peer.close);
    peer.setHang(true);
    const clock = new VirtualClock();
    const policy = HostPolicy.from({ allow: [origin(peer.baseUrl)], allowLoopback: true });
    const card = cardOf(v1Card(peer.port));
    const { check } = makeCheck({ targets: () => [{ localName: 'warranty', baseUrl: peer.baseUrl, card }], policy, clock, timeoutMs: 2_000 }, cleanup);
    const pending = check.checkNow();
    await clock.advance(1_999);
    assert.equal(check.stats.inFlight, 1, 'still waiting before its timeout');
    await clock.advance(1);
    const [result] = await pending;
    assert.equal(result?.errorClass, 'timeout');
    assert.equal(result?.code, 'ERR_FETCH_TIMEOUT');
    assert.equal(result?.latencyMs, 2_000);
    assert.match(result!.message!, /^warranty: the active check \(JSON-RPC GetTask on http:\/\/127\.0\.0\.1:\d+\/a2a\/jsonrpc\) had no answer within 2000 ms$/);
  });

  test('an agent on a host the policy does not admit is refused, and no request reaches it', async () => {
    const admitted = await startV1Server();
    const outside = await startV1Server();
    cleanup.push(admitted.close, outside.close);
    const target = { localName: 'outside', baseUrl: outside.baseUrl, card: jsonRpcCard('outside', outside.rpcUrl) };
    const onlyAdmitted = HostPolicy.from({ allow: [origin(admitted.baseUrl)], allowLoopback: true });

    // The interface is chosen as the orchestrator chooses it: none of this card is admitted.
    const { check } = makeCheck({ targets: () => [target], policy: onlyAdmitted }, cleanup);
    const [chosen] = await check.checkNow();
    assert.equal(chosen?.errorClass, 'refused');
    assert.equal(chosen?.code, 'ERR_HOST_NOT_ALLOWED');
    assert.match(chosen!.message!, /^outside: not checked: the host policy refuses every interface of its card \(ERR_HOST_NOT_ALLOWED/);

    // The policy fetch refuses on its own, whatever chose the interface.
    const fetchRefuses = createPolicyFetch({ policy: onlyAdmitted });
    cleanup.push(() => fetchRefuses.close());
    const both = HostPolicy.from({ allow: [origin(admitted.baseUrl), origin(outside.baseUrl)], allowLoopback: true });
    const { check: second } = makeCheck({ targets: () => [target], policy: both, fetch: fetchRefuses }, cleanup);
    const [sent] = await second.checkNow();
    assert.equal(sent?.errorClass, 'refused');
    assert.equal(sent?.code, 'ERR_HOST_NOT_ALLOWED');
    assert.match(sent!.message!, /^outside: the active check \(JSON-RPC GetTask on .*\) was refused by the host policy \(ERR_HOST_NOT_ALLOWED\)/);

    assert.equal(outside.httpRequests, 0, 'nothing reached the host outside the policy');
  });

  test('credentials go to their own origin only; an agent\'s extra headers to its interface only', async () => {
    const a = await startV1Server();
    const b = await startV1Server();
    cleanup.push(a.close, b.close);
    const policy = HostPolicy.from({ allow: [origin(a.baseUrl), origin(b.baseUrl)], allowLoopback: true });
    const policyFetch = createPolicyFetch({ policy, credentials: (o) => (o === origin(a.baseUrl) ? { authorization: 'Bearer token-of-a' } : undefined) });
    cleanup.push(() => policyFetch.close());
    const targets: ActiveCheckTarget[] = [
      { localName: 'a', baseUrl: a.baseUrl, card: jsonRpcCard('a', a.rpcUrl), transport: { headers: { 'x-team': 'support' } } },
      { localName: 'b', baseUrl: b.baseUrl, card: jsonRpcCard('b', b.rpcUrl) },
    ];
    const { check } = makeCheck({ targets: () => targets, policy, fetch: policyFetch }, cleanup);
    const results = await check.checkNow();
    assert.deepEqual(results.map((r) => r.ok), [true, true]);
    assert.equal(a.lastHeaders['authorization'], 'Bearer token-of-a');
    assert.equal(a.lastHeaders['x-team'], 'support');
    assert.equal(b.lastHeaders['authorization'], undefined);
    assert.equal(b.lastHeaders['x-team'], undefined);
    assert.equal(a.lastHeaders['a2a-version'], '1.0');
  });

  test('an agent with no interface a client here speaks (gRPC only) is not checked, and it is said once', async () => {
    const events = new EventStream();
    const seen: DiscoveryEvent[] = [];
    events.subscribe((e) => seen.push(e));
    const card = cardOf({
      name: 'grpc',
      description: 'Speaks gRPC only.',
      version: '1.0.0',
      supportedInterfaces: [{ url: 'https://grpc.example.com:443', protocolBinding: 'GRPC', protocolVersion: '1.0' }],
      capabilities: {},
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'g', name: 'g', description: 'g', tags: ['g'] }],
    });
    const policy = HostPolicy.from({ allow: ['https://grpc.example.com'] });
    const { check, results } = makeCheck({ targets: () => [{ localName: 'grpc_agent', baseUrl: 'https://grpc.example.com/', card }], policy, events }, cleanup);
    assert.deepEqual(await check.checkNow(), []);
    assert.deepEqual(await check.checkNow(), []);
    assert.deepEqual(results, []);
    assert.equal(check.stats.skipped, 2);
    assert.equal(check.stats.sent, 0);
    assert.equal(seen.length, 1);
    const [event] = seen;
    assert.equal(event?.type === 'alert' && event.kind, 'active-check-skipped');
    assert.equal(event?.type === 'alert' && event.message, 'grpc_agent is not actively checked: its card has no JSONRPC or HTTP+JSON interface in A2A 0.3 or 1.x (offers GRPC 1.0)');
  });

  test('within the origin budget: a check finds no token and is skipped, never waiting, nothing sent', async () => {
    const peer = await startV1Server();
    cleanup.push(peer.close);
    const clock = new VirtualClock();
    const budget = new OriginBudget({ requestsPerSecond: 0.01, burst: 1, clock });
    const policy = HostPolicy.from({ allow: [origin(peer.baseUrl)], allowLoopback: true });
    const { check } = makeCheck({ targets: () => [{ localName: 'w', baseUrl: peer.baseUrl, card: jsonRpcCard('w', peer.rpcUrl) }], policy, clock, originBudget: budget }, cleanup);
    assert.equal((await check.checkNow()).length, 1);
    assert.deepEqual(await check.checkNow(), []);
    assert.equal(peer.requests, 1);
    assert.equal(check.stats.skipped, 1);
    assert.equal(budget.stats.exhausted['active-check'], 1);
  });

  test('bad options are refused together with a clear error', () => {
    const policy = HostPolicy.from({ allow: ['https://a.example.com'] });
    assert.throws(
      () => new ActiveCheck({ targets: () => [], policy, fetch, onResult: () => undefined, intervalMs: 0, maxConcurrent: 1.5 }),
      (err: Error & { code?: string }) => err.code === 'ERR_CONFIG_INVALID' && /active check: 2 invalid option\(s\); first: intervalMs: must be a positive number, got 0/.test(err.message),
    );
  });
});

describe('ActiveCheck: schedule, single flight, concurrency', () => {
  const cleanup: Array<() => Promise<void>> = [];
  let holding: Awaited<ReturnType<typeof startHoldingServer>>;
  before(async () => {
    holding = await startHoldingServer();
    cleanup.push(holding.close);
  });
  after(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  test('one check per agent at a time, at most maxConcurrent at once', async () => {
    const targets = ['one', 'two', 'three'].map((n) => ({ localName: n, baseUrl: holding.url(`${n}/`), card: jsonRpcCard(n, holding.url(n)) }));
    const policy = HostPolicy.from({ allow: [origin(holding.url(''))], allowLoopback: true });
    const { check } = makeCheck({ targets: () => targets, policy, maxConcurrent: 2 }, cleanup);
    const round = check.checkNow();
    await waitFor(async () => (holding.received === 2 ? true : undefined), 'two checks at the server');
    const again = check.checkNow('one');
    assert.equal(check.stats.inFlight, 2);
    holding.release();
    await waitFor(async () => (holding.received === 3 ? true : undefined), 'the third check once a slot is free');
    holding.release();
    const [results, one] = await Promise.all([round, again]);
    assert.deepEqual(results.map((r) => r.ok), [true, true, true]);
    assert.equal(one[0], results[0], 'the second ask of "one" got the check already in flight');
    assert.equal(holding.received, 3, 'no agent was called twice');
  });

  test('each agent every intervalMs ± 10 %: new agents picked up, departed ones forgotten, close() stops it all', async () => {
    const a = await startV1Server();
    const b = await startV1Server();
    const c = await startV1Server();
    cleanup.push(a.close, b.close, c.close);
    const clock = new VirtualClock();
    const policy = HostPolicy.from({ allow: [a, b, c].map((p) => origin(p.baseUrl)), allowLoopback: true });
    const target = (name: string, p: typeof a): ActiveCheckTarget => ({ localName: name, baseUrl: p.baseUrl, card: jsonRpcCard(name, p.rpcUrl) });
    let targets = [target('a', a), target('b', b)];
    const { check } = makeCheck({ targets: () => targets, policy, clock, random: seededRandom(7), intervalMs: 60_000 }, cleanup);
    /** Moves the clock one second at a time, letting every check answer before time moves on. */
    const run = async (ms: number): Promise<void> => {
      for (let t = 0; t < ms; t += 1_000) {
        await clock.advance(1_000);
        await waitFor(async () => (check.stats.inFlight === 0 ? true : undefined), 'the checks in flight');
      }
    };
    check.start();
    await run(600_000);
    // 10 intervals: the first check within the first interval, then one every 54 to 66 s.
    for (const p of [a, b]) assert.ok(p.requests >= 9 && p.requests <= 11, `${p.requests} checks in 10 intervals`);
    assert.equal(check.stats.sent, a.requests + b.requests);

    targets = [target('b', b), target('c', c)];
    const aBefore = a.requests;
    await run(180_000);
    assert.equal(a.requests, aBefore, 'an agent that left is not checked again');
    assert.ok(c.requests >= 2, `the new agent was picked up (${c.requests} checks)`);
    assert.equal(check.stats.targets, 2);

    await check.close();
    const sent = check.stats.sent;
    await clock.advance(600_000);
    assert.equal(check.stats.sent, sent);
    assert.equal(clock.pendingTimers, 0, 'no timer is left');
  });

  test('close() aborts the checks in flight; their results are not told', async () => {
    const policy = HostPolicy.from({ allow: [origin(holding.url(''))], allowLoopback: true });
    const before = holding.received;
    const { check, results } = makeCheck({ targets: () => [{ localName: 'slow', baseUrl: holding.url('slow/'), card: jsonRpcCard('slow', holding.url('slow')) }], policy }, cleanup);
    const pending = check.checkNow();
    await waitFor(async () => (holding.received === before + 1 ? true : undefined), 'the check at the server');
    await check.close();
    assert.deepEqual(await pending, []);
    assert.deepEqual(results, []);
    await assert.rejects(() => check.checkNow(), { code: 'ERR_USAGE' });
  });
});
