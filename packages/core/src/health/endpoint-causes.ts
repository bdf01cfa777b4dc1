/**
 * The causes an endpoint's verdict names, in the words an operator uses. One table for the API
 * (`EndpointState.cause`, `HealthStatus.cause`), the CLI (`a2a-discovery endpoints`), the
 * dashboard (its badges' explanations) and `docs/vocabulary.md`; a test holds the four to it.
 *
 * A cause is read from the error the pipeline classified (its stable code, stage and HTTP
 * status), never from a message. Each cause gives one verdict: a `refused` cause means the peer answered
 * and what it sent (or where it sent us) was refused, so the endpoint reads `refused`, never
 * `pending` or "failed fetch"; a `pending` cause is a failure to get an answer (asked again with
 * backoff, `removed` after repeated failures); the matcher's causes say why a valid card is
 * `unsuitable` or `excluded`.
 *
 * @module
 */
import type { DiscoveryErrorCode } from '../errors.js';

/** Why an endpoint is refused or failing. See {@link ENDPOINT_CAUSES} for each one's words. */
export type EndpointCause =
  | 'allowlist'
  | 'insecure-url'
  | 'address-blocked'
  | 'redirect'
  | 'unauthorized'
  | 'pin'
  | 'signature'
  | 'interface-host'
  | 'invalid-card'
  | 'too-large'
  | 'unreachable'
  | 'timeout'
  | 'http-error'
  | 'no-match'
  | 'unroutable'
  | 'credentials'
  | 'tenant'
  | 'lookalike'
  | 'name'
  | 'cap';

/** A cause in words: `label` for a badge or a CLI column, `meaning` for its explanation. */
export interface CauseWords {
  /** A few words (`refused by a pin`), the badge text. */
  readonly label: string;
  /** One or two sentences: what happened and what the operator can do. */
  readonly meaning: string;
  /**
   * The verdict this cause gives an endpoint with no usable card: `refused` (it answered and was
   * refused, or the allowlist refuses it), `pending` (no answer yet: it is retried, and leaves
   * snapshots as `removed` after repeated failures), or the matcher's `unsuitable` / `excluded`.
   */
  readonly verdict: 'refused' | 'pending' | 'unsuitable' | 'excluded';
}

/** Every cause, in the order the docs table lists them. */
export const ENDPOINT_CAUSES: Readonly<Record<EndpointCause, CauseWords>> = Object.freeze({
  allowlist: {
    label: 'refused by the allowlist',
    meaning: 'Its host is not named by the allowlist (allow), so it is never contacted. Add the host to the allowlist to admit it.',
    verdict: 'refused',
  },
  'insecure-url': {
    label: 'insecure URL refused',
    meaning: 'Its URL uses plain http: (or another scheme) where https: is required. Serve it over https, or allow plain http for loopback only (allowLoopback).',
    verdict: 'refused',
  },
  'address-blocked': {
    label: 'address blocked',
    meaning: 'Its name resolved to an address discovery never contacts (private, loopback, link-local or a blocked range), so the request was not sent. Check its DNS records.',
    verdict: 'refused',
  },
  redirect: {
    label: 'redirect refused',
    meaning: 'It answered with a redirect. Redirects are never followed (they could lead off the allowlist); register the final URL instead.',
    verdict: 'refused',
  },
  unauthorized: {
    label: 'unauthorized',
    meaning: 'It (or its token endpoint) answered 401 or 403: the credentials configured for its origin are missing or refused.',
    verdict: 'refused',
  },
  pin: {
    label: 'refused by a pin',
    meaning: "The card's SHA-256 differs from the digest its publisher pinned (a DNS record's capsha256 or an AI Catalog Trust Manifest): the card is not the one published.",
    verdict: 'refused',
  },
  signature: {
    label: 'signature refused',
    meaning: "The card's signature is missing where one is required, or does not verify against the trusted keys.",
    verdict: 'refused',
  },
  'interface-host': {
    label: 'interface host refused',
    meaning: 'The card was fetched, but the interface it names to call sits on a host the allowlist does not name (or uses an insecure scheme), so it would never be called.',
    verdict: 'refused',
  },
  'invalid-card': {
    label: 'invalid card',
    meaning: 'The card was fetched but is not a valid agent card (not JSON, or fields missing or wrong); the reason names the JSON path.',
    verdict: 'refused',
  },
  'too-large': {
    label: 'card too large',
    meaning: 'The answer exceeded the size limit for a card (cache.maxBodyBytes), so it was not read further.',
    verdict: 'refused',
  },
  unreachable: {
    label: 'unreachable',
    meaning: 'The request could not be made or was cut off (DNS, connection refused or reset, TLS). It is retried with backoff.',
    verdict: 'pending',
  },
  timeout: {
    label: 'timed out',
    meaning: 'It did not answer within the fetch timeout. It is retried with backoff.',
    verdict: 'pending',
  },
  'http-error': {
    label: 'HTTP error',
    meaning: 'It answered with an error status other than 401 or 403 (404, 500, …) or a body that could not be decoded. It is retried with backoff.',
    verdict: 'pending',
  },
  'no-match': {
    label: 'no need matches',
    meaning: 'A valid card whose skills, tags or input and output modes fit none of the needs (select.needs); the reason says what is missing.',
    verdict: 'unsuitable',
  },
  unroutable: {
    label: 'no callable interface',
    meaning: 'Its card names no interface a client here can call (an address such as 0.0.0.0, or no supported binding); a static entry with interfaceUrl can say where it answers.',
    verdict: 'unsuitable',
  },
  credentials: {
    label: 'no accepted credentials',
    meaning: "Its card requires a security scheme the credentials configured for its origin do not satisfy, so a call would be refused. Configure credentials for the origin.",
    verdict: 'excluded',
  },
  tenant: {
    label: 'another tenant',
    meaning: 'Its card serves a tenant other than the one this orchestrator is for.',
    verdict: 'excluded',
  },
  lookalike: {
    label: 'lookalike',
    meaning: "Its name looks like an earlier agent's from another origin (a possible impersonation); with lookalikes: exclude it is left out of snapshots.",
    verdict: 'excluded',
  },
  name: {
    label: 'name taken',
    meaning: 'Its local name is already used (by another agent, a reviewed agent or a routing domain) or is not a usable name; give it a static entry with its own name.',
    verdict: 'excluded',
  },
  cap: {
    label: 'cap reached',
    meaning: 'The cap of agents per tree (or per routing domain) was reached, or no routing domain lists its tags; higher-priority agents were kept.',
    verdict: 'excluded',
  },
});

