/**
 * The context the runnable doc examples assume, made real: inline cards for made-up hosts, a
 * signed card and its key, and a card server on loopback. A block's prelude imports these
 * (`import { billingCard } from './fixtures.js';`), so the example runs as written without
 * reaching the network. Nothing here is shown to readers.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import { HostPolicy, parseAgentCard, signCard } from 'a2a-discovery';
import type { AgentCardModel } from 'a2a-discovery';

/** An A2A 0.3 card as a peer at `origin` publishes it (JSON-RPC interface on the same origin). */
export function cardJson(origin: string, id: string, tags: string[] = [id]): Record<string, unknown> {
  return {
    name: `${id} agent`,
    description: `Answers ${id} questions.`,
    url: `${origin}/a2a/jsonrpc`,
    version: '1.0.0',
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    capabilities: { streaming: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id, name: id, description: `Handles ${id} requests.`, tags }],
  };
}

export const BILLING = 'https://billing.example.com';
export const WARRANTY = 'https://warranty.example.com';

/** The policy the examples' made-up peers are allowed by. */
export const hostPolicy = HostPolicy.from({ allow: [BILLING, WARRANTY] });

function parsed(origin: string, id: string): AgentCardModel {
  const r = parseAgentCard(JSON.stringify(cardJson(origin, id)), { hostPolicy });
  if (!r.ok || !r.card) throw new Error(`fixture card ${id}: ${JSON.stringify(r.problems)}`);
  return r.card;
}

export const billingCard = parsed(BILLING, 'billing');
export const warrantyCard = parsed(WARRANTY, 'warranty');

/** The bytes of the billing and warranty cards as they came off the wire. */
export const billingBytes = new TextEncoder().encode(JSON.stringify(cardJson(BILLING, 'billing')));
export const warrantyBytes = new TextEncoder().encode(JSON.stringify(cardJson(WARRANTY, 'warranty')));

/** The billing card signed with a fresh ES256 key: its wire text, its URL and the public key. */
export async function signedBillingCard(): Promise<{ body: string; url: string; billingPublicJwk: Awaited<ReturnType<typeof exportJWK>> }> {
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const signed = await signCard(cardJson(BILLING, 'billing'), privateKey, { alg: 'ES256', kid: 'billing-2025' });
  return { body: JSON.stringify(signed), url: `${BILLING}/.well-known/agent-card.json`, billingPublicJwk: await exportJWK(publicKey) };
}

/**
 * A card server on 127.0.0.1 (an ephemeral port) that answers every path with a cacheable card.
 * It does not keep the process alive.
 */
export async function loopbackCardServer(): Promise<{ origin: string; baseUrl: string; cardUrl: string }> {
  let origin = '';
  const server = createServer((_req, res) => {
    // connection: close, so that no idle keep-alive socket holds the example's process open
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60', etag: '"v1"', connection: 'close' });
    res.end(JSON.stringify(cardJson(origin, 'billing')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  server.unref();
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { origin, baseUrl: `${origin}/`, cardUrl: `${origin}/agents/billing/agent-card.json` };
}
