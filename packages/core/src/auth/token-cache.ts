/**
 * One cached bearer token (an OAuth 2.0 access token, a Google ID token): kept until shortly
 * before it expires (a token whose lifetime is 0 — `expires_in: 0` — is used once, for the
 * request that obtained it, and never kept; without a lifetime, `defaultLifetimeMs`), obtained single-flight (any number of concurrent callers, one request),
 * dropped when a peer answers 401, and after a failure not asked for again before a capped,
 * jittered backoff has passed, so an identity provider in trouble is not hammered.
 *
 * @module
 */
import { backoffDelay } from '../rules/backoff.js';
import { type Clock, type Random, systemClock, systemRandom } from '../clock/index.js';
import { DiscoveryError, isDiscoveryError } from '../errors.js';

/** What one token request produced. */
interface IssuedToken {
  /** The token (a secret: never logged, never in a message). */
  readonly token: string;
  /** Its lifetime from now, in ms, when the issuer said (`expires_in`, a JWT's `exp`); 0 or less: use once. */
  readonly lifetimeMs?: number;
}

/** How often tokens are requested and how they end, for a metric. */
export type TokenRequestOutcome = 'issued' | 'failed';

/** Shared by the token-based providers. Durations in ms. */
export interface TokenCacheOptions {
  /** Obtains a new token; throws a {@link DiscoveryError} whose message holds no secret. */
  request: (signal: AbortSignal) => Promise<IssuedToken>;
  /** Default {@link systemClock}. */
  clock?: Clock;
  /** Jitter of the failure backoff. Default {@link systemRandom}. */
  random?: Random;
  /**
   * A token is replaced this long before it expires, but never earlier than 10 % of its lifetime
   * before (a 60 s token is replaced 6 s before). Default 60000.
   */
  refreshBeforeMs?: number;
  /** The lifetime assumed when the issuer names none. Default 300000 (5 minutes). */
  defaultLifetimeMs?: number;
  /** First wait after a failed request, doubled per failure up to {@link maxBackoffMs}. Default 1000. */
  minBackoffMs?: number;
  /** Default 60000. */
  maxBackoffMs?: number;
  /** Told of every token request's outcome. */
  onRequest?: (outcome: TokenRequestOutcome) => void;
}

/** Defaults of {@link TokenCacheOptions}. */
const TOKEN_CACHE_DEFAULTS = Object.freeze({ refreshBeforeMs: 60_000, defaultLifetimeMs: 300_000, minBackoffMs: 1000, maxBackoffMs: 60_000 });

interface Held {
  readonly token: string;
  /** clock.now() past which the token is replaced. */
  readonly refreshAt: number;
  /** clock.now() past which the token is no longer valid at all. */
  readonly expiresAt: number;
}

export class TokenCache {
  readonly #o: TokenCacheOptions;
  readonly #clock: Clock;
  readonly #random: Random;
  #held: Held | undefined;
  /** The request under way; `once`: its token is for one request only (joiners ask again). */
  #inFlight: Promise<{ token: string; once: boolean }> | undefined;
  #failures = 0;
  #retryAt = 0;
  #lastError: DiscoveryError | undefined;
  readonly #closing = new AbortController();

  constructor(options: TokenCacheOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? systemRandom;
  }

  /** The current token, requesting one when none is held or it is about to expire. */
  get(): Promise<string> {
    if (this.#closing.signal.aborted) return Promise.reject(new DiscoveryError('ERR_USAGE', 'the credentials provider is closed', { stage: 'fetch' }));
    const now = this.#clock.now();
    const held = this.#held;
    if (held !== undefined && now < held.refreshAt) return Promise.resolve(held.token);
    // A use-once token goes to the caller whose request obtained it; the others ask again, in turn.
    if (this.#inFlight !== undefined) return this.#inFlight.then((got) => (got.once ? this.get() : got.token));
    if (now < this.#retryAt) {
      // Backing off: a token still valid serves; otherwise the last failure, without a request.
      if (held !== undefined && now < held.expiresAt) return Promise.resolve(held.token);
      const last = this.#lastError!;
      const waitS = Math.max(1, Math.ceil((this.#retryAt - now) / 1000));
      return Promise.reject(new DiscoveryError(last.code, `${last.message} (not retried for ${waitS} s)`, { stage: 'fetch', ...(last.url !== undefined && { url: last.url }) }));
    }
    const flight = this.#request().finally(() => {
      this.#inFlight = undefined;
    });
    this.#inFlight = flight;
    return flight.then((got) => got.token);
  }

  /**
   * A peer refused the token: drop it, so the next {@link get} requests a new one. While a
   * request is already under way the token it brings is the fresh one, so nothing is dropped.
   */
  invalidate(): void {
    if (this.#inFlight === undefined) this.#held = undefined;
  }

  close(): void {
    this.#closing.abort(new DiscoveryError('ERR_USAGE', 'the credentials provider was closed', { stage: 'fetch' }));
    this.#held = undefined;
  }

  async #request(): Promise<{ token: string; once: boolean }> {
    const started = this.#clock.now();
    let issued: IssuedToken;
    try {
      issued = await this.#o.request(this.#closing.signal);
    } catch (err) {
      this.#o.onRequest?.('failed');
      this.#failures++;
      const min = this.#o.minBackoffMs ?? TOKEN_CACHE_DEFAULTS.minBackoffMs;
      const max = this.#o.maxBackoffMs ?? TOKEN_CACHE_DEFAULTS.maxBackoffMs;
      // Jitter over the upper half of the delay: many replicas do not retry in step.
      this.#retryAt = this.#clock.now() + backoffDelay(this.#failures, { baseMs: min, maxMs: max, jitter: 0.5, random: this.#random });
      this.#lastError = isDiscoveryError(err) ? err : new DiscoveryError('ERR_FETCH_NETWORK', 'token request failed', { stage: 'fetch' });
      const held = this.#held;
      if (held !== undefined && this.#clock.now() < held.expiresAt) return { token: held.token, once: false };
      throw this.#lastError;
    }
    this.#o.onRequest?.('issued');
    this.#failures = 0;
    this.#retryAt = 0;
    this.#lastError = undefined;
    if (issued.lifetimeMs !== undefined && Number.isFinite(issued.lifetimeMs) && issued.lifetimeMs <= 0) {
      // `expires_in: 0`: valid for this one request; nothing is kept (a token held before is dropped).
      this.#held = undefined;
      return { token: issued.token, once: true };
    }
    const lifetime = issued.lifetimeMs !== undefined && Number.isFinite(issued.lifetimeMs) ? issued.lifetimeMs : (this.#o.defaultLifetimeMs ?? TOKEN_CACHE_DEFAULTS.defaultLifetimeMs);
    const skew = Math.min(this.#o.refreshBeforeMs ?? TOKEN_CACHE_DEFAULTS.refreshBeforeMs, lifetime / 10);
    // The lifetime counts from the request's start: the answer's transit is not the token's.
    this.#held = { token: issued.token, refreshAt: started + lifetime - skew, expiresAt: started + lifetime };
    return { token: issued.token, once: false };
  }
}
