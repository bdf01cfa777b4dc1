/**
 * `sources.dns` from the YAML to the running service: parsed with its defaults and problems, mapped
 * onto the service's options, and served by a real Knot DNS on loopback: the service discovers
 * both DNS-AID agents, its card cache enforces their `capsha256` pins next to the AI Catalogs'
 * (one table), and refuses the card whose digest differs, naming the record.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { serviceOptionsFromConfig } from '../../packages/service/src/assembly/from-config.js';
import { startService, type RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { adkStyleCard } from '../helpers/cards.js';
import { DNS_SKIP, startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';

const BASE = `
allow: [https://billing.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
`;

test('sources.dns parses with its defaults and reaches the service options; bad resolvers, labels and bounds are each reported', () => {
  const config = parseConfig(`${BASE}
sources:
  dns:
    - id: dns
      resolvers: ["127.0.0.1:5353", "[::1]"]
      domains:
        - { domain: example.com, agents: [billing, support] }
        - { domain: example.org, dnsSd: true }
`);
  assert.deepEqual(config.sources.dns, [{
    id: 'dns',
    resolvers: ['127.0.0.1:5353', '[::1]'],
    domains: [{ domain: 'example.com', agents: ['billing', 'support'], dnsSd: false }, { domain: 'example.org', dnsSd: true }],
    requireDnssec: false,
    scheme: 'https',
    timeoutMs: 2_000,
    retries: 2,
    backoffMs: 200,
    udpPayloadSize: 4_096,
    maxTcpBytes: 65_535,
    maxRecords: 64,
    maxAgents: 200,
    minRefreshMs: 30_000,
    maxRefreshMs: 3_600_000,
  }]);
  const options = serviceOptionsFromConfig(config, { keys: [], credentials: () => undefined } as never);
  assert.equal(options.dns?.[0]?.resolvers[0], '127.0.0.1:5353');

  try {
    parseConfig(`${BASE}
sources:
  dns:
    - id: dns
      resolvers: ["dns.example.com:53"]
      domains: [{ domain: example.com, agents: [Billing_Agent] }]
      minRefreshMs: 7200000
`);
    assert.fail('expected problems');
  } catch (err) {
    assert.ok(isDiscoveryError(err), String(err));
    const byPath = new Map((err.problems ?? []).map((p) => [p.path, p.message]));
    assert.match(byPath.get('sources.dns[0].resolvers[0]') ?? '', /resolvers are given by address/);
    assert.match(byPath.get('sources.dns[0].domains[0].agents[0]') ?? '', /is not a DNS-AID agent label/);
    assert.match(byPath.get('sources.dns[0].minRefreshMs') ?? '', /must not exceed maxRefreshMs/);
  }
});

let cards: JsonServer;
let knot: TestDnsServer;
const sha = (body: object) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

before(async () => {
  if (DNS_SKIP !== undefined) return;
  cards = await startJsonServer();
  for (const name of ['billing', 'support', 'tampered']) cards.routes.set(`/${name}/card.json`, { body: adkStyleCard(cards.port, `${name} agent`, [{ id: name, tags: ['billing'] }]) });
  const body = (name: string) => (cards.routes.get(`/${name}/card.json`) as { body: object }).body;
  knot = await startDnsServer({
    zones: [{
      name: 'agents.test',
      text: [
        `_billing._a2a._agents 60 SVCB 1 . key65400="${cards.origin}/billing/card.json" key65401="${sha(body('billing'))}"`,
        `_support._a2a._agents 60 SVCB 1 . key65400="${cards.origin}/support/card.json" key65401="${sha(body('support'))}"`,
        `_tampered._a2a._agents 60 SVCB 1 . key65400="${cards.origin}/tampered/card.json" key65401="${'1'.repeat(64)}"`,
      ].join('\n'),
    }],
  });
});

after(async () => {
  await knot?.close();
  await cards?.close();
});

test('the service discovers two DNS-AID agents from Knot, their cards pinned to capsha256; a card whose digest differs is refused, naming the record', { skip: DNS_SKIP }, async () => {
  let service: RunningService | undefined;
  try {
    service = await startService({
      port: 0,
      store: 'memory',
      policy: { allow: [cards.origin], allowLoopback: true },
      vocabulary: [{ tag: 'billing', description: 'Invoices.' }],
      needs: [{ tag: 'billing' }],
      dns: [{ id: 'dns', resolvers: [`${knot.host}:${knot.port}`], domains: [{ domain: 'agents.test', agents: ['billing', 'support', 'tampered'] }] }],
      health: { enterAfter: 1 },
      cache: { minTtlMs: 0 },
      loop: { cycleIntervalMs: 600_000 },
      logger: createLogger({ level: 'silent' }),
    });
    await service.loop.refreshNow();
    const endpoints = await service.loop.status();
    const byRecord = new Map(endpoints.map((e) => [e.proposals[0]?.metadata['record'], e]));
    for (const name of ['billing', 'support']) {
      const e = byRecord.get(`_${name}._a2a._agents.agents.test`);
      assert.ok(e?.admitted, name);
      assert.equal(e.cache?.rawSha256, e.proposals[0]!.metadata['pinnedSha256']);
      assert.equal(e.cache?.usable, true);
    }
    const tampered = byRecord.get('_tampered._a2a._agents.agents.test');
    assert.equal(tampered?.lastFailure?.code, 'ERR_DIGEST_MISMATCH', JSON.stringify(tampered));
    assert.match(tampered.lastFailure.message, /DNS record _tampered\._a2a\._agents\.agents\.test \(capsha256\)/);
  } finally {
    await service?.close();
  }
});
