/**
 * One agent, many sources: a static entry names an agent by its base URL and an AI Catalog (or a
 * registry) names the same card by its card URL (`<base>/.well-known/agent-card.json`). That is one
 * document, so it is one endpoint with both provenances — not two rows, two "excluded" verdicts and
 * a lasting `name-collision` alert.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { cardFor } from '../helpers/cards.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';
import { listSource } from '../helpers/list-source.js';

let peer: JsonServer;
let service: RunningService;
const catalog = listSource('partners-catalog');

before(async () => {
  peer = await startJsonServer();
  peer.routes.set('/billing/.well-known/agent-card.json', { body: cardFor(peer, 'billing') });
  service = await startService({
    port: 0,
    policy: { allow: [peer.origin], allowLoopback: true },
    vocabulary: [{ tag: 'billing', description: 'Invoices and payments.' }],
    needs: [{ tag: 'billing' }],
    static: [{ name: 'billing_agent', url: `${peer.origin}/billing`, description: 'Answers invoice questions.', tags: ['billing'] }],
    extraSources: [catalog],
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
});

after(async () => {
  await service?.close();
  await peer?.close();
});

test('the card URL at a base URL\'s well-known path is that base\'s identity', () => {
  const policy = HostPolicy.from({ allow: ['https://a.example.com'] });
  assert.equal(policy.normalizeEndpoint('https://A.example.com/billing/.well-known/agent-card.json#x'), 'https://a.example.com/billing/');
  assert.equal(policy.normalizeEndpoint('https://a.example.com/billing'), 'https://a.example.com/billing/');
  // Other card URLs stay what they are: fetched exactly there.
  assert.equal(policy.normalizeEndpoint('https://a.example.com/cards/billing.json'), 'https://a.example.com/cards/billing.json');
  assert.equal(policy.normalizeEndpoint('https://a.example.com/.well-known/agent.json'), 'https://a.example.com/.well-known/agent.json');
});

test('a static entry (base URL) and a catalog entry (card URL) of one card are one endpoint, with both provenances and no collision', async () => {
  catalog.set([{ name: 'billing', baseUrl: `${peer.origin}/billing/.well-known/agent-card.json`, metadata: { identifier: 'urn:air:example:agent:billing' } }]);
  const snapshot = (await service.loop.refreshNow())!;
  assert.deepEqual(snapshot.agents.map((a) => a.localName), ['billing_agent']);
  const { endpoints } = (await (await fetch(`${service.url}/api/endpoints`)).json()) as { endpoints: Array<{ baseUrl: string; sources: string[]; proposals: Array<{ source: string }>; state: { verdict: string } }> };
  assert.equal(endpoints.length, 1, endpoints.map((e) => e.baseUrl).join(', '));
  assert.equal(endpoints[0]!.baseUrl, `${peer.origin}/billing/`);
  assert.equal(endpoints[0]!.state.verdict, 'selected');
  assert.deepEqual(endpoints[0]!.proposals.map((p) => p.source).sort(), ['partners-catalog', 'static']);
  assert.deepEqual(service.loop.activeAlerts.filter((k) => k.startsWith('name-collision')), []);
  assert.equal(peer.count('/billing/.well-known/agent-card.json') >= 1, true);
});
