/**
 * Interop matrix: VoltAgent, the real one from npm (`@voltagent/core` 2.10.0,
 * `@voltagent/a2a-server` 2.0.3 over its nested `@a2a-js/sdk` 0.2.5, served by
 * `@voltagent/server-hono` 2.0.14), in its own install folder test-frameworks/voltagent/ (it needs
 * ai 6 and zod 3; scripts/ensure-test-deps.sh installs it). Its server runs in a child process
 * (framework-child.ts, server.mjs); its model is the AI SDK's `MockLanguageModelV3` answering
 * `voltagent heard: <text>`.
 *
 * First the wire as VoltAgent speaks it (recorded here so a change upstream shows): its card has
 * no `protocolVersion` and `skills: []`; its `message/send` result is a Task **without `kind`**;
 * its `message/stream` frames every event `data: \u001e{...}`, each event a kind-less Task again.
 * Then the product as a user drives it (harness.ts): `probe`, and `serve` with a static entry
 * (reviewed tag `support`, next to a decoy) whose chat turns VoltAgent answers, with
 * `streaming: false` and streaming (the default), each leniency told once as a turn notice.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import type { ChildPeer } from './framework-child.js';
import { startFrameworkServer } from './framework-child.js';
import type { StaticAgent } from './harness.js';
import { admitted, chat, probe, serve, warningPaths } from './harness.js';

const KIND_NOTICE = 'volt_support answered a Task without "kind" (result.kind, required by A2A 0.3); it was read as a Task';
const RS_NOTICE = "volt_support's event stream starts each data line with U+001E; the character was stripped";

const support = { tag: 'support', description: 'Support questions.', keywords: ['help'] };
const warranty = { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty'] };

/** The JSON-RPC endpoint of VoltAgent's card (`POST /a2a/<serverId>`). */
async function rpcUrl(cardUrl: string): Promise<string> {
  const card = (await (await fetch(cardUrl)).json()) as { url: string };
  return card.url;
}

function send(url: string, method: string, id: number, text: string): Promise<Response> {
  const message = { kind: 'message', messageId: `m-${id}`, role: 'user', parts: [{ kind: 'text', text }] };
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { message } }) });
}

let decoy: RunningV1Server;
before(async () => {
  decoy = await startV1Server({ prefix: 'decoy' });
});
after(async () => {
  await decoy.close();
});

