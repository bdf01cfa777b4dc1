/**
 * The DNS-AID round trip, end to end with real parts: a service over a real A2A peer publishes its
 * snapshot (AI Catalog); `a2a-discovery dns-records --url` prints its records; a real Knot DNS
 * serves the printed lines (one zone signed by knot itself, one not); a second service's DNS source
 * finds the agent from the domain alone (the printed `_index._agents` entry) and its card cache
 * pins the card to the printed `capsha256`. With `requireDnssec`, through a real Unbound, the signed
 * zone's records are admitted and the unsigned zone's refused with a clear message.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { startService, type RunningService, type ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startAdkPeer, type RunningPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { runCli } from '../helpers/cli.js';
import { DNS_SKIP, startDnsServer, startValidatingResolver, type TestDnsServer, type TestResolver } from '../helpers/dns-server.js';

describe('dns-records → Knot DNS → the DNS source: discovered and pinned', { skip: DNS_SKIP }, () => {
  let peer: RunningPeer;
  let publisher: RunningService;
  let knot: TestDnsServer;
  let unbound: TestResolver;
  let cardSha256: string;

  const common = (): Partial<ServiceOptions> => ({
    port: 0,
    store: 'memory',
    policy: { allow: [new URL(peer.baseUrl).origin], allowLoopback: true },
    vocabulary: [{ tag: 'billing', description: 'Invoices and payments.' }],
    needs: [{ tag: 'billing' }],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });

  before(async () => {
    peer = await startAdkPeer({ name: 'billing', description: 'Billing.', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
    cardSha256 = createHash('sha256').update(Buffer.from(await (await fetch(peer.cardUrl)).arrayBuffer())).digest('hex');
    publisher = await startService({
      ...common(),
      static: [{ name: 'billing_agent', url: peer.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
      catalog: { enabled: true },
    } as ServiceOptions);
    const zones: { name: string; text: string; dnssec?: boolean }[] = [];
    for (const [name, dnssec] of [['signed.test', true], ['plain.test', false]] as const) {
      const printed = await runCli(['dns-records', '--domain', name, '--url', publisher.url, '--ttl', '60']);
      assert.equal(printed.code, 0, printed.stderr);
      zones.push({ name, text: printed.stdout, dnssec });
    }
    knot = await startDnsServer({ zones });
    unbound = await startValidatingResolver({ server: knot });
  });

  after(async () => {
    await unbound?.close();
    await knot?.close();
    await publisher?.close();
    await peer?.close();
  });

  test('a reader given only the domain finds the agent through the printed index, and pins its card to the printed digest', async () => {
    const reader = await startService({
      ...common(),
      dns: [{ id: 'dns', resolvers: [`${knot.host}:${knot.port}`], domains: [{ domain: 'plain.test' }] }],
    } as ServiceOptions);
    try {
      await reader.loop.refreshNow();
      const endpoints = await reader.loop.status();
      const e = endpoints.find((x) => x.proposals.some((p) => p.metadata['record'] === '_billing-agent._a2a._agents.plain.test'));
      assert.ok(e, JSON.stringify(endpoints.map((x) => x.proposals)));
      assert.ok(e.admitted);
      assert.equal(e.proposals[0]!.metadata['pinnedSha256'], cardSha256);
      assert.equal(e.cache?.rawSha256, cardSha256);
      assert.equal(e.cache?.usable, true);
      assert.equal(reader.loop.current()?.agents.length, 1);
    } finally {
      await reader.close();
    }
  });

  test('requireDnssec through Unbound: the signed zone\'s records are admitted, the unsigned zone\'s refused with a clear message', async () => {
    const reader = await startService({
      ...common(),
      dns: [{ id: 'dns', resolvers: [`${unbound.host}:${unbound.port}`], requireDnssec: true, domains: [{ domain: 'signed.test', agents: ['billing-agent'] }, { domain: 'plain.test', agents: ['billing-agent'] }] }],
    } as ServiceOptions);
    try {
      await reader.loop.refreshNow();
      const source = reader.loop.sources.find((s) => s.id === 'dns')!;
      const state = source.current();
      assert.deepEqual(state.records.map((r) => [r.metadata?.['record'], r.metadata?.['dnssec']]), [['_billing-agent._a2a._agents.signed.test', 'validated']]);
      assert.deepEqual(state.problems?.map((p) => p.message), [
        `the SVCB answer for _billing-agent._a2a._agents.plain.test was not DNSSEC-validated by resolver ${unbound.host}:${unbound.port}: no AD bit (requireDnssec: true); refused`,
      ]);
      const endpoints = await reader.loop.status();
      const signed = endpoints.find((x) => x.proposals.some((p) => p.metadata['record'] === '_billing-agent._a2a._agents.signed.test'));
      assert.equal(signed?.cache?.rawSha256, cardSha256);
      assert.equal(signed?.cache?.usable, true);
    } finally {
      await reader.close();
    }
  });
});
