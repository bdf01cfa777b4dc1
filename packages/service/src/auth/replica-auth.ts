/**
 * How replicas authenticate each other (docs/deployment.md "Replica key"), used by both sides:
 *
 * - A follower asks the leader's lists with `x-a2ad-replica-auth`: an HMAC-SHA256, under the shared
 *   replica key (`replica.keyEnv` / `replica.keyFile`, never the service's admin token), over the
 *   method, the leader path with its query, a timestamp, a nonce and the follower's replica id.
 * - The leader verifies it (constant-time, the timestamp within `replica.authWindowMs`, the nonce
 *   not seen within the window: a set bounded by `replica.maxNonces`) and admits the request only to
 *   the leader paths ({@link LEADER_PATHS}), as a `replica` actor (request-guard.ts) with no other right.
 * - The leader signs its answer (`x-a2ad-replica-signature`: HMAC over the request's nonce, the
 *   status and the body's SHA-256) and the follower refuses an answer whose signature does not
 *   verify: a server that holds no key cannot answer for the leader.
 * - Rotation: a reload that reads a new key keeps the one before accepted for `replica.keyGraceMs`;
 *   a follower signs with every key it accepts, so replicas reloaded at different times still agree.
 *
 * And where a follower may send its request at all ({@link LeaderUrls}): the leader URL is read from
 * the store, which is not trusted with a credential; only URLs `replica.leaderUrls` allows (https
 * outside loopback), or loopback ones when it is unset.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from 'a2a-discovery';
import type { RangeOrigin } from 'a2a-discovery/internal';
import { DiscoveryError, HostPolicy } from 'a2a-discovery';
import { inRangeOrigin, isLoopbackHost, looksLikeRangeOrigin, parseRangeOrigin } from 'a2a-discovery/internal';
import { REPLICA_DEFAULTS } from 'a2a-discovery/config';

/** The request header a follower signs its request with. */
export const REPLICA_AUTH_HEADER = 'x-a2ad-replica-auth';
/** The response header the leader signs its answer with. */
export const REPLICA_SIGNATURE_HEADER = 'x-a2ad-replica-signature';
/** The paths a replica's credential admits (GET only): the lists a follower shows from the leader. */
export const LEADER_PATHS = Object.freeze(['/api/endpoints', '/api/endpoints/card', '/api/sources', '/api/activity'] as const);
export type LeaderPath = (typeof LEADER_PATHS)[number];

export interface ReplicaAuthOptions {
  /** The replica key (`replica.keyEnv` / `replica.keyFile`); undefined: none configured, no replica is admitted and nothing is proxied. */
  key: string | undefined;
  authWindowMs?: number;
  maxNonces?: number;
  keyGraceMs?: number;
  /** Wall-clock time (epoch ms): timestamps are compared across machines. */
  clock: Pick<Clock, 'wallNow'>;
  /** Random bytes for nonces (tests). */
  random?: (size: number) => Buffer;
}

/** A request header made by {@link ReplicaAuth.sign}: what to send, and what verifies the answer. */
export interface SignedRequest {
  readonly header: string;
  readonly nonce: string;
  /** The keys signed with: the answer must be signed with one of them. */
  readonly keys: readonly Buffer[];
}

export type ReplicaVerdict = { ok: true; replica: string; nonce: string; key: Buffer } | { ok: false; reason: string };

const HEADER = /^v1;replica=([A-Za-z0-9%._~-]{1,512});ts=(\d{1,15});nonce=([A-Za-z0-9_-]{22,64})((?:;sig=[A-Za-z0-9_-]{43}){1,4})$/;
const RESPONSE = /^v1;sig=([A-Za-z0-9_-]{43})$/;

/** The keys this replica signs with and accepts, and the nonces it has seen. */
export class ReplicaAuth {
  readonly #windowMs: number;
  readonly #maxNonces: number;
  readonly #graceMs: number;
  readonly #clock: Pick<Clock, 'wallNow'>;
  readonly #random: (size: number) => Buffer;
  /** The current key first, then keys before it with the time they stop being accepted. */
  #keys: Array<{ key: Buffer; until: number }> = [];
  /** Nonce → the time its request's timestamp leaves the window (then the timestamp check refuses it anyway). */
  readonly #nonces = new Map<string, number>();

