/**
 * `checkCard`: every content stage a client runs on a card, in order — parse, schema,
 * interface policy, then signatures on the raw JSON. The card cache and `probe` both use it,
 * so the CLI explains exactly what discovery decides.
 */
import type { ParseCardOptions, ParseCardResult } from './parse-agent-card.js';
import { parseAgentCard } from './parse-agent-card.js';
import type { SignatureOptions, SignatureResult } from './signature.js';
import { verifyCardSignatures } from './signature.js';
import { originOf } from '../rules/origins.js';
import { DiscoveryError } from '../errors.js';
import { ATTR, SPAN, withSpan } from '../telemetry/index.js';
import { frozenCopy } from '../rules/frozen.js';

export interface CheckCardOptions extends ParseCardOptions {
  /** Signature verification; default mode `if-present` with no trusted keys. */
  signatures?: SignatureOptions;
}

/** A parse result whose `stage` may also be `signature`. */
export interface CheckCardResult extends Omit<ParseCardResult, 'stage'> {
  readonly stage?: ParseCardResult['stage'] | 'signature';
  /** Present once the card passed parse, schema and policy. */
  readonly signature?: SignatureResult;
}

/**
 * Runs every content stage on a card. Never throws on bad input.
 *
 * @example
 * const r = await checkCard(body, { hostPolicy, signatures: { mode: 'required', keys } });
 * if (!r.ok) console.log(r.stage, r.problems);
 */
export async function checkCard(input: Uint8Array | string, options: CheckCardOptions = {}): Promise<CheckCardResult> {
  // Parse, schema and interface policy: one span (a child of the card fetch that got the bytes).
  const parsed = withSpan(SPAN.cardValidate, {}, (span) => {
    const r = parseAgentCard(input, options);
    if (span.recording) {
      span.set({ [ATTR.bytes]: r.bytes, [ATTR.a2aProtocolVersion]: r.protocolVersion, [ATTR.problems]: r.problems.length, [ATTR.outcome]: r.ok ? 'ok' : 'failed' });
      // Problems quote the card (third-party text): only the code, stage and count are recorded.
      if (!r.ok) span.fail(new DiscoveryError(r.code ?? 'ERR_CARD_INVALID', `the card was refused at its ${r.stage ?? 'parse'} stage (${r.problems.length} problem(s))`));
    }
    return r;
  });
  if (!parsed.ok) return parsed;
  const origin = options.signatures?.origin ?? (options.sourceUrl === undefined ? undefined : originOf(options.sourceUrl));
  const signature = await withSpan(SPAN.cardVerify, {}, async (span) => {
    const v = await verifyCardSignatures(parsed.raw, {
      mode: 'if-present',
      ...options.signatures,
      ...(origin !== undefined && { origin }),
    });
    if (span.recording) {
      span.set({ [ATTR.signature]: v.status, [ATTR.outcome]: v.ok ? 'ok' : 'failed' });
      if (!v.ok) span.fail(new DiscoveryError(v.status === 'unsigned' ? 'ERR_SIGNATURE_MISSING' : 'ERR_SIGNATURE_INVALID', `signature verdict ${v.status}`));
    }
    return v;
  });
  if (signature.ok) {
    // An unverified signature (a key we do not hold), or a failed entry before the one that
    // verified (a retired key), passes, but stays visible.
    if (signature.problems.length === 0) return frozenCopy(parsed, { signature });
    return frozenCopy(parsed, { warnings: Object.freeze([...parsed.warnings, ...signature.problems]), signature });
  }
  return frozenCopy(parsed, {
    ok: false,
    stage: 'signature' as const,
    code: signature.status === 'unsigned' ? ('ERR_SIGNATURE_MISSING' as const) : ('ERR_SIGNATURE_INVALID' as const),
    problems:
      signature.problems.length > 0
        ? signature.problems
        : [{ path: 'signatures', message: 'the card is not signed, and signatures are required for it' }],
    signature,
  });
}
