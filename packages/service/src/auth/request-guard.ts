/**
 * The checks every request passes before a route sees it (docs/security.md):
 *
 * 1. `Host` must name the service: the bind address, `localhost`, `127.0.0.1`, `[::1]` or a
 *    configured name (`server.allowedHosts`); with a wildcard bind, any IP literal too. Anything
 *    else is 421, on every route: a DNS-rebinding page reaches us under its own name.
 * 2. The path must percent-decode (400 otherwise).
 * 3. A request signed by another replica (`x-a2ad-replica-auth`, replica-auth.ts) is verified with the
 *    replica key and admitted only to GET of the leader's lists, as a `replica` actor (401/403
 *    otherwise); its answer is signed. The admin token is never what a replica presents.
 * 4. With a token or people (`server.oidc`), `/api/*` and `/metrics` need `Authorization: Bearer
 *    <token>`: the static admin token, or a person's OIDC token (people-auth.ts) — 401 with
 *    `WWW-Authenticate` (RFC 6750: `error="invalid_token"` for a token that does not verify).
 *    Who the caller is ({@link Actor}) is left on the context for the role check (http/route.ts).
 * 5. On every method but GET and HEAD, an `Origin` that is not the service's own (or in
 *    `server.allowedOrigins`) is 403, and — unless the bearer token was given — the content type
 *    must be `application/json` (415): a cross-site form or `text/plain` fetch cannot send it
 *    without a CORS preflight, which the service never grants.
 *
 * Responses carry `X-Content-Type-Options: nosniff` and `Referrer-Policy: no-referrer`.
 */
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Context, MiddlewareHandler } from 'hono';
import { isLoopbackHost } from 'a2a-discovery/internal';
import type { OnRefusal } from '../http/limits.js';
import type { PeopleAuth, Person, Role } from './people-auth.js';
import { looksLikeJwt } from './people-auth.js';
import type { ReplicaAuth } from './replica-auth.js';
import { LEADER_PATHS, REPLICA_AUTH_HEADER, REPLICA_SIGNATURE_HEADER } from './replica-auth.js';
import { problem } from '../http/problem.js';

/**
 * Who a request comes from: nobody in particular (no token and no people configured: loopback
 * open, as before), the holder of the static admin token, or a person with a verified token.
 */
export type Actor =
  | { readonly kind: 'anonymous' }
  | { readonly kind: 'admin-token' }
  | { readonly kind: 'person'; readonly person: Person }
  /** Another replica, by its signed request (replica-auth.ts): the leader's lists only (GET {@link LEADER_PATHS}), no role, no other right. */
  | { readonly kind: 'replica'; readonly replica: string };

declare module 'hono' {
  interface ContextVariableMap {
    actor: Actor;
  }
}

/** The actor the guard left on `c` (anonymous when it left none). */
export function actorOf(c: Context): Actor {
  return c.get('actor') ?? { kind: 'anonymous' };
}

/** The role an actor holds: the admin token is the admin; anonymous (nothing configured) is undefined — everything is open. */
export function roleOf(actor: Actor): Role | undefined {
  return actor.kind === 'admin-token' ? 'admin' : actor.kind === 'person' ? actor.person.role : undefined;
}

/** Inputs of {@link requestGuard}. */
export interface RequestGuardOptions {
  /** The address the server is bound to (`127.0.0.1`, `::`, `0.0.0.0`, a name). */
  bindHost: string;
  /** Further host names (or IP literals) clients may use, e.g. a reverse proxy's. */
  allowedHosts?: readonly string[];
  /** Further origins allowed to make non-GET calls (`https://discovery.example.com`). */
  allowedOrigins?: readonly string[];
  token?: string;
  /** People with OIDC tokens (`server.oidc`). */
  people?: PeopleAuth;
  onRefusal?: OnRefusal;
  /** Several replicas: verifies another replica's signed request, and signs the answer (replica-auth.ts). */
  replicas?: ReplicaAuth;
  /** Paths under `/api/` answered without a token (`server.registry.anonymous`: the registry API); a token given is still checked. */
  openApiPath?: (path: string) => boolean;
}

