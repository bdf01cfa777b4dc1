/**
 * One truth on every replica: a follower runs no discovery cycle, so its own endpoint states,
 * source states and cache activity are empty. It answers `GET /api/endpoints`, `/api/sources` and
 * `/api/activity` (and an endpoint's cached card, `/api/endpoints/card`) with the leader's instead, read from the URL the leader advertised in the epoch
 * row (`a2ad_leader.url`, `replica.advertiseUrl`).
 *
 * That URL comes from the store, which is not trusted with a credential: the follower sends its
 * request only to a URL `replica.leaderUrls` allows (loopback only when unset; https outside
 * loopback), and a refused one is logged, counted (`leader_url`) and alerted. The request carries
 * no admin token: it is signed with the replicas' shared key (replica-auth.ts), and the leader's
 * answer is refused unless it is signed with that key too. Without a key the follower does not ask.
 *
 * The request goes through the library's guarded fetch, like every outbound request: only that
 * URL's origin (one of the paths, the caller's query), every resolved and connected address judged
 * (loopback, the private ranges replicas share and `allowCidrs`; never link-local such as the cloud
 * metadata address, unspecified, multicast or reserved), a timeout on the whole answer, a body cap,
 * no redirect followed. The answer is marked `servedBy` (the leader's id). When the leader cannot be reached
 * the follower says so (503, `leaderUnreachable: true`): it never shows its own empty view as if it
 * were the truth. docs/deployment.md describes the design.
 */
import { networkInterfaces } from 'node:os';
import type { ReplicaStatus } from '@a2a-discovery/store';
import { isDiscoveryError } from 'a2a-discovery';
import { createDeploymentFetch, redactUrl, type GuardedFetch } from 'a2a-discovery/internal';
import type { Resolver } from 'a2a-discovery/internal';
import { DEFAULT_SERVER_LIMITS } from '../http/limits.js';
import type { LeaderPath, ReplicaAuth } from '../auth/replica-auth.js';
import { LeaderUrls, REPLICA_AUTH_HEADER, REPLICA_SIGNATURE_HEADER } from '../auth/replica-auth.js';

export type { LeaderPath } from '../auth/replica-auth.js';

export interface FollowerProxyOptions {
  /** This replica's role and the leader it last read. */
  status: () => ReplicaStatus;
  /** The replicas' keys (replica-auth.ts): signs the request and checks the answer; none configured: nothing is asked. */
  auth?: ReplicaAuth;
  /** Where a leader may be (`replica.leaderUrls`); a URL it refuses is never sent to. Default: loopback only. */
  leaderUrls?: LeaderUrls;
  /** A leader URL refused (each time: the metric). */
  onRefusal?: () => void;
  /** A leader URL refused, once per URL and reason in a row (the log line and the alert). `url` is redacted. */
  onLeaderUrlRefused?: (url: string, why: string) => void;
  /** How long to wait for the leader's whole answer (`server.limits.leaderTimeoutMs`). */
  timeoutMs?: number;
  /** The largest answer taken from the leader (`server.limits.leaderMaxBytes`). */
  maxBytes?: number;
  /** Address ranges (CIDR) a leader may be at besides loopback and the private ranges (the configuration's `allowCidrs`). */
  allowCidrs?: readonly string[];
  /** DNS override for the leader's host name (tests). */
  resolve?: Resolver;
}


export interface LeaderAnswer {
  status: 200 | 400 | 404 | 503;
  body: Record<string, unknown>;
}

export class FollowerProxy {
  readonly #o: FollowerProxyOptions;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  /** The guarded fetch to the current leader's origin (a new leader elsewhere: a new one). */
  #leader: { origin: string; fetch: GuardedFetch } | undefined;
  #closed = false;
  #lastRefused: string | undefined;
  #leaderUrls: LeaderUrls;

  constructor(o: FollowerProxyOptions) {
    this.#o = o;
    this.#leaderUrls = o.leaderUrls ?? new LeaderUrls(undefined);
    this.#timeoutMs = o.timeoutMs ?? DEFAULT_SERVER_LIMITS.leaderTimeoutMs;
    this.#maxBytes = o.maxBytes ?? DEFAULT_SERVER_LIMITS.leaderMaxBytes;
  }