  constructor(o: ReplicaAuthOptions) {
    this.#windowMs = o.authWindowMs ?? REPLICA_DEFAULTS.authWindowMs;
    this.#maxNonces = o.maxNonces ?? REPLICA_DEFAULTS.maxNonces;
    this.#graceMs = o.keyGraceMs ?? REPLICA_DEFAULTS.keyGraceMs;
    this.#clock = o.clock;
    this.#random = o.random ?? randomBytes;
    if (o.key !== undefined) this.#keys = [{ key: keyBytes(o.key), until: Number.POSITIVE_INFINITY }];
  }

  /** Whether a replica key is configured. */
  get configured(): boolean {
    return this.#keys.length > 0;
  }

  /**
   * A reload read `key`: it becomes the key signed with; the one before stays accepted (and signed
   * with too) for `keyGraceMs`. Undefined: no key any more (nothing admitted, nothing proxied).
   */
  rotate(key: string | undefined): void {
    if (key === undefined) {
      this.#keys = [];
      return;
    }
    const next = keyBytes(key);
    const now = this.#clock.wallNow();
    const current = this.#accepted(now);
    if (current[0] !== undefined && current[0].equals(next)) return;
    this.#keys = [{ key: next, until: Number.POSITIVE_INFINITY }, ...this.#keys.filter((k) => k.until > now && !k.key.equals(next)).map((k) => ({ key: k.key, until: Math.min(k.until, now + this.#graceMs) }))].slice(0, 4);
  }

  /** Signs a follower's request for `method` `pathAndQuery` (the leader path and its `?…`) as `replica`; undefined without a key. */
  sign(method: string, pathAndQuery: string, replica: string): SignedRequest | undefined {
    const now = this.#clock.wallNow();
    const keys = this.#accepted(now);
    if (keys.length === 0) return undefined;
    const nonce = this.#random(16).toString('base64url');
    const ts = Math.round(now);
    const id = encodeURIComponent(replica);
    const text = requestText(method, pathAndQuery, ts, nonce, id);
    const sigs = keys.map((k) => `;sig=${hmac(k, text)}`).join('');
    return { header: `v1;replica=${id};ts=${ts};nonce=${nonce}${sigs}`, nonce, keys };
  }

