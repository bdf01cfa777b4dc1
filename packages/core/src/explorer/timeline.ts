/**
 * The playback timeline of one attempt: the library's own events (`card.fetch`, `card.result`,
 * `card.backoff`) and the scripted endpoint's exchanges, translated into steps on the five lanes
 * in the order `CardCache.get` runs them — cache lookup, request, validation, cache store — then
 * selection (added by the run).
 *
 * @module
 */
import type { CacheEntry } from '../cache/index.js';
import type { CardResultEvent, DiscoveryEvent } from '../events/index.js';
import type { ScriptedExchange } from './scripted-endpoint.js';
import type { TraceEvent } from './types.js';
import { revalidationOf, secondsText } from './why.js';

/** A library event or an endpoint exchange, with the model time it happened at. */
export interface Recorded {
  atMs: number;
  event: DiscoveryEvent | ({ type: 'exchange' } & ScriptedExchange);
}

/** Adds one step (the run numbers it). */
export type PushStep = (e: Omit<TraceEvent, 'seq'>) => void;

/** What the validation step says the library checked (see `checkCard`); no full JSON Schema, no signature on this unsigned card. */
const VALIDATION_PASSED =
  'New bytes checked by the library: parsed as JSON (bounded), the card’s fields checked structurally (required fields and types, not the full A2A JSON Schema), every interface passes the HTTPS policy; the card is unsigned, and signatures are verified only when present.';

/**
 * Translates what the library did in one attempt into steps.
 *
 * @param version the label of the card the attempt ended with (`v1`, `v2`), if any
 */
export function translate(seen: readonly Recorded[], attempt: number, startMs: number, entry: CacheEntry | undefined, version: string | undefined, push: PushStep): void {
  const fresh = entry !== undefined ? ` Fresh until ${secondsText(entry.expiresAt / 1000)}.` : '';
  seen.forEach(({ atMs, event: e }, i) => {
    const at = { attempt, atMs };
    switch (e.type) {
      case 'card.fetch': {
        // The headers the request really carried, as the endpoint received them.
        const sent = seen.slice(i + 1).find((r) => r.event.type === 'exchange' && r.event.phase === 'request')?.event;
        const ifNoneMatch = sent?.type === 'exchange' ? sent.requestHeaders['if-none-match'] : undefined;
        push({
          ...at,
          stage: 'request',
          kind: 'request.sent',
          message: `GET ${e.url}${ifNoneMatch !== undefined ? ` with If-None-Match: ${ifNoneMatch} (conditional: 304 if the card is unchanged)` : ' (unconditional)'}.`,
          detail: { url: e.url, conditional: e.conditional, ...(ifNoneMatch !== undefined && { 'if-none-match': ifNoneMatch }) },
        });
        return;
      }
      case 'exchange':
        push(
          e.phase === 'request'
            ? {
                ...at,
                stage: 'request',
                kind: 'request.received',
                message: `The server (${e.condition}, publishing ${e.published}) answers ${e.status}.`,
                detail: { condition: e.condition, published: e.published, requestHeaders: redact(e.requestHeaders) },
              }
            : responseStep(e, seen, at),
        );
        return;
      case 'card.result':
        pushResult(e, at, fresh, version, push);
        return;
      case 'card.backoff':
        push({
          ...at,
          stage: 'store',
          kind: 'cache.backoff',
          message:
            e.retryInMs > 0
              ? `Failure ${e.failures} counted: no request for ${secondsText(e.retryInMs / 1000)} (backoff).`
              : `Failure ${e.failures} counted; backoff is off, so the next attempt may request again.`,
          detail: { failures: e.failures, retryInMs: e.retryInMs },
        });
        return;
      default:
        return;
    }
  });
  if (!seen.some((r) => r.event.type === 'card.result')) {
    push({
      attempt,
      atMs: startMs,
      stage: 'lookup',
      kind: 'cache.backing-off',
      message: entry !== undefined ? 'No request: backing off; the stale card is returned as it stands.' : 'No request: backing off after failures; nothing to serve.',
    });
  }
}