  #fetchFor(origin: string): GuardedFetch {
    if (this.#leader?.origin === origin) return this.#leader.fetch;
    void this.#leader?.fetch.close();
    const fetch = createDeploymentFetch({
      origin,
      ...(this.#o.allowCidrs !== undefined && { allowCidrs: this.#o.allowCidrs }),
      ...(this.#o.resolve !== undefined && { resolve: this.#o.resolve }),
      timeoutMs: this.#timeoutMs,
      maxResponseBytes: this.#maxBytes,
      maxResponseName: 'server.limits.leaderMaxBytes',
    });
    this.#leader = { origin, fetch };
    return fetch;
  }

  /**
   * The leader's answer to `path` with the caller's `search` (`?…`), or undefined when this
   * replica leads (it answers itself).
   */
  async answer(path: LeaderPath, search: string): Promise<LeaderAnswer | undefined> {
    const s = this.#o.status();
    if (s.role === 'leader') return undefined;
    const who = `this replica (${s.id}) follows ${s.leader ?? 'no leader yet'} (epoch ${s.epoch})`;
    if (s.leader === null || s.leader === s.id) return unreachable(s, `${who}: no other replica leads yet, and a follower runs no discovery of its own`);
    if (s.leaderUrl === null) return unreachable(s, `${who}, which advertised no URL to reach it (replica.advertiseUrl)`);
    const target = leaderTarget(s.leaderUrl, path, search);
    if (target === undefined) return unreachable(s, `${who}, whose advertised URL is not an http(s) URL (replica.advertiseUrl)`);
    const refused = this.#leaderUrls.refusal(target);
    if (refused !== undefined) {
      const url = redactUrl(s.leaderUrl);
      this.#o.onRefusal?.();
      if (this.#lastRefused !== `${url} ${refused}`) this.#o.onLeaderUrlRefused?.(url, refused);
      this.#lastRefused = `${url} ${refused}`;
      return unreachable(s, `${who}, whose advertised URL ${url} this replica does not send to: ${refused}`);
    }
    this.#lastRefused = undefined;
    const auth = this.#o.auth;
    const signed = auth?.sign('GET', `${path}${target.search}`, s.id);
    if (auth === undefined || signed === undefined) return unreachable(s, `${who}, which this replica does not ask: no replica key is configured (replica.keyEnv or replica.keyFile, shared by every replica)`);
    if (this.#closed) return unreachable(s, `${who}: this replica is stopping`);
    try {
      const res = await this.#fetchFor(target.origin)(target, {
        method: 'GET',
        headers: { accept: 'application/json', [REPLICA_AUTH_HEADER]: signed.header },
      });
      const bytes = new Uint8Array(await res.arrayBuffer());
      // 400 (a bad query) and 404 (no card cached for that endpoint) are the leader's answers too.
      if (res.status !== 200 && res.status !== 400 && res.status !== 404) {
        const why = res.status === 401 ? 'refused this replica’s signature (401: the replicas must share replica.keyEnv or replica.keyFile)' : `answered HTTP ${res.status}`;
        return unreachable(s, `${who}, which ${why}`);
      }
      if (!auth.verifyResponse(signed, res.status, bytes, res.headers.get(REPLICA_SIGNATURE_HEADER))) {
        return unreachable(s, `${who}, which answered without a valid replica signature (${REPLICA_SIGNATURE_HEADER}): the server there does not hold the replica key, so its answer is not shown`);
      }
      const text = new TextDecoder().decode(bytes);
      const body = JSON.parse(text) as unknown;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) return unreachable(s, `${who}, which answered something other than a JSON object`);
      return { status: res.status as LeaderAnswer['status'], body: { ...(body as Record<string, unknown>), servedBy: (body as { servedBy?: unknown }).servedBy ?? s.leader } };
    } catch (err) {
      if (!isDiscoveryError(err)) return unreachable(s, `${who}, which answered something other than JSON`);
      const reason: Partial<Record<string, string>> = {
        ERR_FETCH_TIMEOUT: `did not answer within ${this.#timeoutMs} ms`,
        ERR_BODY_TOO_LARGE: `answered larger than ${this.#maxBytes} bytes (server.limits.leaderMaxBytes)`,
        ERR_REDIRECT_REFUSED: 'answered with a redirect, which a follower does not follow',
        ERR_ADDRESS_BLOCKED: `is at an address a follower never contacts (${err.message})`,
      };
      // The socket's own code (ECONNREFUSED, ENOTFOUND) says it best; the classified message otherwise.
      const cause = /\(([A-Z][A-Z0-9_]+)\)$/.exec(err.message)?.[1] ?? err.message;
      return unreachable(s, `${who}, which ${reason[err.code] ?? `could not be reached (${cause})`}`);
    }
  }

  /** A reload changed `replica.leaderUrls`: the next request is judged by `next`. */
  set leaderUrls(next: LeaderUrls) {
    this.#leaderUrls = next;
    this.#lastRefused = undefined;
  }

  /** Cuts requests in flight (the service stops). */
  close(): void {
    this.#closed = true;
    void this.#leader?.fetch.close();
    this.#leader = undefined;
  }
}

/**
 * The URL a leader advertises by default: the one it listens on, except that a wildcard bind
 * (`0.0.0.0`, `::`) names no address another host can use, so the first external IPv4 address of
 * this machine is taken instead (in a pod, the pod IP; IPv6 when there is no IPv4), keeping the
 * port. `interfaces`: for tests.
 */
export function defaultAdvertiseUrl(listening: string, interfaces: ReturnType<typeof networkInterfaces> = networkInterfaces()): string {
  const url = new URL(listening);
  if (url.hostname !== '0.0.0.0' && url.hostname !== '[::]') return listening;
  const external = Object.values(interfaces)
    .flatMap((list) => list ?? [])
    .filter((i) => !i.internal);
  const address = external.find((i) => i.family === 'IPv4') ?? external.find((i) => i.family === 'IPv6' && !i.address.startsWith('fe80:'));
  if (address === undefined) return listening;
  url.hostname = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return url.toString().replace(/\/$/, '');
}

/** The 503 a follower gives when it cannot show the leader's answer. */
function unreachable(s: ReplicaStatus, why: string): LeaderAnswer {
  return {
    status: 503,
    body: {
      error: 'leader-unreachable',
      leaderUnreachable: true,
      replica: { id: s.id, role: s.role, epoch: s.epoch, leader: s.leader },
      message: `${why}. These lists are the leader's (a follower runs no discovery): none is shown rather than an empty one. Retry shortly, or ask the leader.`,
    },
  };
}

/** The leader's URL for `path` + `search`, on the advertised origin only; undefined when it is not an http(s) URL. */
function leaderTarget(leaderUrl: string, path: string, search: string): URL | undefined {
  if (!URL.canParse(leaderUrl)) return undefined;
  const base = new URL(leaderUrl);
  if (base.protocol !== 'http:' && base.protocol !== 'https:') return undefined;
  const target = new URL(`${base.pathname.replace(/\/+$/, '')}${path}${search}`, base.origin);
  return target.origin === base.origin ? target : undefined;
}
