/**
 * The configuration keys of federation and the ARD source: `server.registry` (peers, federation
 * bounds) and `sources.ard`, parsed with their defaults, judged by the allowlist, and mapped onto
 * the service's options.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { serviceOptionsFromConfig } from '../../packages/service/src/assembly/from-config.js';

const BASE = `
allow: [https://registry.example.com, https://peer.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
`;

test('sources.ard and server.registry parse with their defaults and reach the service options', () => {
  const config = parseConfig(`${BASE}
server:
  registry:
    peers: [{ url: "https://peer.example.com/ard", name: Peer }]
    federation: { maxRegistries: 3 }
sources:
  ard:
    - { id: upstream, url: "https://registry.example.com/ard" }
    - { id: billing-search, url: "https://registry.example.com/ard", query: billing, filter: { tags: [billing] }, pollIntervalMs: 60000 }
`);
  const { peers, federation } = config.server.registry;
  assert.deepEqual({ peers, federation }, { peers: [{ url: 'https://peer.example.com/ard', name: 'Peer' }], federation: { maxRegistries: 3, requestTimeoutMs: 2_000, timeoutMs: 3_000, maxBytes: 1_048_576 } });
  assert.deepEqual(config.sources.ard[0], { id: 'upstream', url: 'https://registry.example.com/ard', pollIntervalMs: 300_000, maxPages: 50, maxEntries: 5_000, maxBytes: 1_048_576, timeoutMs: 30_000 });
  assert.deepEqual(config.sources.ard[1]?.filter, { tags: ['billing'] });
  const options = serviceOptionsFromConfig(config, { keys: [], credentials: () => undefined } as never);
  assert.equal(options.ard?.length, 2);
  assert.deepEqual(options.registry?.peers, [{ url: 'https://peer.example.com/ard', name: 'Peer' }]);
});

test('a peer or an ARD registry off the allowlist, a filter without a query, a duplicate id are each reported', () => {
  try {
    parseConfig(`${BASE}
server:
  registry:
    peers: [{ url: "https://elsewhere.example.org/ard" }]
sources:
  ard:
    - { id: a, url: "https://elsewhere.example.org/ard" }
    - { id: a, url: "https://registry.example.com/ard", filter: { tags: [x] } }
`);
    assert.fail('expected problems');
  } catch (err) {
    assert.ok(isDiscoveryError(err), String(err));
    const byPath = new Map((err.problems ?? []).map((p) => [p.path, p.message]));
    assert.match(byPath.get('server.registry.peers[0].url') ?? '', /not in the allowlist.*referred to or asked/);
    assert.match(byPath.get('sources.ard[0].url') ?? '', /the registry must be on the allowlist/);
    assert.match(byPath.get('sources.ard[1].filter') ?? '', /give query too/);
    assert.match(byPath.get('sources.ard[1].id') ?? '', /already used/);
  }
});
