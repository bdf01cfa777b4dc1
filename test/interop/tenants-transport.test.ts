/**
 * Interop, as a user drives the product (the built CLI's `serve` over a generated YAML file, then
 * `POST /api/chat`): tenants and per-agent transport options in static entries.
 *
 * - A multi-tenant @a2a-js/sdk 1.3.0 peer (two tenants on one URL, each with its own card URL):
 *   two static entries are two agents, and each chat turn carries its own tenant, with
 *   `A2A-Version: 1.0`.
 * - A peer whose stream is broken (raw loopback server modelled on no framework: streaming card,
 *   malformed SSE, working `message/send`): unusable by default, works with `streaming: false`
 *   (`message/send`, `A2A-Version: 0.3`). Real VoltAgent, which this peer was once said to stand
 *   in for, is in voltagent.test.ts.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { StaticAgent } from './harness.js';
import { admitted, chat, serve } from './harness.js';
import type { MultiTenantPeer, TransportPeer } from './transport-peers.js';
import { startMultiTenantPeer, startBrokenStreamPeer } from './transport-peers.js';

/** A static entry with the per-agent transport keys. */
type Entry = StaticAgent & { streaming?: boolean; headers?: Record<string, string>; timeoutMs?: number; tenant?: string };

const acmeTag = { tag: 'invoices', description: 'Invoices of Acme.', keywords: ['invoice'] };
const globexTag = { tag: 'shipping', description: 'Shipping of Globex.', keywords: ['shipment'] };

describe('interop: two tenants on one URL (@a2a-js/sdk 1.3.0)', () => {
  let peer: MultiTenantPeer;
  before(async () => {
    peer = await startMultiTenantPeer([
      { tenant: 'acme', tag: acmeTag.tag },
      { tenant: 'globex', tag: globexTag.tag },
    ]);
  });
  after(async () => {
    await peer.close();
  });

  test("two static entries, one per tenant's card URL: two agents, each turn echoes its tenant", async () => {
    const agents: Entry[] = [
      { name: 'acme_invoices', cardUrl: peer.cardUrl('acme'), description: 'Acme invoices.', tags: [acmeTag.tag] },
      { name: 'globex_shipping', cardUrl: peer.cardUrl('globex'), description: 'Globex shipping.', tags: [globexTag.tag] },
    ];
    const s = await serve(agents, [acmeTag, globexTag]);
    try {
      for (const a of agents) assert.ok((await admitted(s, a.name)).agent, `${a.name} is in the snapshot`);
      const before = peer.calls.length;
      const one = await chat(s, 'tenant-a', 'where is invoice 7');
      assert.equal(one.body.author, 'acme_invoices', JSON.stringify(one.body));
      assert.match(one.body.reply, /^acme: /);
      const two = await chat(s, 'tenant-b', 'track shipment 9');
      assert.equal(two.body.author, 'globex_shipping', JSON.stringify(two.body));
      assert.match(two.body.reply, /^globex: /);
      assert.deepEqual(
        peer.calls.slice(before).map((c) => [c.tenant, c.version]),
        [
          ['acme', '1.0'],
          ['globex', '1.0'],
        ],
      );
    } finally {
      assert.equal(await s.stop(), 0, `serve exit code (stderr: ${s.stderr()})`);
    }
  });
});

describe('interop: a peer whose stream is broken (streaming card, malformed SSE)', () => {
  let peer: TransportPeer & { cardUrl: string };
  const tag = { tag: 'support', description: 'Support questions.', keywords: ['help'] };
  before(async () => {
    peer = await startBrokenStreamPeer({ prefix: 'volt' });
  });
  after(async () => {
    await peer.close();
  });

  for (const streaming of [undefined, false] as const) {
    test(streaming === false ? 'with `streaming: false`: message/send, A2A-Version 0.3, the turn works' : 'by default: the turn fails on the broken stream', async () => {
      const agent: Entry = { name: 'volt_support', url: peer.baseUrl, description: 'Support.', tags: ['support'], ...(streaming !== undefined && { streaming }) };
      const s = await serve([agent], [tag]);
      try {
        assert.ok((await admitted(s, agent.name)).agent);
        const before = peer.calls.length;
        const r = await chat(s, `volt-${String(streaming)}`, 'help me please');
        const wire = peer.calls.slice(before).map((c) => [c.method, c.version]);
        if (streaming === false) {
          assert.equal(r.body.error ?? undefined, undefined, JSON.stringify(r.body));
          assert.match(r.body.reply, /volt: help me please/);
          assert.deepEqual(wire, [['message/send', '0.3']]);
        } else {
          assert.ok(r.body.error !== undefined || !/volt: /.test(r.body.reply), `expected a failed turn: ${JSON.stringify(r.body)}`);
          assert.deepEqual(wire, [['message/stream', '0.3']]);
        }
      } finally {
        assert.equal(await s.stop(), 0, `serve exit code (stderr: ${s.stderr()})`);
      }
    });
  }
});
