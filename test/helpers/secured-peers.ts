/**
 * Real A2A peers whose cards require credentials (card security schemes, issue 23): an
 * @a2a-js/sdk 1.3 card server whose 1.0 card requires OAuth 2.0 client credentials, and an ADK JS
 * (`toA2a`, protocol 0.3) agent whose card requires an API key in `X-API-Key`.
 */
import type { RunningPeer } from './a2a-peers.js';
import { startAdkPeer, startV1CardServer, v1Card } from './a2a-peers.js';
import { adkStyleCard } from './cards.js';

/** The 1.0 card: one oauth2 scheme (client-credentials flow) and one requirement of it. */
export function oauth2Card(port: number, name = 'Warranty Agent', tags = ['warranty']): Record<string, unknown> {
  return v1Card(port, {
    name,
    securitySchemes: {
      corpIdp: {
        oauth2SecurityScheme: {
          description: 'Tokens from the corporate IdP.',
          flows: { clientCredentials: { tokenUrl: 'https://idp.example.com/oauth2/token', scopes: { 'agents.read': 'Read' } } },
        },
      },
    },
    securityRequirements: [{ schemes: { corpIdp: { list: ['agents.read'] } } }],
    skills: [{ id: 'warranty-status', name: 'Warranty status', description: 'Looks up warranty status.', tags }],
  });
}

/** The 0.3 card: an API key in header `X-API-Key`, required. */
export function apiKeyCard(port: number): Record<string, unknown> {
  return {
    ...adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]),
    securitySchemes: { partnerKey: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Issued by the partner portal.' } },
    security: [{ partnerKey: [] }],
  };
}

export function startOauth2Peer(): ReturnType<typeof startV1CardServer> {
  return startV1CardServer({ card: (port) => oauth2Card(port) });
}

export function startApiKeyPeer(): Promise<RunningPeer> {
  return startAdkPeer({ name: 'billing', description: 'Billing.', card: (port) => apiKeyCard(port) });
}
