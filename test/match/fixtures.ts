/**
 * Fixtures for the pipeline tests (resolve, match, health, snapshot): real 1.0 cards parsed by
 * `parseAgentCard`, cache entries built from the parse result, admitted endpoints and candidates.
 */
import assert from 'node:assert/strict';
import { parseAgentCard } from '../../packages/core/src/card/index.js';
import type { CacheEntry } from '../../packages/core/src/cache/card-store.js';
import { acceptedEntry } from '../../packages/core/src/cache/index.js';
import type { AdmittedEndpoint } from '../../packages/core/src/resolve/index.js';
import type { EndpointRecord } from '../../packages/core/src/sources/index.js';
import type { Candidate } from '../../packages/core/src/match/index.js';

export interface SkillSpec {
  id: string;
  tags: string[];
  inputModes?: string[];
  outputModes?: string[];
  name?: string;
  description?: string;
  examples?: string[];
}

/**
 * A realistic A2A 1.0 card (JSON form) served from `origin`. `overrides` replace top-level
 * fields; `skills` replaces the skill list.
 */
export function rawCard(
  origin: string,
  options: { skills?: SkillSpec[]; overrides?: Record<string, unknown> } = {},
): Record<string, unknown> {
  const skills = (options.skills ?? [{ id: 'warranty-status', tags: ['warranty'] }]).map((s) => ({
    id: s.id,
    name: s.name ?? s.id,
    description: s.description ?? `Handles ${s.id}.`,
    tags: s.tags,
    ...(s.examples && { examples: s.examples }),
    ...(s.inputModes && { inputModes: s.inputModes }),
    ...(s.outputModes && { outputModes: s.outputModes }),
  }));
  return {
    name: 'Warranty Agent',
    description: 'Answers warranty questions for hardware orders.',
    version: '2.1.0',
    supportedInterfaces: [{ url: `${origin}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    provider: { organization: 'Example Hardware', url: 'https://hardware.example.com' },
    capabilities: { streaming: true, pushNotifications: false },
    securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer', bearerFormat: 'JWT' } } },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain', 'application/json'],
    skills,
    ...options.overrides,
  };
}

/** Parses `raw` with the real parser and builds the cache entry the card cache would hold. */
export function entryFor(baseUrl: string, raw: Record<string, unknown>, patch: Partial<CacheEntry> = {}): CacheEntry {
  const body = JSON.stringify(raw);
  const parsed = parseAgentCard(body, { allowLoopback: true });
  assert.ok(parsed.ok, `fixture card must parse: ${JSON.stringify(parsed.problems)}`);
  assert.ok(parsed.card && parsed.canonicalSha256 && parsed.protocolVersion);
  return acceptedEntry(
    baseUrl,
    { card: parsed.card!, protocolVersion: parsed.protocolVersion!, body, rawSha256: parsed.rawSha256, canonicalSha256: parsed.canonicalSha256!, warnings: parsed.warnings },
    { expiresAt: 300_000, fetchedAtWall: 1_700_000_000_000, validatedAtWall: 1_700_000_000_000, ...patch },
  );
}

/** An endpoint record as a source would propose it. */
export function record(name: string, baseUrl: string, source: string, metadata: Record<string, string> = {}): EndpointRecord {
  return Object.freeze({ name, baseUrl, source, metadata: Object.freeze({ ...metadata }) });
}

/** An admitted endpoint (already normalized) proposed by `records`. */
export function admitted(baseUrl: string, records: EndpointRecord[]): AdmittedEndpoint {
  return Object.freeze({ baseUrl, records: Object.freeze(records), sources: Object.freeze([...new Set(records.map((r) => r.source))]) });
}

/**
 * A discovered candidate: one record named `name` from source `source` at `https://<host>/`,
 * with a card built from `options`.
 */
export function discovered(
  name: string,
  host: string,
  options: { skills?: SkillSpec[]; overrides?: Record<string, unknown>; source?: string } = {},
): Candidate {
  const baseUrl = `https://${host}/`;
  return {
    endpoint: admitted(baseUrl, [record(name, baseUrl, options.source ?? 'catalog')]),
    entry: entryFor(baseUrl, rawCard(`https://${host}`, options)),
  };
}

/** A static (reviewed) candidate, with the record the static source produces. */
export function reviewedCandidate(
  agent: { readonly name: string; readonly description: string; readonly tags: readonly string[]; readonly critical: boolean },
  host: string,
  options: { skills?: SkillSpec[]; overrides?: Record<string, unknown> } = {},
): Candidate {
  const baseUrl = `https://${host}/`;
  const rec = record(agent.name, baseUrl, 'static', {
    description: agent.description,
    tags: agent.tags.join(','),
    critical: agent.critical ? 'true' : 'false',
  });
  return { endpoint: admitted(baseUrl, [rec]), entry: entryFor(baseUrl, rawCard(`https://${host}`, options)) };
}

/** Deterministic Fisher–Yates shuffle (mulberry32). */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  let s = seed >>> 0;
  const rand = (): number => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}
