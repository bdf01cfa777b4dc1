/**
 * A real A2A 1.0 peer (@a2a-js/sdk 1.x server parts) deployed blue/green, as teams ship an agent's
 * new version: one origin serves the card at the well-known path, `v1` at `/v1/jsonrpc` and `v2` at
 * `/v2/jsonrpc`, each its own `DefaultRequestHandler`. {@link VersionedPeer.release} switches the
 * card to the new version (its interface URL, and the skills it lists); the old deployment keeps
 * answering the sessions still pinned to it. `failEvery` makes one version fail a share of its
 * calls (HTTP 500 before the SDK sees the request), as a broken release does.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { AgentCard } from '@a2a-js/sdk';
import { DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';
import { ScriptedExecutor } from './a2a-v1-server.js';

export interface PeerVersion {
  /** Skills the card lists in this version (id, tags). */
  skills: ReadonlyArray<{ id: string; tags: string[] }>;
  /** Fail every n-th call with HTTP 500 (2: half of them). Default: never. */
  failEvery?: number;
}

export interface VersionedPeer {
  baseUrl: string;
  cardUrl: string;
  /** Calls each version received, and how many it failed. */
  readonly calls: Readonly<Record<'v1' | 'v2', { received: number; failed: number }>>;
  /** Serves version 2's card from now on (its interface URL and skills). */
  release(): void;
  /** Serves version 1's card again (a redeploy of the old version). */
  revert(): void;
  /** From now on, version `v` fails every n-th call (1: all of them; undefined: none). */
  failEvery(v: 'v1' | 'v2', n: number | undefined): void;
  close(): Promise<void>;
}

/** Starts the peer on 127.0.0.1, serving version 1's card. */
export async function startVersionedPeer(options: { name: string; prefix: string; v1: PeerVersion; v2: PeerVersion }): Promise<VersionedPeer> {
  const app = express();
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const calls = { v1: { received: 0, failed: 0 }, v2: { received: 0, failed: 0 } };
  const cardOf = (v: 'v1' | 'v2') =>
    AgentCard.toJSON(
      AgentCard.fromJSON({
        name: options.name,
        description: `${options.name} (${v}).`,
        version: v === 'v1' ? '1.0.0' : '2.0.0',
        supportedInterfaces: [{ url: `${baseUrl}${v}/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
        capabilities: { streaming: false, pushNotifications: false },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
        skills: options[v].skills.map((s) => ({ id: s.id, name: s.id, description: `The ${s.id} skill.`, tags: s.tags })),
      }),
    ) as Record<string, unknown>;
  const cards = { v1: cardOf('v1'), v2: cardOf('v2') };
  let served: 'v1' | 'v2' = 'v1';
  // Revalidated at every cycle (ETag, 304): the release is seen at the next one.
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: async () => cards[served] as unknown as AgentCard, cache: { maxAge: 0 } }));
  const failing = { v1: options.v1.failEvery, v2: options.v2.failEvery };
  for (const v of ['v1', 'v2'] as const) {
    const handler = new DefaultRequestHandler(AgentCard.fromJSON(cards[v]), new InMemoryTaskStore(), new ScriptedExecutor(`${options.prefix} ${v}`, 'message', []));
    app.use(
      `/${v}/jsonrpc`,
      express.json(),
      (req, res, next) => {
        if (req.method !== 'POST') return next();
        calls[v].received++;
        const failEvery = failing[v];
        if (failEvery !== undefined && calls[v].received % failEvery === 0) {
          calls[v].failed++;
          res.status(500).json({ error: 'the new release crashed' });
          return;
        }
        next();
      },
      jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }),
    );
  }
  return {
    baseUrl,
    cardUrl: `${baseUrl}.well-known/agent-card.json`,
    calls,
    release: () => {
      served = 'v2';
    },
    revert: () => {
      served = 'v1';
    },
    failEvery: (v, n) => {
      failing[v] = n;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
