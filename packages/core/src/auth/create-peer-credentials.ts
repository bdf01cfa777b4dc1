/**
 * Credentials for many peers at once, from configuration-shaped entries: each entry names one
 * exact origin and how to authenticate to it (static headers, OAuth 2.0 client credentials, Google
 * ID tokens); secrets come from environment variables or files only. Every request is answered by
 * the entry of its own origin, so a token is never offered to another origin.
 *
 * @module
 */
import { readSecretFile } from '../rules/bounded-file.js';
import type { Clock, Random } from '../clock/index.js';
import { DiscoveryError, type Problem } from '../errors.js';
import type { Resolver } from '../fetch/address-guard.js';
import type { TrustedCa } from '../fetch/guarded-connection.js';
import type { PeerCredentials, PresentableScheme } from '../rules/credentials.js';
import { normalizeOrigin, originOf } from '../rules/origins.js';
import { googleIdToken, type GoogleIdTokenSource } from './google-id-token.js';
import { oauth2ClientCredentials } from './oauth2-client-credentials.js';
import { staticHeaders } from './static-headers.js';
import type { TokenRequestOutcome } from './token-cache.js';

/**
 * One peer's credentials, in the shape of a `credentials:` entry of the configuration. `type`
 * decides which fields apply (default `static`).
 */
export interface PeerCredentialEntry {
  /** `static` (default), `oauth2` (client credentials) or `google-id-token`. */
  readonly type?: 'static' | 'oauth2' | 'google-id-token';
  /** The peer's origin (`https://host[:port]`). At most one entry per origin. */
  readonly origin: string;
  /** static: the header name. Default `authorization`. */
  readonly header?: string;
  /** static: text before the secret, e.g. `Bearer `. */
  readonly prefix?: string;
  /** static: the environment variable holding the value. */
  readonly valueEnv?: string;
  /** static: the file holding the value. */
  readonly valueFile?: string;
  /** oauth2: the token endpoint (or `issuer`). */
  readonly tokenUrl?: string;
  /** oauth2: the issuer whose metadata names the token endpoint (or `tokenUrl`). */
  readonly issuer?: string;
  /** oauth2: the client id. */
  readonly clientId?: string;
  /** oauth2: the environment variable holding the client secret. */
  readonly clientSecretEnv?: string;
  /** oauth2: the file holding the client secret. */
  readonly clientSecretFile?: string;
  /** oauth2: the scopes requested. */
  readonly scopes?: readonly string[];
  /** oauth2: the `audience` parameter; google-id-token: the token's audience (default the origin). */
  readonly audience?: string;
  /** oauth2: the RFC 8707 `resource` parameter. */
  readonly resource?: string;
  /** oauth2: client authentication, `basic` (default) or `post`. */
  readonly auth?: 'basic' | 'post';
}

/** Inputs of {@link createPeerCredentials}. Durations in ms. */
export interface CreatePeerCredentialsOptions {
  /** Where `valueEnv` and `clientSecretEnv` are read. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Reads a secret file. Default: a read of at most 64 KiB. Its error message is quoted (never a value). */
  readFile?: (path: string) => Promise<string>;
  clock?: Clock;
  random?: Random;
  /** Token requests may go to http loopback identity providers (development, tests). Default false. */
  allowLoopback?: boolean;
  /** Extra address ranges identity providers may resolve to (CIDR). */
  allowCidrs?: readonly string[];
  /** Extra trusted CAs for identity providers (PEM). */
  ca?: TrustedCa;
  /** DNS override for token requests (tests). */
  resolve?: Resolver;
  /** The Google ID token source. Default: google-auth-library's application default credentials. */
  googleSource?: GoogleIdTokenSource;
  /** Tokens are replaced this long before expiry, at most 10 % of their lifetime. Default 60000. */
  refreshBeforeMs?: number;
  /** Told of every token request: the peer's origin and the outcome (`a2a_discovery_peer_token_requests_total`). */
  onTokenRequest?: (event: { origin: string; outcome: TokenRequestOutcome }) => void;
  /**
   * Told of each problem (entry index, the entry's key or undefined, the message) instead of a
   * throw; the entry is then left out. Used by `resolveSecrets` to name YAML lines.
   */
  onProblem?: (index: number, key: keyof PeerCredentialEntry | undefined, message: string) => void;
}

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * The credentials of every entry, combined by exact origin. Secrets are read now; no request is
 * made until a peer is called.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) listing every problem (a missing
 *   variable or file, two entries for one origin, an oauth2 entry without a client id), naming
 *   variables and files, never values; unless `onProblem` is given.
 * @example
 * const credentials = await createPeerCredentials([
 *   { type: 'oauth2', origin: 'https://billing.example.com', tokenUrl: 'https://idp.example.com/oauth/token', clientId: 'discovery', clientSecretEnv: 'BILLING_CLIENT_SECRET' },
 * ]);
 * const fetcher = createCardFetcher({ policy, credentials });
 */
