/**
 * The guarded connection: the one way discovery and A2A calls reach the network. The card
 * fetcher (`card-fetcher.ts`) and the policy fetch handed to the A2A clients
 * (`src/adk/remote/policy-fetch.ts`) both admit their URLs and dispatch their requests through
 * it, so each check exists once:
 *
 * 1. the allowlist verdict ({@link HostPolicy.check}) before anything is sent;
 * 2. IP-literal hosts judged by {@link HostPolicy.isAddressAllowed} before dispatch (Node never
 *    calls a lookup function for them);
 * 3. host names resolved through the guarded lookup (`address-guard.ts`): every address of the
 *    answer is judged in the call that hands it to the socket, so DNS rebinding has no window;
 * 4. the connected socket's peer address judged once more, whatever produced it (a lookup answer
 *    such as `0.0.0.0` that the kernel routes to 127.0.0.1, a future connect path);
 * 5. redirects refused, never followed ({@link redirectRefusal});
 * 6. TLS: certificates always verified, TLS 1.2 at least, `ca` adds private roots to Node's;
 * 7. credentials asked for the request's exact origin only;
 * 8. the 401 rule, once: a 401 to a request that carried credentials tells the provider
 *    ({@link PeerCredentials.rejected}); when it answers true the caller retries once, with the
 *    headers asked anew for the same origin, and a second 401 is the answer.
 *
 * Refusals carry one text each, and URLs in them never carry userinfo (the policy's
 * `redactUrl`). `test/fetch/guarded-connection.test.ts` runs one test per check (1–6)
 * against both callers, each failing when its check is removed; credentials are tested in each
 * caller's own suite.
 *
 * @module
 */
import net from 'node:net';
import tls from 'node:tls';
import { Agent, buildConnector } from 'undici';
import { DiscoveryError, isDiscoveryError } from '../errors.js';
import { createGuardedLookup, type Resolver } from './address-guard.js';
import { type ConnectionPolicy, verdictError } from './host-policy.js';

import { toPeerCredentials, type CredentialsInput, type PeerCredentials } from '../rules/credentials.js';

/** Extra trusted CA certificates (PEM), added to Node's default roots. */
export type TrustedCa = string | Buffer | ReadonlyArray<string | Buffer>;

/** Inputs of {@link createGuardedConnection}. Durations in milliseconds, sizes in bytes. */
export interface GuardedConnectionOptions {
  /** Decides which URLs and addresses may be contacted (a {@link HostPolicy}, or an exact-origin policy). */
  policy: ConnectionPolicy;
  /** DNS override (tests, custom resolvers). Default: `dns.lookup` with `all: true`. */
  resolve?: Resolver;
  /** Extra trusted CAs (PEM). Verification itself can never be turned off. */
  ca?: TrustedCa;
  /** Per-origin credentials (either form), asked by {@link GuardedConnection.credentialsFor}. Not closed by the connection. */
  credentials?: CredentialsInput;
  /** Bound on DNS resolution plus TCP and TLS handshakes. */
  connectTimeoutMs: number;
  /** Bound on waiting for the response headers (undici's `headersTimeout`). */
  headersTimeoutMs: number;
  /** Bound on the silence between two body chunks (undici's `bodyTimeout`). */
  bodyTimeoutMs: number;
  /** Connections kept per origin. Default: undici's (no limit). */
  connections?: number;
  /** undici's `maxResponseSize`: a cap on the body bytes received. Default: none. */
  maxResponseSize?: number;
  /** Told of every socket that passed the peer check, before it carries a request. */
  onSocket?: (socket: net.Socket) => void;
}

/** A URL the policy admitted and whose IP literal, if any, is allowed. */
interface AdmittedUrl {
  /** The URL as the policy normalized it (one trailing dot removed from the host). */
  url: URL;
  /** Its origin, `https://host[:port]` (default port omitted). */
  origin: string;
}

