/**
 * Opaque, tamper-evident page tokens: `base64url(JSON payload).base64url(HMAC-SHA256)` under a
 * key drawn at start (a token from another process, or after a restart, does not open). Each
 * carries its expiry; the payload is ours (the search's pin, the list's last identifier, the
 * change feed's last sequence number) and the hash of the request it continues.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export class PageTokens {
  readonly #key = randomBytes(32);
  readonly #ttlMs: number;
  readonly #now: () => number;

  constructor(ttlMs: number, now: () => number = Date.now) {
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  /** A token carrying `payload` (and its expiry). */
  seal(payload: Record<string, unknown>): string {
    const body = Buffer.from(JSON.stringify({ ...payload, exp: this.#now() + this.#ttlMs })).toString('base64url');
    return `${body}.${this.#mac(body)}`;
  }

  /** The payload of `token`, or why it is refused. */
  open(token: string): { ok: true; payload: Record<string, unknown> } | { ok: false; reason: string } {
    const [body, mac, extra] = token.split('.');
    if (body === undefined || mac === undefined || extra !== undefined) return { ok: false, reason: 'the pageToken is not one this registry issued' };
    const want = Buffer.from(this.#mac(body));
    const given = Buffer.from(mac);
    if (want.length !== given.length || !timingSafeEqual(want, given)) return { ok: false, reason: 'the pageToken is not one this registry issued (altered, or issued before a restart)' };
    let payload: unknown;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return { ok: false, reason: 'the pageToken is not one this registry issued' };
    }
    if (typeof payload !== 'object' || payload === null) return { ok: false, reason: 'the pageToken is not one this registry issued' };
    const p = payload as Record<string, unknown>;
    if (typeof p['exp'] !== 'number' || p['exp'] < this.#now()) return { ok: false, reason: 'the pageToken has expired (server.registry.pageTokenTtlMs); start again from the first page' };
    return { ok: true, payload: p };
  }

  #mac(body: string): string {
    return createHmac('sha256', this.#key).update(body).digest('base64url').slice(0, 22);
  }
}

/** A short hash of a request's query, so a token continues only the request it was issued for. */
export function requestHash(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value) ?? '').digest('base64url').slice(0, 16);
}
