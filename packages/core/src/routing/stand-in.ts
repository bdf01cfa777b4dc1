/**
 * Stand-ins, for evaluating routing without reaching anyone:
 *
 * - {@link standInSnapshot}: the snapshot a configuration would publish if every reviewed agent
 *   answered and one discovered agent served each needed tag no reviewed agent serves. It goes
 *   through the real matcher, cap and domain layout, so names, the cap outcome and the
 *   two-level layout are what the service would build.
 * - {@link StandInAgent}: a leaf that answers with one event carrying its name, for running a
 *   model root's real routers (through the `BaseLlm` seam) without calling any peer.
 */
import type { InvocationContext, Event } from '@google/adk';
import { BaseAgent, createEvent } from '@google/adk';
import { acceptedEntry } from '../cache/index.js';
import { parseAgentCard } from '../card/index.js';
import type { Candidate, Need, RoutingDomain } from '../match/index.js';
import { deriveLocalName, selectAgents, TagVocabulary } from '../match/index.js';
import type { Snapshot } from '../snapshot/index.js';
import { buildSnapshot, toSnapshotAgents } from '../snapshot/index.js';
import { DiscoveryError } from '../errors.js';

/** One stand-in peer: a reviewed (static) agent, or a discovered one named by `name`. */
export interface StandInPeer {
  readonly name: string;
  readonly tags: readonly string[];
  /** A reviewed agent: its description and criticality come from configuration. */
  readonly reviewed?: { readonly description: string; readonly critical: boolean };
}

export interface StandInOptions {
  readonly vocabulary: ReadonlyArray<{ readonly tag: string; readonly description: string }>;
  readonly needs: readonly Need[];
  readonly maxAgents?: number;
  readonly domains?: readonly RoutingDomain[];
}

/**
 * Candidates for stand-in peers: a valid A2A 1.0 card per peer, one skill per tag with the
 * modes its need asks for, parsed by the real parser, at `https://<name>.stand-in.invalid/`.
 */
export function standInCandidates(peers: readonly StandInPeer[], needs: readonly Need[]): Candidate[] {
  return peers.map((peer) => {
    const baseUrl = `https://${peer.name.replace(/_/g, '-')}.stand-in.invalid/`;
    const raw = {
      name: peer.name,
      description: `Stand-in for ${peer.name}.`,
      version: '0.0.0',
      supportedInterfaces: [{ url: `${baseUrl}a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: peer.tags.map((tag) => {
        const need = needs.find((n) => n.tag === tag);
        return { id: tag, name: tag, description: `Stand-in ${tag} skill.`, tags: [tag], ...(need?.inputModes && { inputModes: [...need.inputModes] }), ...(need?.outputModes && { outputModes: [...need.outputModes] }) };
      }),
    };
    const body = JSON.stringify(raw);
    const parsed = parseAgentCard(body);
    if (!parsed.ok || !parsed.card || !parsed.canonicalSha256 || !parsed.protocolVersion) {
      throw new DiscoveryError('ERR_INTERNAL', `stand-in card for ${peer.name} did not parse`, { problems: parsed.problems });
    }
    const { card, protocolVersion, rawSha256, canonicalSha256, warnings } = parsed;
    const entry = acceptedEntry(baseUrl, { card, protocolVersion, body, rawSha256, canonicalSha256, warnings });
    const source = peer.reviewed ? 'static' : 'stand-in';
    const metadata = peer.reviewed ? { description: peer.reviewed.description, tags: peer.tags.join(','), critical: String(peer.reviewed.critical) } : {};
    const record = { name: peer.name, baseUrl, source, metadata };
    return { endpoint: { baseUrl, records: [record], sources: [source] }, entry } as unknown as Candidate;
  });
}

/**
 * The snapshot `peers` would produce, through the real selection (needs, names, cap, domains).
 *
 * @example
 * const snapshot = standInSnapshot(standInPeers(config), { vocabulary, needs, maxAgents, domains });
 */
export function standInSnapshot(peers: readonly StandInPeer[], options: StandInOptions): Snapshot {
  const selection = selectAgents(standInCandidates(peers, options.needs), {
    needs: options.needs,
    vocabulary: new TagVocabulary(options.vocabulary.map((v) => ({ tag: v.tag, description: v.description }))),
    ...(options.maxAgents !== undefined && { maxAgents: options.maxAgents }),
    ...(options.domains && options.domains.length > 0 && { domains: options.domains }),
    reviewed: peers.filter((p) => p.reviewed).map((p) => ({ source: 'static', name: p.name, description: p.reviewed!.description, tags: p.tags, critical: p.reviewed!.critical })),
  });
  return buildSnapshot(toSnapshotAgents(selection.selected), 0, 0, options.domains);
}

/**
 * The peers of a configuration: every static agent, plus one discovered stand-in
 * (`<tag>_agent`) for each needed tag that no static agent serves.
 */
export function standInPeers(config: {
  readonly static: ReadonlyArray<{ readonly name: string; readonly description: string; readonly tags?: readonly string[]; readonly routingTags?: readonly string[]; readonly critical: boolean }>;
  readonly needs: ReadonlyArray<{ readonly tag: string }>;
}): StandInPeer[] {
  // A stand-in's card carries its tags, so an entry's routingTags route it as its tags would.
  const tagsOf = (a: (typeof config.static)[number]): readonly string[] => a.routingTags ?? a.tags ?? [];
  const peers: StandInPeer[] = config.static.map((a) => ({ name: a.name, tags: tagsOf(a), reviewed: { description: a.description, critical: a.critical } }));
  const served = new Set(config.static.flatMap(tagsOf));
  for (const need of config.needs) {
    if (served.has(need.tag)) continue;
    served.add(need.tag);
    peers.push({ name: deriveLocalName(`${need.tag}-agent`), tags: [need.tag] });
  }
  return peers;
}

/** A leaf that never calls anyone: it answers with one event naming itself. */
export class StandInAgent extends BaseAgent {
  protected override async *runAsyncImpl(ctx: InvocationContext): AsyncGenerator<Event, void, void> {
    yield createEvent({ invocationId: ctx.invocationId, author: this.name, content: { role: 'model', parts: [{ text: `stand-in ${this.name}` }] }, ...(ctx.branch !== undefined && { branch: ctx.branch }) });
  }

  protected override async *runLiveImpl(): AsyncGenerator<Event, void, void> {
    yield* [];
  }
}
