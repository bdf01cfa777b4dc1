/**
 * Who may drive a session over the API (docs/security.md). A session started through the API
 * belongs to its caller: a person (`server.oidc`: the token's issuer and `sub`, from any browser
 * or client presenting a token for them), else the browser that holds the `a2ad_client` cookie it
 * was started with (HttpOnly, SameSite=Strict); and always any client presenting the
 * `sessionSecret` returned by the turn that created it (`X-Session-Secret`). Only the owner — or
 * an admin (the static bearer token, or a person with the admin role) — may continue, upgrade or
 * end it, and a listing shows a caller only its own sessions (plus those the embedding
 * application started in process, read-only).
 *
 * Secrets and client ids are kept as SHA-256 hashes; an entry goes when its pin is released.
 * Each session also counts against the fair-share key of the caller that started it (http/context.ts
 * `shareOf`), so `server.limits.maxSessionsPerClient` bounds what one client holds.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The cookie that identifies a browser (or any cookie-keeping client). */
export const CLIENT_COOKIE = 'a2ad_client';
/** The header a cookie-less client presents a session's secret in. */
export const SESSION_SECRET_HEADER = 'x-session-secret';

/**
 * Who is asking: their client id (from the cookie), the person their token names
 * ({@link personKey}), the secret they present, and whether they are an admin.
 */
export interface Caller {
  readonly clientId?: string;
  readonly person?: string;
  readonly secret?: string;
  readonly admin: boolean;
}

interface Owner {
  readonly client: Buffer | undefined;
  readonly secret: Buffer;
  /** The fair-share key the session is counted against (`server.limits.maxSessionsPerClient`); none for a restored one. */
  readonly share?: string;
}

const hash = (value: string): Buffer => createHash('sha256').update(value).digest();
const same = (a: Buffer | undefined, b: string | undefined): boolean => a !== undefined && b !== undefined && timingSafeEqual(a, hash(b));

/**
 * The owner key of a person: issuer and subject. Kept hashed like a client id (in the same
 * field, so a stored pin keeps its person across restarts); it cannot collide with a cookie value
 * (43 base64url characters).
 */
export function personKey(issuer: string, sub: string): string {
  return `person:${issuer}\n${sub}`;
}

/** A new random token (client ids and session secrets): 32 bytes, base64url. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export class SessionOwners {
  readonly #owners = new Map<string, Owner>();
  /** Sessions held per fair-share key (only keys holding at least one). */
  readonly #shares = new Map<string, number>();

  /**
   * Records `caller` as the owner of a new session; returns the session's secret. `share` is the
   * fair-share key it counts against ({@link held}) until its pin is released.
   */
  claim(sessionId: string, caller: Caller, share?: string): string {
    const secret = newToken();
    this.#forget(sessionId);
    const client = caller.person ?? caller.clientId;
    this.#owners.set(sessionId, { client: client !== undefined ? hash(client) : undefined, secret: hash(secret), ...(share !== undefined && { share }) });
    if (share !== undefined) this.#shares.set(share, (this.#shares.get(share) ?? 0) + 1);
    return secret;
  }

  /** Sessions claimed under the fair-share key `share` and still pinned. */
  held(share: string): number {
    return this.#shares.get(share) ?? 0;
  }

  /** Whether an API caller has claimed the session. */
  claimed(sessionId: string): boolean {
    return this.#owners.has(sessionId);
  }

  /**
   * Whether `caller` may drive `sessionId`: an admin always; otherwise its owner (the same person,
   * the same client cookie, or the session's secret). A session nobody claimed (started in
   * process) needs an admin.
   */
  allows(sessionId: string, caller: Caller): boolean {
    if (caller.admin) return true;
    const owner = this.#owners.get(sessionId);
    // A person's token names them wherever it comes from; without one, the browser's cookie.
    const client = caller.person ?? caller.clientId;
    return owner !== undefined && (same(owner.client, client) || same(owner.secret, caller.secret));
  }

  /** What a caller may see of a session in a listing: `own`, `in-process` (read-only), or nothing. */
  visibility(sessionId: string, caller: Caller): 'own' | 'in-process' | undefined {
    if (this.allows(sessionId, caller)) return 'own';
    return this.#owners.has(sessionId) ? undefined : 'in-process';
  }

  /** The owner's hashes (hex), to store with the session's pin; undefined for an unclaimed session. */
  export(sessionId: string): { ownerClient?: string; ownerSecret: string } | undefined {
    const owner = this.#owners.get(sessionId);
    if (!owner) return undefined;
    return { ...(owner.client && { ownerClient: owner.client.toString('hex') }), ownerSecret: owner.secret.toString('hex') };
  }

  /** Restores an owner stored by an earlier process (hashes only: the secrets were never stored). */
  restore(sessionId: string, hashes: { ownerClient?: string | undefined; ownerSecret: string }): void {
    this.#forget(sessionId);
    this.#owners.set(sessionId, { client: hashes.ownerClient === undefined ? undefined : Buffer.from(hashes.ownerClient, 'hex'), secret: Buffer.from(hashes.ownerSecret, 'hex') });
  }

  /** Forgets a session (its pin was released). */
  release(sessionId: string): void {
    this.#forget(sessionId);
  }

  #forget(sessionId: string): void {
    const share = this.#owners.get(sessionId)?.share;
    this.#owners.delete(sessionId);
    if (share === undefined) return;
    const n = (this.#shares.get(share) ?? 0) - 1;
    if (n > 0) this.#shares.set(share, n);
    else this.#shares.delete(share);
  }

  get size(): number {
    return this.#owners.size;
  }
}
