/**
 * Credentials for peers: what discovery and A2A calls present to one exact origin. The guarded
 * connection asks them for every request (`credentialsFor`), so a header computed for one origin
 * is never sent to another. Two forms are accepted wherever credentials are:
 *
 * - an {@link OriginCredentials} function (static headers per origin, the original form);
 * - a {@link PeerCredentials} object (static headers, OAuth 2.0 client credentials, Google ID
 *   tokens, …), which also names the identity it presents, the card security schemes it can
 *   satisfy, and can be told of a 401 so that a cached token is refreshed once.
 *
 * {@link toPeerCredentials} turns either into the object form, so callers handle one shape.
 *
 * @module
 */

/**
 * Per-origin credentials: called with the request's exact origin (`https://host[:port]`); the
 * headers returned are sent on that request only, hence only to that origin.
 */
export type OriginCredentials = (origin: string) => Record<string, string> | undefined | Promise<Record<string, string> | undefined>;

/**
 * One security scheme a credential can present, in the vocabulary of a card's
 * `securitySchemes` (A2A 1.0 §4.5, OpenAPI 3 in 0.3). Names are lower case.
 */
export type PresentableScheme =
  | { readonly type: 'apiKey'; readonly in: 'header'; readonly name: string }
  | { readonly type: 'http'; readonly scheme: string }
  | { readonly type: 'oauth2'; readonly flow?: 'clientCredentials' }
  | { readonly type: 'openIdConnect' };

/** Credentials for peers, by origin. Implementations never put a secret in an error message. */
export interface PeerCredentials {
  /** The headers for one request to `origin` (exact origin), or undefined when none is configured. */
  headers(origin: string): Promise<Record<string, string> | undefined>;
  /**
   * A label of the identity presented to `origin`, never secret (for example
   * `oauth2 client "billing-bot" at https://idp.example.com/token`), or undefined when none is
   * configured. Extended cards are cached per identity.
   */
  identity(origin: string): string | undefined;
  /** The card security schemes the credentials for `origin` can satisfy (empty when none). */
  schemes(origin: string): readonly PresentableScheme[];
  /**
   * `origin` answered 401 to a request that carried {@link headers}: forget any cached token.
   * True when fresh headers may now be obtained (the caller then retries once), false when a
   * retry cannot help (static headers).
   */
  rejected(origin: string): Promise<boolean>;
  /** Releases timers and connections. */
  close(): Promise<void>;
}

/** What every credentials option accepts. */
export type CredentialsInput = OriginCredentials | PeerCredentials;

/**
 * The object form of either credentials form. A function is wrapped: its headers, an identity
 * naming the header it sets, the schemes that header can satisfy, and no refresh on 401.
 *
 * @example toPeerCredentials((origin) => (origin === 'https://a.example.com' ? { authorization: `Bearer ${token}` } : undefined))
 */
export function toPeerCredentials(input: CredentialsInput): PeerCredentials {
  if (typeof input !== 'function') return input;
  const names = new Map<string, readonly string[]>();
  return {
    async headers(origin) {
      const headers = await input(origin);
      if (headers !== undefined) names.set(origin, Object.keys(headers).map((n) => n.toLowerCase()));
      return headers;
    },
    identity(origin) {
      const known = names.get(origin);
      return known === undefined || known.length === 0 ? undefined : `static ${known.join(', ')} header for ${origin}`;
    },
    schemes(origin) {
      return schemesOfHeaders(names.get(origin) ?? []);
    },
    rejected: async () => false,
    close: async () => undefined,
  };
}

/**
 * The schemes static headers can satisfy: `authorization` a bearer token (http bearer, OAuth 2.0
 * and OpenID Connect tokens obtained out of band) or basic; any other header an API key of that
 * name.
 */
export function schemesOfHeaders(headerNames: readonly string[], authorizationPrefix?: string): PresentableScheme[] {
  const out: PresentableScheme[] = [];
  for (const raw of headerNames) {
    const name = raw.toLowerCase();
    if (name !== 'authorization') {
      out.push({ type: 'apiKey', in: 'header', name });
      continue;
    }
    const scheme = authorizationPrefix?.trim().split(/\s+/)[0]?.toLowerCase();
    if (scheme === 'basic') out.push({ type: 'http', scheme: 'basic' });
    else out.push({ type: 'http', scheme: 'bearer' }, { type: 'oauth2' }, { type: 'openIdConnect' });
  }
  return out;
}
