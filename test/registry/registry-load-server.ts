/**
 * The registry service of test/registry/search-event-loop.test.ts, in its own process as a
 * service runs: the registry routes (packages/service/src/registry/routes.ts) with the default
 * `server.registry` settings and a `/healthz`, over a real index of 5,000 admitted cards whose
 * text shares a vocabulary (a short prefix expands to many words). Prints
 * `serving http://127.0.0.1:<port>/` once listening (as `a2a-discovery serve` does; the
 * arguments helpers/serve-process.ts appends are ignored); SIGTERM stops it.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { AddressInfo } from 'node:net';
import type { AgentCardModel } from '../../packages/core/src/card/index.js';
import type { CacheEntry } from '../../packages/core/src/cache/index.js';
import type { EndpointStatus } from '../../packages/core/src/loop/index.js';
import { DEFAULT_REGISTRY_SETTINGS } from '../../packages/core/src/config/index.js';
import { RegistryIndex } from '../../packages/service/src/registry/registry-index.js';
import { mountRegistry } from '../../packages/service/src/registry/routes.js';
import { N, cardText } from './search-load.js';

const statuses: EndpointStatus[] = [];
const entries = new Map<string, CacheEntry>();
for (let i = 0; i < N; i++) {
  const card = { ...cardText(i), version: `1.${i}.0`, supportedInterfaces: [], capabilities: {}, defaultInputModes: ['text/plain'], defaultOutputModes: ['text/plain'] } as unknown as AgentCardModel;
  const baseUrl = `https://a${i}.example/`;
  entries.set(baseUrl, { baseUrl, cardUrl: `${baseUrl}.well-known/agent-card.json`, card, protocolVersion: '1.0', rawSha256: `${i}`, canonicalSha256: `${i}`, fetchedAtWall: 1 } as unknown as CacheEntry);
  statuses.push({ state: { verdict: 'excluded', reason: 'x', since: 0 }, baseUrl, sources: ['r'], names: [`a${i}`], proposals: [{ source: 'r', name: `a${i}`, metadata: {} }], admitted: true, cache: { usable: true, canonicalSha256: `${i}`, rawSha256: `${i}` }, health: { state: 'healthy' } } as unknown as EndpointStatus);
}
const index = new RegistryIndex({ loop: { status: () => Promise.resolve(statuses), current: () => undefined }, cache: { peek: (url) => Promise.resolve(entries.get(url)) }, maxEntries: 100_000, maxTombstones: 10, tombstoneTtlMs: 60_000 });
await index.sync();
const app = new Hono();
app.get('/healthz', (c) => c.json({ ok: true }));
mountRegistry(app, { index, settings: DEFAULT_REGISTRY_SETTINGS });
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => {
  process.stdout.write(`serving http://127.0.0.1:${(server.address() as AddressInfo).port}/\n`);
});
process.on('SIGTERM', () => {
  index.close();
  server.close(() => process.exit(0));
});