  /**
   * The leader's check of a follower's `header` for `method` `pathAndQuery`: the signature under an
   * accepted key, the timestamp within the window, the nonce not seen before (then remembered).
   */
  verify(header: string, method: string, pathAndQuery: string): ReplicaVerdict {
    const now = this.#clock.wallNow();
    const keys = this.#accepted(now);
    if (keys.length === 0) return { ok: false, reason: 'this replica holds no replica key (replica.keyEnv or replica.keyFile)' };
    const m = HEADER.exec(header);
    if (m === null) return { ok: false, reason: `the ${REPLICA_AUTH_HEADER} header is malformed` };
    const [, id, tsText, nonce, sigList] = m as unknown as [string, string, string, string, string];
    const ts = Number(tsText);
    let replica: string;
    try {
      replica = decodeURIComponent(id);
    } catch {
      return { ok: false, reason: 'the replica id is not valid percent-encoding' };
    }
    const text = requestText(method, pathAndQuery, ts, nonce, id);
    const given = sigList.slice(5).split(';sig=').map((s) => Buffer.from(s, 'base64url'));
    const key = keys.find((k) => {
      const want = createHmac('sha256', k).update(text).digest();
      // Every given signature is compared (constant time each): which one matched is not told by timing.
      return given.map((g) => g.length === want.length && timingSafeEqual(g, want)).includes(true);
    });
    if (key === undefined) return { ok: false, reason: 'the signature does not verify with this replica’s key (the replicas must share replica.keyEnv or replica.keyFile)' };
    if (Math.abs(now - ts) > this.#windowMs) return { ok: false, reason: `the request’s timestamp is ${Math.round((now - ts) / 1000)} s away from this replica’s clock, beyond replica.authWindowMs (${this.#windowMs} ms): clock skew, or a replayed request` };
    this.#prune(now);
    if (this.#nonces.has(nonce)) return { ok: false, reason: 'the request’s nonce was seen before (a replayed request)' };
    if (this.#nonces.size >= this.#maxNonces) return { ok: false, reason: `more than replica.maxNonces (${this.#maxNonces}) replica requests within replica.authWindowMs; retry shortly` };
    this.#nonces.set(nonce, ts + this.#windowMs);
    return { ok: true, replica, nonce, key };
  }

  /** The leader's signature of its answer to the request with `nonce`, under the key that request verified with. */
  signResponse(key: Buffer, nonce: string, status: number, body: Uint8Array): string {
    return `v1;sig=${hmac(key, responseText(nonce, status, body))}`;
  }

  /** Whether `header` signs this answer (`status`, `body`) to the request `signed`. */
  verifyResponse(signed: SignedRequest, status: number, body: Uint8Array, header: string | null): boolean {
    const m = header === null ? null : RESPONSE.exec(header);
    if (m === null) return false;
    const given = Buffer.from(m[1]!, 'base64url');
    const text = responseText(signed.nonce, status, body);
    return signed.keys.map((k) => timingSafeEqual(given, createHmac('sha256', k).update(text).digest())).includes(true);
  }

  /** Nonces held now (metrics, tests). */
  get nonces(): number {
    return this.#nonces.size;
  }

  #accepted(now: number): Buffer[] {
    return this.#keys.filter((k) => k.until > now).map((k) => k.key);
  }

  /** Forgets nonces whose window has passed: every one when the set is full, else the oldest few. */
  #prune(now: number): void {
    if (this.#nonces.size >= this.#maxNonces) {
      for (const [n, until] of this.#nonces) if (until < now) this.#nonces.delete(n);
      return;
    }
    let checked = 0;
    for (const [n, until] of this.#nonces) {
      if (until >= now || ++checked > 8) break;
      this.#nonces.delete(n);
    }
  }
}

/**
 * Which leader URLs a follower may send its signed request to: those `replica.leaderUrls` allows
 * (origins, or `https://*.name` patterns, judged by the allowlist's rules: https outside loopback,
 * exact port), or, when it is unset, loopback URLs only (replicas on one machine).
 */
export class LeaderUrls {
  readonly #policy: HostPolicy | undefined;
  /** Origins over address ranges (`http://10.0.0.0/8:7340`): pods whose addresses no name covers. */
  readonly #ranges: readonly RangeOrigin[];

  /** @throws DiscoveryError `ERR_CONFIG_INVALID` naming the bad entry (as `replica.leaderUrls[i]`). */
  constructor(patterns: readonly string[] | undefined) {
    const ranges = (patterns ?? []).filter(looksLikeRangeOrigin).map((raw) => {
      const parsed = parseRangeOrigin(raw);
      if ('problem' in parsed) throw new DiscoveryError('ERR_CONFIG_INVALID', `replica.leaderUrls: ${parsed.problem}`, { path: 'replica.leaderUrls' });
      return parsed;
    });
    this.#ranges = ranges;
    this.#policy = patterns === undefined ? undefined : HostPolicy.from({ allow: patterns.filter((p) => !looksLikeRangeOrigin(p)), allowLoopback: true });
  }

  /** Why `url` is not a leader URL this follower sends to, or undefined when it is. */
  refusal(url: URL): string | undefined {
    if (this.#policy === undefined) {
      return isLoopbackHost(url.hostname) ? undefined : 'it is not on loopback, and replica.leaderUrls (the leader URLs replicas may use) is not set';
    }
    if (this.#ranges.some((r) => inRangeOrigin(r, url))) return undefined;
    const verdict = this.#policy.check(url);
    return verdict.allowed ? undefined : `it is not one replica.leaderUrls allows (${verdict.reason})`;
  }
}

function keyBytes(key: string): Buffer {
  return Buffer.from(key, 'utf8');
}

function hmac(key: Buffer, text: string): string {
  return createHmac('sha256', key).update(text).digest('base64url');
}

function requestText(method: string, pathAndQuery: string, ts: number, nonce: string, id: string): string {
  return `a2ad-replica-request/v1\n${method.toUpperCase()}\n${pathAndQuery}\n${ts}\n${nonce}\n${id}`;
}

function responseText(nonce: string, status: number, body: Uint8Array): string {
  return `a2ad-replica-response/v1\n${nonce}\n${status}\n${createHash('sha256').update(body).digest('hex')}`;
}