/** A connection pool bound to one {@link HostPolicy}. */
export interface GuardedConnection {
  /** The undici dispatcher: guarded lookup, peer check, TLS options. Pass it as `dispatcher`. */
  readonly dispatcher: Agent;
  /**
   * The checks before dispatch: the allowlist verdict, then the IP literal.
   *
   * @throws DiscoveryError `ERR_HOST_NOT_ALLOWED` (stage `resolve`), `ERR_INSECURE_URL` (stage
   *   `policy`), `ERR_ADDRESS_BLOCKED` (stage `address`). Nothing is sent.
   */
  admit(rawUrl: string): AdmittedUrl;
  /**
   * The credentials for `origin` (undefined without a provider).
   *
   * @throws DiscoveryError `ERR_FETCH_NETWORK` (stage `fetch`) when the provider throws.
   */
  credentialsFor(origin: string, url: string): Promise<Record<string, string> | undefined>;
  /** Whether credentials are configured at all (when not, no 401 is ever retried). */
  readonly hasCredentials: boolean;
  /**
   * The 401 rule: `status` answered a request to `origin` that carried the credentials' headers
   * `sent`. True when the caller should retry it once, asking {@link credentialsFor} again: either
   * the provider holds other headers already (a token refreshed by a concurrent request), or it
   * dropped its token when told of the 401. False for any other status, without credentials, or
   * when a retry cannot help. Never throws.
   */
  retryAfter(origin: string, status: number, sent: Readonly<Record<string, string>>): Promise<boolean>;
  /** Destroys the pool: requests in flight fail, every socket is closed. */
  close(): Promise<void>;
}

/**
 * Creates the guarded pool. No I/O happens until a request is dispatched.
 *
 * @example
 * const connection = createGuardedConnection({ policy, connectTimeoutMs: 3000, headersTimeoutMs: 3000, bodyTimeoutMs: 2000 });
 * const { url, origin } = connection.admit('https://agents.example.com/a2a');
 * await request(url, { dispatcher: connection.dispatcher });
 */
export function createGuardedConnection(options: GuardedConnectionOptions): GuardedConnection {
  const { policy, onSocket } = options;
  const credentials: PeerCredentials | undefined = options.credentials === undefined ? undefined : toPeerCredentials(options.credentials);
  const lookup = createGuardedLookup({ policy, ...(options.resolve !== undefined && { resolve: options.resolve }) });
  const baseConnect = buildConnector({ ...tlsOptions(options.ca), lookup, timeout: options.connectTimeoutMs });

  // Defense in depth: whatever path produced the socket, its peer must be an allowed address.
  const connect: buildConnector.connector = (connectOptions, callback) => {
    baseConnect(connectOptions, (...args: [null, net.Socket] | [Error, null]) => {
      if (args[0] !== null) {
        callback(args[0], null);
        return;
      }
      const socket = args[1];
      const remote = socket.remoteAddress;
      if (remote === undefined || !policy.isAddressAllowed(remote)) {
        socket.destroy();
        callback(peerBlocked(remote, connectOptions.hostname), null);
        return;
      }
      onSocket?.(socket);
      callback(null, socket);
    });
  };

  const dispatcher = new Agent({
    connect,
    headersTimeout: options.headersTimeoutMs,
    bodyTimeout: options.bodyTimeoutMs,
    ...(options.connections !== undefined && { connections: options.connections }),
    ...(options.maxResponseSize !== undefined && { maxResponseSize: options.maxResponseSize }),
  });

  return {
    dispatcher,
    admit(rawUrl) {
      const verdict = policy.check(rawUrl);
      if (!verdict.allowed) throw verdictError(verdict, rawUrl);
      const { hostname } = verdict.url;
      const literal = hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
      // IP literals never reach a lookup function: judge them here.
      if (net.isIP(literal) !== 0 && !policy.isAddressAllowed(literal)) throw literalBlocked(literal, verdict.url.href);
      return { url: verdict.url, origin: verdict.origin };
    },
    async credentialsFor(origin, url) {
      if (credentials === undefined) return undefined;
      try {
        return await credentials.headers(origin);
      } catch (err) {
        // The provider's own errors carry no secret and say what failed (a token endpoint's status, a missing package).
        const reason = isDiscoveryError(err) ? `: ${err.message}` : '';
        throw new DiscoveryError(isDiscoveryError(err) && err.code !== 'ERR_USAGE' ? err.code : 'ERR_FETCH_NETWORK', `credentials provider failed for ${origin}${reason}`, { cause: err, url, stage: 'fetch' });
      }
    },
    hasCredentials: credentials !== undefined,
    async retryAfter(origin, status, sent) {
      if (status !== 401 || credentials === undefined) return false;
      try {
        // Many requests refused with one token: the first drops it, the others find the new one.
        const current = await credentials.headers(origin);
        if (current !== undefined && !sameHeaders(current, sent)) return true;
        return await credentials.rejected(origin);
      } catch {
        return false;
      }
    },
    close: () => dispatcher.destroy(),
  };
}

