/**
 * Reload of sources and credentials (docs/operations.md "Reload"): `a2a-discovery serve` as a child
 * process, started with one registry source and no peer credential. A registry added to the file +
 * SIGHUP publishes its agent while the running registry is not asked again (kept, not rebuilt); a
 * registry whose URL changes is rebuilt (its old agent leaves, the new one joins); a registry
 * removed stops being asked and its agent leaves; a first credential added live reaches the
 * registry that wants it; a trusted key added verifies a cached card at once, without a request, and a
 * key file rewritten under an unchanged configuration is applied as a change of `signatures.keys`.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type http from 'node:http';
import { exportJWK, generateKeyPair } from 'jose';
import { stringify } from 'yaml';
import { signCard } from '../../packages/core/src/card/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { startServe } from '../helpers/serve-process.js';
import { waitFor } from '../helpers/wait-for.js';

async function json(url: string): Promise<Record<string, unknown>> {
  return (await (await fetch(url)).json()) as Record<string, unknown>;
}

let dir: string;
let file: string;
let billing: RunningPeer;
let shipping: RunningPeer;
let returns: RunningPeer;
let registry: JsonServer;
let s: ServeProcess;
let reloads = 0;
/** The public keys (JWK JSON): ours signed the card, theirs did not. */
const signedBy = { ours: '', theirs: '' };

/** A registry source listing one agent; `partners` is polled once an hour (a rebuilt source asks at once). */
const registrySource = (id: string, path: string, pollIntervalMs = 200) => ({ id, url: `${registry.origin}${path}`, pollIntervalMs });

function config(o: { registries: unknown[]; credentials?: unknown[]; signed?: boolean; keys?: unknown[] }): Record<string, unknown> {
  return {
    allow: [new URL(billing.baseUrl).origin, new URL(shipping.baseUrl).origin, new URL(returns.baseUrl).origin, registry.origin],
    allowLoopback: true,
    vocabulary: [
      { tag: 'billing', description: 'Invoices and payments.', keywords: ['invoice'] },
      { tag: 'shipping', description: 'Parcels and delivery.', keywords: ['parcel'] },
      { tag: 'returns', description: 'Returns and refunds.', keywords: ['refund'] },
    ],
    needs: [{ tag: 'billing' }, { tag: 'shipping' }, { tag: 'returns' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
      ...(o.signed === true ? [{ name: 'signed_agent', url: `${registry.origin}/signed/`, description: 'Signs its card.', tags: ['returns'] }] : []),
    ],
    ...(o.keys !== undefined && { signatures: { mode: 'if-present', keys: o.keys } }),
    sources: { registries: o.registries },
    credentials: o.credentials ?? [],
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 200, removalGraceMs: 0 },
    store: 'memory',
  };
}

async function names(): Promise<string[]> {
  const body = await json(`${s.url}/api/snapshot`);
  return ((body.agents as Array<{ localName: string }> | undefined) ?? []).map((a) => a.localName).sort();
}

/** Writes the file, sends SIGHUP and returns the `config.reloaded` event it caused. */
async function reload(next: Record<string, unknown>): Promise<Record<string, unknown>> {
  await writeFile(file, stringify(next));
  s.signal('SIGHUP');
  const e = await waitFor(async () => {
    const all = ((await json(`${s.url}/api/events`)).events as Array<Record<string, unknown>>).filter((x) => x.type === 'config.reloaded' || x.type === 'config.refused');
    return all.length > reloads ? all[reloads] : undefined;
  }, 'the reload event');
  reloads++;
  assert.equal(e.type, 'config.reloaded', JSON.stringify(e));
  return e;
}

const waitForNames = (want: string[]) => waitFor(async () => ((await names()).join() === want.join() ? true : undefined), `agents ${want.join(', ')}`);

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'reload-sources-'));
  const peer = (name: string, tag: string) => startAdkPeer({ name, description: `${name}.`, reply: `${name}: done`, card: (port) => adkStyleCard(port, `${name} Agent`, [{ id: tag, tags: [tag] }]) });
  [billing, shipping, returns] = await Promise.all([peer('billing', 'billing'), peer('shipping', 'shipping'), peer('returns', 'returns')]);
  registry = await startJsonServer();
  registry.routes.set('/partners', { body: { agents: [{ name: 'shipping_agent', url: shipping.baseUrl, tags: ['shipping'] }] } });
  registry.routes.set('/more', { body: { agents: [{ name: 'returns_agent', url: returns.baseUrl, tags: ['returns'] }] } });
  registry.routes.set('/more-v2', { body: { agents: [{ name: 'refunds_agent', url: returns.baseUrl, tags: ['returns'] }] } });
  // The locked registry answers only the key the credential brings.
  registry.routes.set('/locked', (req: http.IncomingMessage) =>
    req.headers['x-api-key'] === 'locked-key' ? { body: { agents: [{ name: 'locked_returns', url: returns.baseUrl, tags: ['returns'] }] } } : { status: 401, body: { error: 'a key is required' } },
  );
  // A card signed with our key, served by the registry's server; its interface is the returns peer.
  const ours = await generateKeyPair('ES256');
  signedBy.ours = JSON.stringify(await exportJWK(ours.publicKey));
  signedBy.theirs = JSON.stringify(await exportJWK((await generateKeyPair('ES256')).publicKey));
  const card = await signCard(adkStyleCard(returns.port, 'Signed Agent', [{ id: 'returns', tags: ['returns'] }]), ours.privateKey, { alg: 'ES256', kid: 'signer' });
  registry.routes.set('/signed/.well-known/agent-card.json', { body: card, headers: { 'cache-control': 'max-age=3600' } });
  file = join(dir, 'discovery.yaml');
  await writeFile(file, stringify(config({ registries: [registrySource('partners', '/partners', 3_600_000)] })));
  s = await startServe({ config: file });
  await waitForNames(['billing_agent', 'shipping_agent']);
});

