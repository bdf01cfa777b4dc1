/**
 * `parseAgentCard`: from untrusted bytes to a validated, normalized, frozen card, or a list of
 * every problem found and the stage that refused it. Parse, hash, validate, normalize and the
 * interface policy all work on the same buffer; nothing is fetched.
 */
import { DiscoveryError } from '../errors.js';
import type { DiscoveryErrorCode, Problem } from '../errors.js';
import { rememberOriginal } from './adk-card.js';
import { canonicalCardSha256, sha256Hex } from './canonical.js';
import type { CardUrl, InterfacePolicyOptions } from './interface-policy.js';
import { applyInterfacePolicy } from './interface-policy.js';
import type { AgentCardModel, CardProtocolVersion } from './model.js';
import { normalizeCard } from './normalize.js';
import type { JsonLimits } from './safe-json.js';
import { parseSafeJson } from './safe-json.js';
import { detectProtocolVersion, isObj, validateRawCard } from './validate.js';

export interface ParseCardOptions extends JsonLimits, InterfacePolicyOptions {
  /** Where the bytes came from (URL or file), for messages and 0.2 detection (`agent.json`). */
  sourceUrl?: string;
}

/** The stage of card checking that refused a card. */
export type CardStage = 'parse' | 'schema' | 'policy';

export interface ParseCardResult {
  /** True when the card parsed, validated and passed the interface policy. */
  readonly ok: boolean;
  /** The normalized card; present whenever parsing and schema validation succeeded. */
  readonly card?: AgentCardModel;
  /** The JSON value as received (present once it parsed). Verify signatures on this. */
  readonly raw?: unknown;
  /** The card as received, decoded as UTF-8 (present once it parsed). */
  readonly text?: string;
  readonly protocolVersion?: CardProtocolVersion;
  /** Every problem that makes the card unacceptable, with JSON paths. */
  readonly problems: readonly Problem[];
  /** Notes that do not refuse the card, each with its JSON path: a repeated interface, an interface that is never called, an ignored mode, an empty skill list; from `checkCard`, a signature by a key not in the trust store. */
  readonly warnings: readonly Problem[];
  /** The first stage that refused the card, when `ok` is false. */
  readonly stage?: CardStage;
  readonly code?: DiscoveryErrorCode;
  /** Every URL in the card, and the verdict on those a client would call. */
  readonly urls: readonly CardUrl[];
  /** SHA-256 (hex) of the input bytes. */
  readonly rawSha256: string;
  /** SHA-256 (hex) of the canonical normalized card; present with `card`. */
  readonly canonicalSha256?: string;
  readonly bytes: number;
}

/**
 * Parses and checks an agent card. Never throws on bad input: every fault is reported in
 * `problems` with its JSON path, and `stage`/`code` say what refused it.
 *
 * @example
 * const result = parseAgentCard(body, { hostPolicy, sourceUrl: cardUrl });
 * if (!result.ok) for (const p of result.problems) console.log(`${p.path}: ${p.message}`);
 */
export function parseAgentCard(input: Uint8Array | string, options: ParseCardOptions = {}): ParseCardResult {
  const bytes = typeof input === 'string' ? Buffer.from(input, 'utf8') : input;
  const rawSha256 = sha256Hex(bytes);
  const base = { rawSha256, bytes: bytes.byteLength, warnings: [] as Problem[], urls: [] as CardUrl[] };

  const parsed = parseSafeJson(bytes, options);
  if (!parsed.ok) {
    return freezeResult({ ...base, ok: false, stage: 'parse', code: parsed.code, problems: parsed.problems });
  }
  const raw = parsed.value;
  const text = parsed.text;
  if (!isObj(raw)) {
    return freezeResult({
      ...base,
      ok: false,
      raw,
      text,
      stage: 'schema',
      code: 'ERR_CARD_INVALID',
      problems: validateRawCard(raw, '1.0').problems,
    });
  }
  const protocolVersion = detectProtocolVersion(raw, options.sourceUrl);
  const validation = validateRawCard(raw, protocolVersion);
  if (validation.problems.length > 0) {
    return freezeResult({
      ...base,
      ok: false,
      raw,
      text,
      protocolVersion,
      stage: 'schema',
      code: 'ERR_CARD_INVALID',
      problems: validation.problems,
      warnings: validation.warnings,
    });
  }
  const { card, warnings } = normalizeCard(raw, protocolVersion);
  rememberOriginal(card, raw, text);
  const policy = applyInterfacePolicy(raw, options);
  const canonicalSha256 = canonicalCardSha256(card);
  const allWarnings = [...validation.warnings, ...warnings, ...policy.warnings];
  if (policy.problems.length > 0) {
    return freezeResult({
      ...base,
      ok: false,
      raw,
      text,
      card,
      protocolVersion,
      stage: 'policy',
      code: policy.code ?? 'ERR_INSECURE_INTERFACE',
      problems: policy.problems,
      warnings: allWarnings,
      urls: policy.urls,
      canonicalSha256,
    });
  }
  return freezeResult({
    ...base,
    ok: true,
    raw,
    text,
    card,
    protocolVersion,
    problems: [],
    warnings: allWarnings,
    urls: policy.urls,
    canonicalSha256,
  });
}

/**
 * The model of a card accepted before, built again from its text and the URL it was fetched
 * from (what the card cache does when it kept only the bytes). No check runs again: the text
 * passed them, and the model is the one they gave (the same canonical SHA-256).
 *
 * @internal
 */
export function acceptedCardModel(text: string, sourceUrl: string): AgentCardModel {
  const raw = JSON.parse(text) as Record<string, unknown>;
  const { card } = normalizeCard(raw, detectProtocolVersion(raw, sourceUrl));
  rememberOriginal(card, raw, text);
  return card;
}

/** The refusal of a failed parse or check as a {@link DiscoveryError} (for caches and events). */
export function parseFailure(
  result: Pick<ParseCardResult, 'ok' | 'problems' | 'code'> & { stage?: CardStage | 'signature' },
  url?: string,
): DiscoveryError {
  if (result.ok) throw new DiscoveryError('ERR_INTERNAL', 'parseFailure called on an accepted card');
  const first = result.problems[0];
  const summary = first ? `${first.path}: ${first.message}` : 'card refused';
  const more = result.problems.length > 1 ? ` (and ${result.problems.length - 1} more)` : '';
  return new DiscoveryError(result.code ?? 'ERR_CARD_INVALID', `${summary}${more}`, {
    ...(url !== undefined && { url }),
    stage: result.stage ?? 'schema',
    ...(first && { path: first.path }),
    problems: result.problems,
  });
}

function freezeResult(r: ParseCardResult): ParseCardResult {
  return Object.freeze(r);
}