describe('interop matrix: VoltAgent 2.10 (@voltagent/a2a-server 2.0.3) A2A server', () => {
  let peer: ChildPeer;
  before(async () => {
    peer = await startFrameworkServer('voltagent', 'default');
  });
  after(async () => {
    await peer.close();
  });

  test('the wire, as VoltAgent speaks it: a kind-less Task from message/send, U+001E before every streamed event', async () => {
    const card = (await (await fetch(peer.baseUrl)).json()) as Record<string, unknown>;
    assert.equal(card.protocolVersion, undefined);
    assert.deepEqual(card.skills, []);
    assert.deepEqual(card.capabilities, { streaming: true, pushNotifications: false, stateTransitionHistory: false });
    const url = await rpcUrl(peer.baseUrl);

    const sent = (await (await send(url, 'message/send', 1, 'hello')).json()) as { result: Record<string, unknown> };
    assert.deepEqual(Object.keys(sent.result).sort(), ['contextId', 'history', 'id', 'metadata', 'status']);
    assert.equal((sent.result.status as { state: string }).state, 'completed');
    assert.deepEqual((sent.result.status as { message: { parts: unknown[] } }).message.parts, [{ kind: 'text', text: 'voltagent heard: hello' }]);

    const streamed = await send(url, 'message/stream', 2, 'hello');
    assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
    const lines = (await streamed.text()).split('\n').filter((l) => l !== '');
    assert.ok(lines.length >= 2, lines.join('\n'));
    for (const line of lines) {
      assert.ok(line.startsWith('data: \u001e{'), JSON.stringify(line.slice(0, 20)));
      const event = JSON.parse(line.slice('data: \u001e'.length)) as { result: Record<string, unknown> };
      assert.equal(event.result.kind, undefined, 'every event is a kind-less Task');
      assert.equal(typeof event.result.id, 'string');
    }
    const last = JSON.parse(lines.at(-1)!.slice('data: \u001e'.length)) as { result: { status: { state: string; message: { parts: unknown[] } } } };
    assert.equal(last.result.status.state, 'completed');
    assert.deepEqual(last.result.status.message.parts, [{ kind: 'text', text: 'voltagent heard: hello' }]);
  });

  test('probe: accepted as A2A 0.2 (no protocolVersion), with a warning at skills', async () => {
    const p = await probe(peer.baseUrl);
    assert.equal(p.code, 0, `probe exit code; report: ${JSON.stringify(p.report)}`);
    assert.equal(p.report.accepted, true);
    assert.equal(p.report.protocolVersion, '0.2');
    assert.deepEqual(warningPaths(p.report), ['skills'], JSON.stringify(p.report.warnings, null, 1));
  });

  for (const streaming of [false, undefined] as const) {
    const how = streaming === false ? 'with `streaming: false` (message/send)' : 'streaming (message/stream, the default)';
    test(`serve: a static entry ${how}; VoltAgent answers, each repair told once as a notice`, async () => {
      const agent: StaticAgent & { streaming?: boolean } = { name: 'volt_support', cardUrl: peer.baseUrl, description: 'Answers support questions.', tags: ['support'], ...(streaming !== undefined && { streaming }) };
      const s = await serve([agent, { name: 'decoy_agent', url: decoy.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] }], [support, warranty]);
      try {
        const { agent: admittedAgent, endpoints } = await admitted(s, 'volt_support');
        assert.ok(admittedAgent, `volt_support not in the snapshot; endpoints: ${JSON.stringify(endpoints, null, 1)}`);
        assert.equal(admittedAgent.protocolVersion, '0.2');
        assert.deepEqual(admittedAgent.tags, ['support']);

        const one = await chat(s, `volt-${String(streaming)}`, 'help me please');
        assert.equal(one.status, 200, JSON.stringify(one.body));
        assert.equal(one.body.error ?? undefined, undefined, `chat error: ${JSON.stringify(one.body)}`);
        assert.equal(one.body.author, 'volt_support');
        assert.deepEqual(one.body.agents, ['volt_support']);
        assert.equal(one.body.reply, 'voltagent heard: help me please');
        assert.deepEqual(one.body.notices, streaming === false ? [KIND_NOTICE] : [RS_NOTICE, KIND_NOTICE]);

        // Told once per agent and repair: the next turn (another session, the same snapshot's
        // agent) answers the same, without the notices.
        const two = await chat(s, `volt-${String(streaming)}-2`, 'help me again');
        assert.equal(two.body.error ?? undefined, undefined, JSON.stringify(two.body));
        assert.equal(two.body.reply, 'voltagent heard: help me again');
        assert.deepEqual(two.body.notices, []);
      } finally {
        assert.equal(await s.stop(), 0, `serve exit code after SIGTERM (stderr: ${s.stderr()})`);
      }
    });
  }
});

describe('interop matrix: VoltAgent with a provider that has no url (its A2AServer config allows it)', () => {
  test('probe: accepted, the provider left out with a warning at provider.url', async () => {
    const peer = await startFrameworkServer('voltagent', 'provider');
    try {
      const card = (await (await fetch(peer.baseUrl)).json()) as Record<string, unknown>;
      assert.deepEqual(card.provider, { organization: 'Example Org' });
      const p = await probe(peer.baseUrl);
      assert.equal(p.code, 0, `probe exit code; report: ${JSON.stringify(p.report)}`);
      assert.deepEqual(warningPaths(p.report), ['provider.url', 'skills'], JSON.stringify(p.report.warnings, null, 1));
    } finally {
      await peer.close();
    }
  });
});