after(async () => {
  await s.stop();
  await Promise.all([billing.close(), shipping.close(), returns.close(), registry.close()]);
  await rm(dir, { recursive: true, force: true });
});

describe('serve: sources, credentials and trust keys change on reload (child process)', () => {
  test('a registry added + SIGHUP: its agent is published; the registry already running is kept, not asked again', async () => {
    const asked = registry.count('/partners');
    const e = await reload(config({ registries: [registrySource('partners', '/partners', 3_600_000), registrySource('more', '/more')] }));
    assert.deepEqual(e.changed, ['sources.registries']);
    await waitForNames(['billing_agent', 'returns_agent', 'shipping_agent']);
    assert.equal(registry.count('/partners'), asked, 'the unchanged source was not rebuilt (a new one asks at once)');
    const sources = ((await json(`${s.url}/api/sources`)).sources as Array<{ id: string }>).map((x) => x.id);
    assert.deepEqual(sources, ['static', 'partners', 'more']);
  });

  test('a registry whose URL changes is rebuilt: its old agent leaves, the new one joins', async () => {
    await reload(config({ registries: [registrySource('partners', '/partners', 3_600_000), registrySource('more', '/more-v2')] }));
    await waitForNames(['billing_agent', 'refunds_agent', 'shipping_agent']);
    const asked = registry.count('/more');
    await waitFor(async () => (registry.count('/more-v2') >= 2 ? true : undefined), 'the new URL polled');
    assert.equal(registry.count('/more'), asked, 'the old URL is no longer asked');
  });

  test('a registry removed: it is no longer asked and its agent leaves', async () => {
    await reload(config({ registries: [registrySource('partners', '/partners', 3_600_000)] }));
    await waitForNames(['billing_agent', 'shipping_agent']);
    const asked = registry.count('/more-v2');
    await new Promise((r) => setTimeout(r, 600));
    assert.equal(registry.count('/more-v2'), asked, 'the removed source stopped polling');
    const sources = ((await json(`${s.url}/api/sources`)).sources as Array<{ id: string }>).map((x) => x.id);
    assert.deepEqual(sources, ['static', 'partners']);
  });

  test('a first peer credential added live (started with none): the registry that wants it answers', async () => {
    await reload(config({ registries: [registrySource('partners', '/partners', 3_600_000), registrySource('locked', '/locked')] }));
    await waitFor(async () => (registry.count('/locked') >= 1 ? true : undefined), 'the locked registry asked');
    assert.deepEqual(await names(), ['billing_agent', 'shipping_agent'], 'refused without the key');
    await writeFile(join(dir, 'locked-key'), 'locked-key\n');
    const e = await reload(
      config({
        registries: [registrySource('partners', '/partners', 3_600_000), registrySource('locked', '/locked')],
        credentials: [{ origin: registry.origin, header: 'x-api-key', valueFile: join(dir, 'locked-key') }],
      }),
    );
    assert.deepEqual(e.changed, ['credentials']);
    await waitForNames(['billing_agent', 'locked_returns', 'shipping_agent']);
  });

  test('trust keys change live: a key added verifies the cached card without a request; a key file rewritten is applied as signatures.keys', async () => {
    const registries = [registrySource('partners', '/partners', 3_600_000)];
    const cardPath = '/signed/.well-known/agent-card.json';
    const warnings = async () => ((await json(`${s.url}/api/endpoints/card?url=${encodeURIComponent(`${registry.origin}/signed/`)}`)).warnings as Array<{ message: string }> | undefined)?.map((w) => w.message) ?? [];
    const untrusted = (w: string[]) => (w.some((m) => /not a trusted key/.test(m)) ? true : undefined);
    await reload(config({ registries, signed: true }));
    await waitFor(async () => untrusted(await warnings()), 'the card stored, its signature unverified');
    const fetched = registry.count(cardPath);

    const jwkFile = join(dir, 'signer.jwk');
    await writeFile(jwkFile, signedBy.ours);
    const e = await reload(config({ registries, signed: true, keys: [{ kid: 'signer', jwkFile }] }));
    assert.deepEqual(e.changed, ['signatures.keys']);
    assert.equal(untrusted(await warnings()), undefined, 'verified by the key the reload added (no "not a trusted key" warning)');
    assert.equal(registry.count(cardPath), fetched, 'judged again from the cached bytes, without a request');

    // The same file, another key under the same kid: applied as a change of signatures.keys, and the
    // card, whose signature that key does not verify, is refused (no longer served).
    await writeFile(jwkFile, signedBy.theirs);
    const again = await reload(config({ registries, signed: true, keys: [{ kid: 'signer', jwkFile }] }));
    assert.deepEqual(again.changed, ['signatures.keys']);
    const res = await fetch(`${s.url}/api/endpoints/card?url=${encodeURIComponent(`${registry.origin}/signed/`)}`);
    assert.equal(res.status, 404, 'the card is no longer served');
    const refused = ((await json(`${s.url}/api/events`)).events as Array<Record<string, unknown>>).filter((x) => x.type === 'card.result' && x.outcome === 'invalid' && x.endpoint === `${registry.origin}/signed/`);
    assert.equal(refused[0]?.code, 'ERR_SIGNATURE_INVALID', JSON.stringify(refused));
  });
});