export async function createPeerCredentials(entries: readonly PeerCredentialEntry[], options: CreatePeerCredentialsOptions = {}): Promise<PeerCredentials> {
  const env = options.env ?? process.env;
  const readFile = options.readFile ?? readSecretFile;
  const problems: Problem[] = [];
  const fail = (index: number, key: keyof PeerCredentialEntry | undefined, message: string): undefined => {
    if (options.onProblem !== undefined) options.onProblem(index, key, message);
    else problems.push({ path: `credentials[${index}]${key === undefined ? '' : `.${key}`}`, message });
    return undefined;
  };
  const secret = async (index: number, envKey: 'valueEnv' | 'clientSecretEnv', fileKey: 'valueFile' | 'clientSecretFile', what: string, fileWhat: string): Promise<string | undefined> => {
    const entry = entries[index]!;
    const name = entry[envKey];
    const file = entry[fileKey];
    if (name !== undefined && file !== undefined) return fail(index, fileKey, `set exactly one of ${envKey} and ${fileKey}, not both`);
    let value: string;
    let where: string;
    if (name !== undefined) {
      const raw = env[name];
      if (raw === undefined) return fail(index, envKey, `environment variable ${name} (${what}) is not set`);
      value = raw;
      where = `environment variable ${name} (${what})`;
    } else if (file !== undefined) {
      try {
        value = await readFile(file);
      } catch (err) {
        return fail(index, fileKey, `cannot read ${fileWhat} file ${file}: ${err instanceof Error ? err.message : 'unreadable'}`);
      }
      where = `${fileWhat} file ${file}`;
    } else {
      return fail(index, undefined, `needs exactly one of ${envKey} (an environment variable) or ${fileKey} (a file); secrets are never written in the configuration`);
    }
    value = value.replace(/\r?\n$/, '');
    const key = name !== undefined ? envKey : fileKey;
    if (value === '') return fail(index, key, `${where} is empty`);
    if (CONTROL.test(value)) return fail(index, key, `${where} contains a line break or control character, which cannot go into an HTTP header`);
    return value;
  };

  const byOrigin = new Map<string, PeerCredentials>();
  const firstIndex = new Map<string, number>();
  const tokenOptions = {
    ...(options.clock !== undefined && { clock: options.clock }),
    ...(options.random !== undefined && { random: options.random }),
    ...(options.refreshBeforeMs !== undefined && { refreshBeforeMs: options.refreshBeforeMs }),
    ...(options.onTokenRequest !== undefined && { onTokenRequest: options.onTokenRequest }),
  };
  for (const [i, entry] of entries.entries()) {
    const normalized = normalizeOrigin(entry.origin);
    if (typeof normalized !== 'string') {
      fail(i, 'origin', normalized.problem);
      continue;
    }
    const origin = normalized;
    const earlier = firstIndex.get(origin);
    if (earlier !== undefined) {
      fail(i, 'origin', `${origin} already has credentials in credentials[${earlier}]`);
      continue;
    }
    firstIndex.set(origin, i);
    const type = entry.type ?? 'static';
    let provider: PeerCredentials | undefined;
    if (type === 'static') {
      const value = await secret(i, 'valueEnv', 'valueFile', `the credential for ${origin}`, 'credential');
      if (value !== undefined) provider = staticHeaders({ origins: [origin], headers: { [(entry.header ?? 'authorization').toLowerCase()]: `${entry.prefix ?? ''}${value}` } });
    } else if (type === 'oauth2') {
      const clientSecret = await secret(i, 'clientSecretEnv', 'clientSecretFile', `the oauth2 client secret for ${origin}`, 'client secret');
      if (entry.clientId === undefined || entry.clientId === '') fail(i, 'clientId', 'an oauth2 entry needs clientId');
      else if ((entry.tokenUrl === undefined) === (entry.issuer === undefined)) fail(i, entry.tokenUrl === undefined ? undefined : 'issuer', 'an oauth2 entry needs exactly one of tokenUrl and issuer');
      else if (clientSecret !== undefined) {
        provider = oauth2ClientCredentials({
          ...tokenOptions,
          origins: [origin],
          clientId: entry.clientId,
          clientSecret,
          ...(entry.tokenUrl !== undefined && { tokenUrl: entry.tokenUrl }),
          ...(entry.issuer !== undefined && { issuer: entry.issuer }),
          ...(entry.auth !== undefined && { auth: entry.auth }),
          ...(entry.scopes !== undefined && { scopes: entry.scopes }),
          ...(entry.audience !== undefined && { audience: entry.audience }),
          ...(entry.resource !== undefined && { resource: entry.resource }),
          ...(options.allowLoopback !== undefined && { allowLoopback: options.allowLoopback }),
          ...(options.allowCidrs !== undefined && { allowCidrs: options.allowCidrs }),
          ...(options.ca !== undefined && { ca: options.ca }),
          ...(options.resolve !== undefined && { resolve: options.resolve }),
        });
      }
    } else if (type === 'google-id-token') {
      provider = googleIdToken({
        ...tokenOptions,
        origins: [origin],
        ...(entry.audience !== undefined && { audience: entry.audience }),
        ...(options.googleSource !== undefined && { source: options.googleSource }),
      });
    } else {
      fail(i, 'type', `must be static, oauth2 or google-id-token, got ${JSON.stringify(String(type)).slice(0, 60)}`);
    }
    if (provider !== undefined) byOrigin.set(origin, provider);
  }
  if (problems.length > 0) {
    const first = problems[0]!;
    throw new DiscoveryError('ERR_CONFIG_INVALID', `${problems.length} credential problem(s); first: ${first.path}: ${first.message}`, { stage: 'config', path: first.path, problems });
  }
  return combineByOrigin(byOrigin);
}

/** One provider per exact origin (a URL is reduced to its origin); an origin without one gets nothing. */
function combineByOrigin(byOrigin: ReadonlyMap<string, PeerCredentials>): PeerCredentials {
  const find = (origin: string): [string, PeerCredentials] | undefined => {
    const key = originOf(origin);
    const provider = key === undefined ? undefined : byOrigin.get(key);
    return provider === undefined ? undefined : [key!, provider];
  };
  const none: readonly PresentableScheme[] = Object.freeze([]);
  return {
    async headers(origin) {
      const found = find(origin);
      return found === undefined ? undefined : found[1].headers(found[0]);
    },
    identity(origin) {
      const found = find(origin);
      return found === undefined ? undefined : found[1].identity(found[0]);
    },
    schemes(origin) {
      const found = find(origin);
      return found === undefined ? none : found[1].schemes(found[0]);
    },
    async rejected(origin) {
      const found = find(origin);
      return found === undefined ? false : found[1].rejected(found[0]);
    },
    async close() {
      await Promise.allSettled([...byOrigin.values()].map((p) => p.close()));
    },
  };
}

/** A secret file, at most 64 KiB. */
