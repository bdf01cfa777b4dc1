/** Card fixtures shared by tests. */
import assert from 'node:assert/strict';
import { parseAgentCard } from '../../packages/core/src/card/index.js';
import type { SnapshotAgent } from '../../packages/core/src/snapshot/index.js';

/** A valid 0.3 card for endpoint `id` on a fault server (its interface is on the same origin). */
export function cardFor(fs: { origin: string }, id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `Agent ${id}`,
    description: `The ${id} agent.`,
    url: `${fs.origin}/${id}/jsonrpc`,
    version: '1.0.0',
    protocolVersion: '0.3.0',
    capabilities: { streaming: true },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [{ id: id, name: id, description: `Does ${id}.`, tags: [id] }],
    ...extra,
  };
}

/** A 0.3 card as an ADK JS agent would publish it, with reviewed-vocabulary tags on its skills. */
export function adkStyleCard(port: number, name: string, skills: Array<{ id: string; tags: string[] }>): Record<string, unknown> {
  return {
    name,
    description: `${name} (card text: never shown to a model)`,
    url: `http://127.0.0.1:${port}/jsonrpc`,
    version: '1.0.0',
    protocolVersion: '0.3.0',
    preferredTransport: 'JSONRPC',
    additionalInterfaces: [
      { url: `http://127.0.0.1:${port}/jsonrpc`, transport: 'JSONRPC' },
      { url: `http://127.0.0.1:${port}/rest`, transport: 'HTTP+JSON' },
    ],
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false, extensions: [] },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: skills.map((s) => ({ id: s.id, name: s.id, description: `Skill ${s.id}.`, tags: s.tags })),
  };
}

/**
 * A reviewed snapshot agent on https://agents.example.com, its card parsed by the real parser
 * (`version` changes the card's bytes, hence its digest).
 */
export function snapshotAgent(localName: string, tags: string[] = ['billing'], version = '1.0.0', critical = false): SnapshotAgent {
  const parsed = parseAgentCard(JSON.stringify(cardFor({ origin: 'https://agents.example.com' }, localName, { version })));
  assert.ok(parsed.ok, `fixture card must parse: ${JSON.stringify(parsed.problems)}`);
  return {
    localName,
    description: `Reviewed ${localName}.`,
    tags,
    critical,
    baseUrl: `https://agents.example.com/${localName}/`,
    sources: ['config'],
    card: parsed.card!,
    canonicalSha256: parsed.canonicalSha256!,
    rawSha256: parsed.rawSha256,
    protocolVersion: parsed.protocolVersion!,
    degraded: false,
    stale: false,
  };
}

/** A card's `skills`: one skill per tag, named after it (`cardFor(fs, id, skillsFor('billing'))`). */
export function skillsFor(...tags: string[]): { skills: Array<{ id: string; name: string; description: string; tags: string[] }> } {
  return { skills: tags.map((tag) => ({ id: tag, name: tag, description: `Does ${tag}.`, tags: [tag] })) };
}