function pushResult(e: CardResultEvent, at: { attempt: number; atMs: number }, fresh: string, version: string | undefined, push: PushStep): void {
  const detail = {
    outcome: e.outcome,
    failures: e.failures,
    ...(e.status !== undefined && { status: e.status }),
    ...(e.bytes !== undefined && { bytes: e.bytes }),
    ...(e.code !== undefined && { code: e.code }),
    ...(e.stage !== undefined && { stage: e.stage }),
    ...(e.reason !== undefined && { reason: e.reason }),
    ...(e.problems !== undefined && { problems: e.problems }),
  };
  const card = `card ${version ?? ''}`.trim();
  const skipped = (message: string): void => push({ ...at, stage: 'validation', kind: 'validation.skipped', message, detail });
  switch (e.outcome) {
    case 'hit':
      push({ ...at, stage: 'lookup', kind: 'cache.hit', message: `Fresh cached ${card} used without a request.${fresh}`, detail });
      return;
    case 'changed':
      push({ ...at, stage: 'validation', kind: 'validation.passed', message: VALIDATION_PASSED, detail });
      push({ ...at, stage: 'store', kind: 'cache.stored', message: `Stored ${card}.${fresh}`, detail });
      return;
    case 'unchanged':
      skipped('Same bytes as the stored card: not checked again.');
      push({ ...at, stage: 'store', kind: 'cache.unchanged', message: `Kept the stored ${card}.${fresh}`, detail });
      return;
    case 'revalidated':
      skipped('304 Not Modified has no body: the stored card, checked when it was stored, stays.');
      push({ ...at, stage: 'store', kind: 'cache.revalidated', message: `304 Not Modified: the stored ${card} is refreshed, not downloaded again.${fresh}`, detail });
      return;
    case 'invalid':
      push({ ...at, stage: 'validation', kind: 'validation.failed', message: `Refused at ${e.stage ?? 'validation'}: ${e.reason ?? ''}`, detail });
      push({ ...at, stage: 'store', kind: 'cache.not-stored', message: 'Nothing stored: invalid cards are never cached.', detail });
      return;
    case 'stale':
      if (e.stage === 'fetch') skipped(`HTTP ${e.status ?? 'error'}: no card to check.`);
      push({ ...at, stage: 'store', kind: 'cache.stale', message: `Refresh failed (${e.reason ?? e.code ?? 'error'}); the card seen before is kept, marked stale.`, detail });
      return;
    case 'failed':
      skipped(`HTTP ${e.status ?? 'error'}: no card to check.`);
      push({ ...at, stage: 'store', kind: 'cache.failed', message: `Nothing stored: the refresh failed (${e.reason ?? e.code ?? 'error'}).`, detail });
      return;
  }
}

/** The response step; a conditional request's answer says what its `If-None-Match` did (matched: 304; no longer matched: 200). */
function responseStep(e: ScriptedExchange, seen: readonly Recorded[], at: { attempt: number; atMs: number }): Omit<TraceEvent, 'seq'> {
  const sent = seen.find((r) => r.event.type === 'exchange' && r.event.phase === 'request')?.event;
  const revalidation = revalidationOf(sent?.type === 'exchange' ? sent.requestHeaders['if-none-match'] : undefined, e);
  return {
    ...at,
    stage: 'request',
    kind: 'response.received',
    message: `Response ${e.status} after the round trip, ${e.bytes} body bytes.${revalidation !== undefined ? ` ${revalidation}.` : ''}`,
    detail: { status: e.status, headers: e.headers, bytes: e.bytes, ...(revalidation !== undefined && { revalidation }) },
  };
}

function redact(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out = { ...headers };
  if (out.authorization !== undefined) out.authorization = '(simulated credential)';
  return out;
}