/** Builds the middleware. */
export function requestGuard(o: RequestGuardOptions): MiddlewareHandler {
  const token = o.token !== undefined && o.token !== '' ? Buffer.from(o.token) : undefined;
  const wildcard = o.bindHost === '0.0.0.0' || o.bindHost === '::' || o.bindHost === '[::]';
  const hosts = new Set([...(wildcard ? [] : [hostName(o.bindHost)]), ...(o.allowedHosts ?? []).map(hostName)]);
  const origins = new Set((o.allowedOrigins ?? []).map((x) => x.toLowerCase().replace(/\/$/, '')));
  const refuse = o.onRefusal ?? (() => undefined);

  return async (c, next) => {
    const host = parseHost(c.req.header('host'));
    if (host === undefined) return problem(c, 400, 'bad-request', 'the Host header is missing or malformed');
    // Loopback names (the one rule, isLoopbackHost) always; others only as bound or configured.
    if (!hosts.has(host.name) && !isLoopbackHost(host.name) && !(wildcard && isIP(host.name.replace(/^\[|\]$/g, '')) !== 0)) {
      refuse('host');
      return problem(c, 421, 'misdirected', `this service does not answer to the host name ${host.name} (add it to server.allowedHosts if a proxy uses it)`);
    }
    try {
      decodeURIComponent(new URL(c.req.url).pathname);
    } catch {
      refuse('malformed_uri');
      return problem(c, 400, 'bad-request', 'the path is not valid percent-encoding');
    }

    const path = c.req.path;
    // Another replica: its signature, not a token, and only the leader's lists.
    const replicaHeader = c.req.header(REPLICA_AUTH_HEADER);
    if (replicaHeader !== undefined) return replicaRequest(c, next, replicaHeader, o.replicas, refuse);
    const isApi = (path.startsWith('/api/') && o.openApiPath?.(path) !== true) || path === '/metrics';
    let authorized = false;
    if (token !== undefined && (isApi || c.req.header('authorization') !== undefined)) {
      authorized = presentsToken(c, token);
      if (authorized) c.set('actor', { kind: 'admin-token' });
    }
    if (!authorized && o.people !== undefined && isApi) {
      const header = c.req.header('authorization');
      const bearer = header?.startsWith('Bearer ') === true ? header.slice(7).trim() : undefined;
      if (bearer !== undefined && looksLikeJwt(bearer)) {
        const verified = await o.people.verify(bearer);
        if (!verified.ok) {
          refuse('unauthorized');
          c.header('WWW-Authenticate', `Bearer realm="a2a-discovery", error="invalid_token", error_description="${verified.message.replace(/[’‘]/g, "'").replace(/[^\x20-\x7e]|["\\]/g, '')}"`);
          return problem(c, 401, 'unauthorized', `the bearer token is not accepted: ${verified.message}`);
        }
        authorized = true;
        c.set('actor', { kind: 'person', person: verified.person });
      }
    }
    if (!authorized && isApi && (token !== undefined || o.people !== undefined)) {
      refuse('unauthorized');
      const given = c.req.header('authorization') !== undefined;
      c.header('WWW-Authenticate', given ? 'Bearer realm="a2a-discovery", error="invalid_token", error_description="the bearer token is not accepted"' : 'Bearer realm="a2a-discovery"');
      return problem(c, 401, 'unauthorized', given ? 'the bearer token is not accepted (Authorization: Bearer <token>)' : 'a bearer token is required (Authorization: Bearer <token>)');
    }

    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const origin = c.req.header('origin');
      if (origin !== undefined && !sameOrigin(origin, host.raw) && !origins.has(origin.toLowerCase())) {
        refuse('origin');
        return problem(c, 403, 'forbidden', `requests from ${origin} are not allowed (the service only accepts its own origin; see server.allowedOrigins)`);
      }
      if (!authorized && !isJsonType(c.req.header('content-type'))) {
        refuse('content_type');
        return problem(c, 415, 'unsupported-media-type', 'state-changing requests must be sent as Content-Type: application/json');
      }
    }
    await next();
    securityHeaders(c);
  };
}

/**
 * A request signed by another replica: admitted (actor `replica`) only to GET of a leader path with
 * a signature that verifies; the answer is signed under the same key, over the request's nonce.
 */
async function replicaRequest(c: Context, next: () => Promise<void>, header: string, auth: ReplicaAuth | undefined, refuse: OnRefusal): Promise<Response | void> {
  const path = c.req.path;
  const deny = (status: 401 | 403, message: string): Response => {
    refuse('replica_auth');
    return problem(c, status, status === 401 ? 'unauthorized' : 'forbidden', message);
  };
  if (auth === undefined || !auth.configured) return deny(401, 'this replica holds no replica key (replica.keyEnv or replica.keyFile), so it admits no other replica');
  if (c.req.method !== 'GET' || !(LEADER_PATHS as readonly string[]).includes(path)) {
    return deny(403, `a replica's signature admits only GET ${LEADER_PATHS.join(', ')}`);
  }
  const verdict = auth.verify(header, 'GET', `${path}${new URL(c.req.url).search}`);
  if (!verdict.ok) return deny(401, `the replica signature is not accepted: ${verdict.reason}`);
  c.set('actor', { kind: 'replica', replica: verdict.replica });
  await next();
  // The leader's lists are JSON answers, never streams: the body is read to sign it.
  const body = new Uint8Array(await c.res.clone().arrayBuffer());
  c.res.headers.set(REPLICA_SIGNATURE_HEADER, auth.signResponse(verdict.key, verdict.nonce, c.res.status, body));
  securityHeaders(c);
}

/**
 * Whether `c` carries `Authorization: Bearer <token>` (compared in constant time). Routes outside
 * `/api/` that answer everyone (`/readyz`) use it to show more to the token's holder.
 */
export function presentsToken(c: Context, token: Buffer | undefined): boolean {
  if (token === undefined) return false;
  const header = c.req.header('authorization') ?? '';
  const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7) : '');
  return given.length === token.length && timingSafeEqual(given, token);
}

function securityHeaders(c: Context): void {
  try {
    c.res.headers.set('X-Content-Type-Options', 'nosniff');
    c.res.headers.set('Referrer-Policy', 'no-referrer');
  } catch {
    // An already-sent (streamed) response has immutable headers; the stream set its own.
  }
}

/** The host name of a Host header value, lower case, no port, no trailing dot; undefined if malformed. */
function parseHost(value: string | undefined): { name: string; raw: string } | undefined {
  if (value === undefined || value === '' || /[\s/\\@?#]/.test(value)) return undefined;
  try {
    const url = new URL(`http://${value}`);
    return { name: hostName(url.hostname), raw: url.host };
  } catch {
    return undefined;
  }
}

function hostName(host: string): string {
  const lower = host.toLowerCase().replace(/\.$/, '');
  return isIP(lower) === 6 ? `[${lower}]` : lower;
}

function sameOrigin(origin: string, host: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === host && origin.replace(/\/$/, '') === url.origin;
  } catch {
    return false;
  }
}

function isJsonType(value: string | undefined): boolean {
  return value !== undefined && value.split(';', 1)[0]!.trim().toLowerCase() === 'application/json';
}
