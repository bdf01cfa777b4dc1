/**
 * Normalization of a validated raw card (any dialect) into the 1.0 JSON model.
 *
 * Legacy (0.2/0.3) cards go through @a2a-js/sdk 1.x's own translator (`parseLegacyAgentCard`),
 * then two of its results are corrected:
 * - it repeats an interface when `additionalInterfaces` lists the main URL again (ADK JS
 *   `toA2a` cards always do); we keep the first of each (binding, url, tenant, protocol
 *   version). The version is part of the key: a 1.x server's 0.3 mirrors
 *   (`duplicateInterfacesForLegacy`) differ from their 1.0 entries only there;
 * - it copies the card-level `protocolVersion` verbatim (`"0.3.0"`) while spec 1.0 §3.6 wants
 *   Major.Minor; we write `"0.3"` (or `"0.2"`).
 * 1.0 cards are round-tripped through the SDK's proto JSON mapping, which drops unknown
 * fields and default values, so equal cards normalize to equal objects.
 *
 * Leniencies the validator warned about are applied here: modes that are not media types are
 * left out, an empty `documentationUrl` / `iconUrl` is absent, a `provider` without `url` is left
 * out, and a legacy card's unknown
 * `protocolVersion` (BeeAI's `"0.1.0"`) is the version the card was read as.
 */
import { AgentCard } from '@a2a-js/sdk';
import { parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import type { Problem } from '../errors.js';
import type { AgentCardModel, AgentInterfaceModel, CardProtocolVersion } from './model.js';
import { deepFreeze } from './model.js';
import { canonicalMode } from './modes.js';

export interface NormalizeResult {
  card: AgentCardModel;
  warnings: Problem[];
}

/** Normalizes a raw card that {@link validateRawCard} accepted. Throws only on a library bug. */
export function normalizeCard(raw: Record<string, unknown>, version: CardProtocolVersion): NormalizeResult {
  const warnings: Problem[] = [];
  const decoded = version === '1.0' ? AgentCard.fromJSON(raw) : parseLegacyAgentCard(raw);
  const json = AgentCard.toJSON(decoded) as Record<string, unknown>;

  let interfaces = (json.supportedInterfaces as AgentInterfaceModel[] | undefined) ?? [];
  if (version !== '1.0') {
    // The translator writes "0.3" where a 0.2 card has no protocolVersion; say what it was. A
    // version this product does not know ("0.1.0", warned about) is the one the card was read as.
    interfaces = interfaces.map((i) => ({
      ...i,
      protocolVersion: version === '0.2' ? '0.2' : (knownMajorMinor(i.protocolVersion) ?? version),
    }));
  }
  const seen = new Set<string>();
  const kept: AgentInterfaceModel[] = [];
  interfaces.forEach((i, index) => {
    const key = `${i.protocolBinding}\u0000${i.url}\u0000${i.tenant ?? ''}\u0000${i.protocolVersion}`;
    if (seen.has(key)) {
      warnings.push({
        path: version === '1.0' ? `supportedInterfaces[${index}]` : `additionalInterfaces[${index - 1}]`,
        message: `repeats the ${i.protocolBinding} interface ${i.url} (A2A ${i.protocolVersion}); it is kept once`,
      });
      return;
    }
    seen.add(key);
    kept.push(i);
  });
  json.supportedInterfaces = kept;
  if (json.capabilities === undefined) json.capabilities = {};
  for (const key of ['documentationUrl', 'iconUrl']) if (json[key] === '') delete json[key];
  // A provider without `url` was warned about (validate.ts): it is left out.
  if (raw.provider !== undefined && (raw.provider as Record<string, unknown>).url === undefined) delete json.provider;
  json.defaultInputModes = usableModes(json.defaultInputModes) ?? [];
  json.defaultOutputModes = usableModes(json.defaultOutputModes) ?? [];
  json.skills = ((json.skills as Array<Record<string, unknown>> | undefined) ?? []).map((skill) => {
    // The proto JSON mapping drops empty lists; the model always has `tags`.
    const out: Record<string, unknown> = { ...skill, tags: skill.tags ?? [] };
    for (const key of ['inputModes', 'outputModes']) {
      const modes = usableModes(out[key]);
      if (modes === undefined || modes.length === 0) delete out[key];
      else out[key] = modes;
    }
    return out;
  });
  // Rebuilt through JSON once: the objects above went through the proto mapping, spreads and
  // `delete` (V8 dictionary mode, and strings sliced from the input), which made the model cost
  // ~6 KB per card; rebuilt, it is ~2.3 KB, like a plain JSON.parse (the model is plain JSON:
  // the durable stores keep it as JSON text).
  return { card: deepFreeze(JSON.parse(JSON.stringify(json)) as AgentCardModel), warnings };
}

/** Major.Minor of an A2A version this product knows (0.2, 0.3, 1.x); undefined for any other. */
function knownMajorMinor(v: string | undefined): string | undefined {
  const m = v === undefined ? null : /^(0\.[23]|1\.\d+)(\.\d+)?$/.exec(v);
  return m ? m[1] : undefined;
}

/** The modes that are media types or known short forms; the others were warned about. */
function usableModes(modes: unknown): string[] | undefined {
  return Array.isArray(modes) ? (modes as string[]).filter((m) => canonicalMode(m) !== undefined) : undefined;
}