/** What a cause is read from: a classified error's code, stage and HTTP status. */
export interface CauseSource {
  readonly code: DiscoveryErrorCode;
  readonly stage?: string;
  readonly status?: number;
}

/** The stages at which a fetched card's content is judged (an allowlist refusal there is about its interfaces). */
export const CONTENT_STAGES: ReadonlySet<string | undefined> = new Set(['parse', 'schema', 'policy', 'signature']);

/**
 * The cause of a classified error, or undefined for an error no cause describes (a store or
 * configuration fault, say).
 *
 * @example
 * causeOf({ code: 'ERR_DIGEST_MISMATCH', stage: 'signature' }) // 'pin'
 * causeOf({ code: 'ERR_FETCH_STATUS', stage: 'fetch', status: 401 }) // 'unauthorized'
 */
export function causeOf(e: CauseSource): EndpointCause | undefined {
  switch (e.code) {
    case 'ERR_HOST_NOT_ALLOWED':
      return CONTENT_STAGES.has(e.stage) ? 'interface-host' : 'allowlist';
    case 'ERR_INSECURE_URL':
      return CONTENT_STAGES.has(e.stage) ? 'interface-host' : 'insecure-url';
    case 'ERR_INSECURE_INTERFACE':
      return 'interface-host';
    case 'ERR_ADDRESS_BLOCKED':
      return 'address-blocked';
    case 'ERR_REDIRECT_REFUSED':
      return 'redirect';
    case 'ERR_DIGEST_MISMATCH':
      return 'pin';
    case 'ERR_SIGNATURE_MISSING':
    case 'ERR_SIGNATURE_INVALID':
      return 'signature';
    case 'ERR_CARD_MALFORMED':
    case 'ERR_CARD_INVALID':
      return 'invalid-card';
    case 'ERR_CARD_TOO_LARGE':
    case 'ERR_BODY_TOO_LARGE':
      return 'too-large';
    case 'ERR_FETCH_STATUS':
      return e.status === 401 || e.status === 403 ? 'unauthorized' : 'http-error';
    case 'ERR_CONTENT_ENCODING':
      return 'http-error';
    case 'ERR_FETCH_TIMEOUT':
      return 'timeout';
    case 'ERR_FETCH_NETWORK':
      return 'unreachable';
    default:
      return undefined;
  }
}

/** Whether a cause means the endpoint was refused (it answered and was refused, or the allowlist refuses it). */
export function causeRefuses(cause: EndpointCause | undefined): boolean {
  return cause !== undefined && ENDPOINT_CAUSES[cause].verdict === 'refused';
}

/**
 * The one verdict shown for an endpoint, from the first stage that decides it. Each one's meaning
 * is in {@link ENDPOINT_VERDICTS}.
 */
export type EndpointVerdict = 'refused' | 'gone' | 'pending' | 'removed' | 'unsuitable' | 'excluded' | 'held' | 'degraded' | 'selected';

/**
 * Every verdict and what it means, in the order the docs table lists them (docs/vocabulary.md;
 * the dashboard explains its badges with the same words, and a test holds the three together).
 */
export const ENDPOINT_VERDICTS: Readonly<Record<EndpointVerdict, string>> = Object.freeze({
  selected: 'In the published snapshot: conversations can be routed to it.',
  degraded: 'In the published snapshot, but its card is served stale or its calls fail; it stays while that lasts (a critical agent is never removed).',
  held: 'It should leave the snapshot, but the removal guard holds it back (too many removals at once); confirm to publish without it.',
  pending: 'Admitted, not in a snapshot yet: no usable card so far (it is being fetched, or failing to answer), or not enough good observations in a row.',
  refused: 'Never in a snapshot: the allowlist refuses its host, or it answered and what it sent was refused (a pin, a signature, 401/403, a redirect, an interface host). The cause says which.',
  removed: 'It left new snapshots after repeated failures (fetches or calls); it returns after good observations in a row.',
  unsuitable: 'A valid card that no need matches (its skills, tags or modes do not fit); it stays cached.',
  excluded: 'A valid card left out by a rule: its name is taken, it looks like another agent, it serves another tenant, no configured credentials satisfy it, or the cap was reached. The cause says which.',
  gone: 'No source proposes it any more; it is forgotten after the removal grace period.',
});
