/**
 * Interop matrix, client side: third-party A2A clients from npm read the cards of the product's own
 * demo peers (packages/service/src/demo/peers.ts: an ADK JS `toA2a` agent speaking A2A 0.3, and an
 * @a2a-js/sdk 1.x agent speaking only A2A 1.0) and send them a message.
 *
 * - @a2a-js/sdk 0.3.14 (`a2a-sdk-0314`): `ClientFactory.createFromUrl` with its defaults.
 * - @a2a-js/sdk 1.0.1 (`a2a-sdk-101`) and 1.3.0: `ClientFactory` with JSON-RPC, and
 *   `legacyCompat: { enabled: true }` on both the card resolver and the transport, the documented
 *   way for a 1.x client to reach a 0.3 server.
 *
 * Mastra's A2A client (`@mastra/client-js`) builds Mastra-shaped URLs only, so it cannot read these
 * peers' cards; it calls the orchestrator's aliases in orchestrator-clients.test.ts (docs/interop.md).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ClientFactory as ClientFactory0314 } from 'a2a-sdk-0314/client';
import * as sdk101Client from 'a2a-sdk-101/client';
import * as sdk130Client from '@a2a-js/sdk/client';
import { Role } from '@a2a-js/sdk';
import type { DemoPeer } from '../../packages/service/src/demo/peers.js';
import { startAdkDemoAgent, startV1DemoAgent } from '../../packages/service/src/demo/peers.js';
import { texts03, texts1x } from '../helpers/a2a-texts.js';

let adk: DemoPeer;
let v1: DemoPeer;

before(async () => {
  const skills = (tag: string) => [{ id: `${tag}-skill`, name: tag, description: `Handles ${tag}.`, tags: [tag] }];
  adk = await startAdkDemoAgent({ name: 'billing', cardName: 'Billing Agent', skills: skills('billing'), reply: (t) => `billing heard: ${t}`, maxAgeSeconds: 60 });
  v1 = await startV1DemoAgent({ name: 'warranty', cardName: 'Warranty Agent', skills: skills('warranty'), reply: (t) => `warranty heard: ${t}`, maxAgeSeconds: 60 });
});

after(async () => {
  await Promise.all([adk.close(), v1.close()]);
});

describe('interop matrix: third-party A2A clients against the demo peers', () => {
  test('a2a-js 0.3.14 client: ADK demo peer (A2A 0.3) reads its card and answers', async () => {
    const client = await new ClientFactory0314().createFromUrl(adk.baseUrl);
    const card = await client.getAgentCard();
    assert.equal(card.name, 'Billing Agent');
    assert.equal(card.protocolVersion, '0.3.0');
    const result = await client.sendMessage({ message: { kind: 'message', messageId: 'm-0314-adk', role: 'user', parts: [{ kind: 'text', text: 'Why was I charged twice?' }] } });
    assert.ok(texts03(result).some((t) => t.includes('billing heard: Why was I charged twice?')), JSON.stringify(result));
  });

  test('a2a-js 0.3.14 client: 1.0-only demo peer is out of its reach (the card has no url)', async () => {
    // A 0.3 client cannot use a card that lists only 1.0 interfaces: the product reaches such
    // peers with its own V1RemoteAgent instead (docs/remote-agents.md).
    await assert.rejects(async () => {
      const client = await new ClientFactory0314().createFromUrl(v1.baseUrl);
      await client.sendMessage({ message: { kind: 'message', messageId: 'm-0314-v1', role: 'user', parts: [{ kind: 'text', text: 'warranty?' }] } });
    }, /No compatible transport found/);
  });

  for (const [version, sdk] of [
    ['1.0.1', sdk101Client as unknown as typeof sdk130Client],
    ['1.3.0', sdk130Client],
  ] as const) {
    const factory = (): InstanceType<typeof sdk130Client.ClientFactory> =>
      new sdk.ClientFactory({
        transports: [new sdk.JsonRpcTransportFactory({ legacyCompat: { enabled: true } })],
        cardResolver: new sdk.DefaultAgentCardResolver({ legacyCompat: { enabled: true } }),
      });
    const message = (id: string, text: string) => ({
      message: { messageId: id, contextId: '', taskId: '', role: Role.ROLE_USER, parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
      configuration: undefined,
      metadata: undefined,
      tenant: '',
    });

    test(`a2a-js ${version} client (legacyCompat): ADK demo peer (A2A 0.3) reads its card and answers`, async () => {
      const client = await factory().createFromUrl(adk.baseUrl);
      const card = await client.getAgentCard();
      assert.equal(card.name, 'Billing Agent');
      assert.equal(card.supportedInterfaces[0]?.protocolBinding, 'JSONRPC');
      const result = await client.sendMessage(message(`m-${version}-adk`, 'Why was I charged twice?'));
      assert.ok(texts1x(result).some((t) => t.includes('billing heard: Why was I charged twice?')), JSON.stringify(result));
    });

    test(`a2a-js ${version} client: 1.0-only demo peer reads its card and answers`, async () => {
      const client = await factory().createFromUrl(v1.baseUrl);
      const card = await client.getAgentCard();
      assert.equal(card.name, 'Warranty Agent');
      assert.equal(card.supportedInterfaces[0]?.protocolVersion, '1.0');
      const result = await client.sendMessage(message(`m-${version}-v1`, 'Is serial 7 covered?'));
      assert.deepEqual(texts1x(result), ['warranty heard: Is serial 7 covered?']);
    });
  }
});
