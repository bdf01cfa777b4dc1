/**
 * One truth on every replica: a follower runs no discovery cycle, so its own endpoint states,
 * source states and cache activity are empty. It answers `GET /api/endpoints`, `/api/sources` and
 * `/api/activity` (and an endpoint's cached card, `/api/endpoints/card`) with the leader's instead, read from the URL the leader advertised in the epoch
 * row (`a2ad_leader.url`, `replica.advertiseUrl`).
 *
 * The request is bounded: only that URL (the leader's origin, one of the three paths, the caller's
 * query), a timeout, a body cap, no redirect followed, the service's own bearer token attached when
 * it has one. The answer is marked `servedBy` (the leader's id). When the leader cannot be reached
 * the follower says so (503, `leaderUnreachable: true`): it never shows its own empty view as if it
 * were the truth. docs/deployment.md describes the design.
 */
import { networkInterfaces } from 'node:os';
import type { ReplicaStatus } from '@a2a-discovery/store';
import { DiscoveryError } from 'a2a-discovery';
import { DEFAULT_SERVER_LIMITS } from './limits.js';

/** The paths a follower answers from the leader. */
export type LeaderPath = '/api/endpoints' | '/api/endpoints/card' | '/api/sources' | '/api/activity';

/** Sent with a follower's request: the leader answers it itself, and a replica that no longer leads refuses it (no loop). */
export const FOLLOWER_HEADER = 'x-a2ad-follower';


export interface FollowerProxyOptions {
  /** This replica's role and the leader it last read. */
  status: () => ReplicaStatus;
  /** The service's bearer token, sent to the leader (replicas share one configuration). */
  token?: string;
  /** How long to wait for the leader's whole answer (`server.limits.leaderTimeoutMs`). */
  timeoutMs?: number;
  /** The largest answer taken from the leader (`server.limits.leaderMaxBytes`). */
  maxBytes?: number;
}

export interface LeaderAnswer {
  status: 200 | 400 | 404 | 503;
  body: Record<string, unknown>;
}

export class FollowerProxy {
  readonly #o: FollowerProxyOptions;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #closed = new AbortController();

  constructor(o: FollowerProxyOptions) {
    this.#o = o;
    this.#timeoutMs = o.timeoutMs ?? DEFAULT_SERVER_LIMITS.leaderTimeoutMs;
    this.#maxBytes = o.maxBytes ?? DEFAULT_SERVER_LIMITS.leaderMaxBytes;
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
    const signal = AbortSignal.any([AbortSignal.timeout(this.#timeoutMs), this.#closed.signal]);
    try {
      const res = await fetch(target, {
        method: 'GET',
        redirect: 'error',
        signal,
        headers: { accept: 'application/json', [FOLLOWER_HEADER]: s.id, ...(this.#o.token !== undefined && this.#o.token !== '' && { authorization: `Bearer ${this.#o.token}` }) },
      });
      const text = await readCapped(res, this.#maxBytes);
      // 400 (a bad query) and 404 (no card cached for that endpoint) are the leader's answers too.
      if (res.status !== 200 && res.status !== 400 && res.status !== 404) {
        const why = res.status === 401 ? 'refused this replica’s bearer token (401: the replicas must share server.tokenEnv/tokenFile)' : `answered HTTP ${res.status}`;
        return unreachable(s, `${who}, which ${why}`);
      }
      const body = JSON.parse(text) as unknown;
      if (typeof body !== 'object' || body === null || Array.isArray(body)) return unreachable(s, `${who}, which answered something other than a JSON object`);
      return { status: res.status as LeaderAnswer['status'], body: { ...(body as Record<string, unknown>), servedBy: (body as { servedBy?: unknown }).servedBy ?? s.leader } };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      const cause = e.cause?.code ?? e.cause?.message ?? e.message;
      const reason =
        e.name === 'TimeoutError'
          ? `did not answer within ${this.#timeoutMs} ms`
          : e.message.startsWith('larger than')
            ? `answered ${e.message}`
            : /redirect/i.test(cause)
              ? 'answered with a redirect, which a follower does not follow'
              : `could not be reached (${cause})`;
      return unreachable(s, `${who}, which ${reason}`);
    }
  }

  /** Cuts requests in flight (the service stops). */
  close(): void {
    this.#closed.abort();
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

/** The body of `res` as text, refused past `maxBytes` (the stream is cancelled). */
async function readCapped(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel().catch(() => undefined);
    throw new DiscoveryError('ERR_BODY_TOO_LARGE', `larger than ${maxBytes} bytes (server.limits.leaderMaxBytes)`);
  }
  if (!res.body) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new DiscoveryError('ERR_BODY_TOO_LARGE', `larger than ${maxBytes} bytes (server.limits.leaderMaxBytes)`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}