/**
 * The refusal of a redirect: any 3xx but 304 is `ERR_REDIRECT_REFUSED` (stage `fetch`), its
 * message naming the status and the Location; undefined for every other status. Redirects are
 * never followed, so credentials cannot be carried to another origin and an allowlisted host
 * cannot send the client to one that is not.
 *
 * @example redirectRefusal(302, 'http://169.254.169.254/', url)?.message
 * // 'refused redirect 302 from https://a.example.com/ to "http://169.254.169.254/"; redirects are never followed'
 */
export function redirectRefusal(status: number, location: string | null | undefined, url: string): DiscoveryError | undefined {
  if (status < 300 || status >= 400 || status === 304) return undefined;
  const target = location === undefined || location === null ? '(no Location header)' : JSON.stringify(location.slice(0, 500));
  return new DiscoveryError('ERR_REDIRECT_REFUSED', `refused redirect ${status} from ${url} to ${target}; redirects are never followed`, { url, stage: 'fetch', status });
}

/**
 * The refusal of an encoded body: anything but `identity` is `ERR_CONTENT_ENCODING` (stage
 * `fetch`); undefined otherwise, and for a 304 (no body). Every request asks for `identity` and
 * nothing is decompressed, so a compressed body can never expand past a cap.
 *
 * @example encodingRefusal(200, 'gzip', url)?.code // 'ERR_CONTENT_ENCODING'
 */
export function encodingRefusal(status: number, contentEncoding: string | undefined, url: string): DiscoveryError | undefined {
  const encoding = (contentEncoding ?? 'identity').trim().toLowerCase();
  if (status === 304 || encoding === '' || encoding === 'identity') return undefined;
  return new DiscoveryError('ERR_CONTENT_ENCODING', `refused content-encoding ${JSON.stringify(encoding.slice(0, 100))} from ${url}; only identity is accepted (nothing is decompressed)`, { url, stage: 'fetch', status });
}

/** A response's declared `Content-Length` (digits only), or undefined when it has none or it is malformed. */
export function parseContentLength(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined;
  return Number(value);
}

function sameHeaders(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/** Certificates always verified, TLS 1.2 at least; `ca` added to Node's roots, never replacing them. */
function tlsOptions(ca: TrustedCa | undefined): tls.ConnectionOptions {
  const options: tls.ConnectionOptions = { rejectUnauthorized: true, minVersion: 'TLSv1.2' };
  if (ca !== undefined) {
    const extra = Array.isArray(ca) ? [...(ca as ReadonlyArray<string | Buffer>)] : [ca as string | Buffer];
    // `ca` alone would replace Node's roots; one context with both keeps public hosts verifying.
    options.secureContext = tls.createSecureContext({ ca: [...tls.rootCertificates, ...extra], minVersion: 'TLSv1.2' });
  }
  return options;
}

function literalBlocked(address: string, url: string): DiscoveryError {
  return new DiscoveryError('ERR_ADDRESS_BLOCKED', `address ${address} is blocked (only public unicast addresses and configured ranges may be contacted)`, { url, stage: 'address' });
}

function peerBlocked(remote: string | undefined, hostname: string): DiscoveryError {
  return new DiscoveryError('ERR_ADDRESS_BLOCKED', `connected peer address ${remote ?? '(unknown)'} of ${hostname} is blocked`, { stage: 'address' });
}
