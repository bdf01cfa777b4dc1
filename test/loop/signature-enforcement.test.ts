/**
 * Signature checking end to end through the discovery loop: what enters a published snapshot
 * under `if-present` and `required`, over a loopback server serving signed, tampered and
 * unknown-key cards.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { exportJWK, generateKeyPair } from 'jose';
import type { CryptoKey, JWK } from 'jose';
import type { SignatureOptions } from '../../packages/core/src/card/index.js';
import { signCard } from '../../packages/core/src/card/index.js';
import { CardCache } from '../../packages/core/src/cache/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { EventStream } from '../../packages/core/src/events/index.js';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { DiscoveryLoop } from '../../packages/core/src/loop/index.js';
import { TagVocabulary } from '../../packages/core/src/match/index.js';
import { staticSource } from '../../packages/core/src/sources/index.js';
import { cardFor } from '../helpers/cards.js';
import type { FaultEndpoint, FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';

async function keyPair(): Promise<{ privateKey: CryptoKey; jwk: JWK }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  return { privateKey, jwk: await exportJWK(publicKey) };
}

const ours = await keyPair();
const theirs = await keyPair();
const trusted = [{ kid: 'ours', jwk: ours.jwk }];

let fs: FaultServer;
let policy: HostPolicy;
let fetcher: CardFetcher;
let n = 0;

before(async () => {
  fs = await startFaultServer();
  policy = HostPolicy.from({ allow: [fs.origin], allowLoopback: true });
  fetcher = createCardFetcher({ policy, totalTimeoutMs: 2_000 });
});
after(async () => {
  await fetcher.close();
  await fs.close();
});

function card(id: string): Record<string, unknown> {
  return cardFor(fs, id, { skills: [{ id, name: id, description: 'Helps.', tags: ['support'] }] });
}

const sign = (c: Record<string, unknown>) => signCard(c, ours.privateKey, { alg: 'ES256', kid: 'ours' });

/** Four peers: signed by our trusted key, tampered after signing, signed by a stranger, unsigned. */
async function peers(): Promise<Record<'signed' | 'tampered' | 'stranger' | 'unsigned', FaultEndpoint>> {
  const make = async (kind: string, body: (id: string) => Promise<Record<string, unknown>>) => {
    const id = `${kind}${++n}`;
    return fs.endpoint(id, { card: await body(id), cacheControl: 'max-age=60' });
  };
  return {
    signed: await make('signed', (id) => sign(card(id))),
    tampered: await make('tampered', async (id) => ({ ...(await sign(card(id))), url: `${fs.origin}/attacker/jsonrpc` })),
    stranger: await make('stranger', (id) => signCard(card(id), theirs.privateKey, { alg: 'ES256', kid: 'theirs' })),
    unsigned: await make('unsigned', async (id) => card(id)),
  };
}

function harness(signatures: SignatureOptions, endpoints: FaultEndpoint[]) {
  const clock = new VirtualClock();
  const events: DiscoveryEvent[] = [];
  const stream = new EventStream({ wallNow: () => clock.wallNow() });
  stream.subscribe((e) => events.push(e));
  const cache = new CardCache({ fetcher, hostPolicy: policy, clock, events: stream, random: () => 0, check: { allowLoopback: true, signatures } });
  const loop = new DiscoveryLoop({
    sources: [staticSource({ id: 'config', agents: endpoints.map((ep) => ({ name: ep.id, url: ep.baseUrl, description: `Reviewed ${ep.id}.`, tags: ['support'] })) })],
    hostPolicy: policy,
    cache,
    select: { needs: [{ tag: 'support' }], vocabulary: new TagVocabulary([{ tag: 'support', description: 'Support.' }]) },
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
    names: () => (loop.current()?.agents ?? []).map((a) => a.localName).sort(),
    stop: async () => {
      await loop.stop();
      await cache.close();
    },
  };
}

describe('DiscoveryLoop with signature checking', () => {
  test('if-present: a tampered card never enters; an unknown-key card enters, marked unverified', async () => {
    const p = await peers();
    const h = harness({ mode: 'if-present', keys: trusted }, Object.values(p));
    try {
      await h.loop.start();
      await h.loop.refreshNow();
      assert.deepEqual(h.names(), [p.signed.id, p.stranger.id, p.unsigned.id].sort());
      assert.equal((await h.cache.get(p.stranger.baseUrl)).signature, 'unverified');
      assert.equal((await h.cache.get(p.signed.baseUrl)).signature, 'verified');
      const refused = h.events.find((e) => e.type === 'card.result' && e.endpoint === h.cache.key(p.tampered.baseUrl));
      assert.ok(refused?.type === 'card.result' && refused.outcome === 'invalid' && refused.code === 'ERR_SIGNATURE_INVALID');
    } finally {
      await h.stop();
    }
  });

  test('required: only the card verified by a trusted key enters', async () => {
    const p = await peers();
    const h = harness({ mode: 'required', keys: trusted }, Object.values(p));
    try {
      await h.loop.start();
      await h.loop.refreshNow();
      assert.deepEqual(h.names(), [p.signed.id]);
    } finally {
      await h.stop();
    }
  });

  test('if-present: a selected agent whose card is then tampered keeps its verified card in every snapshot', async () => {
    const id = `rotating${++n}`;
    const original = card(id);
    const ep = fs.endpoint(id, { card: await sign(original), cacheControl: 'max-age=10' });
    const h = harness({ mode: 'if-present', keys: trusted }, [ep]);
    try {
      await h.loop.start();
      const before = h.loop.current()!;
      assert.deepEqual(h.names(), [id]);
      ep.setCard({ ...(await sign(original)), url: `${fs.origin}/attacker/jsonrpc` });
      for (let i = 0; i < 3; i++) {
        await h.clock.advance(11_000);
        await h.loop.refreshNow();
        const agent = h.loop.current()!.agents.find((a) => a.localName === id);
        assert.equal(agent?.canonicalSha256, before.agents[0]!.canonicalSha256, `cycle ${i}: the snapshot holds the verified card`);
        assert.ok(!JSON.stringify(agent?.card).includes('/attacker/'), `cycle ${i}`);
      }
    } finally {
      await h.stop();
    }
  });
});
