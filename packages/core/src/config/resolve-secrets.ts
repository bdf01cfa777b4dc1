/**
 * Reading the secrets a configuration names: the service's bearer token, per-origin credentials,
 * the trusted public keys and the private key that signs the service's AI Catalog. The
 * configuration holds only where they are (an environment variable or a file); this is the one
 * place that reads them. No message ever contains a value.
 *
 * @module
 */
import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { inspect } from 'node:util';
import type { JWK } from 'jose';
import type { TrustedKey } from '../card/index.js';
import { signDetached } from '../card/index.js';
import { unusableJwk } from '../card/signature-trust.js';
import { DiscoveryError, type Problem } from '../errors.js';
import { createPeerCredentials, type CreatePeerCredentialsOptions, type TokenRequestOutcome } from '../auth/index.js';
import type { PeerCredentials } from '../rules/credentials.js';
import type { ConfigPath } from './messages.js';
import { fsReason } from './parse-config.js';
import { readSecretFile } from '../rules/bounded-file.js';
import { REPLICA_DEFAULTS } from '../rules/defaults.js';
import type { DiscoveryConfig } from './types.js';
import { problemIn } from './yaml-source.js';
import { frozenCopy } from '../rules/frozen.js';

/** The secrets of a configuration, read. */
export interface ResolvedSecrets {
  /** The service's bearer token, when `server.tokenEnv` or `server.tokenFile` is set. */
  readonly token?: string;
  /**
   * The peers' credentials (`credentials:` entries of every type), by exact origin
   * (`https://host[:port]`; a URL is reduced to its origin). Fits `CardFetcherOptions.credentials`
   * and `PolicyFetchOptions.credentials`. `headers()` returns a new object on every call; no
   * token is requested before a peer is called. Close it when done (`close()`).
   */
  readonly credentials: PeerCredentials;
  /** Token requests made so far by the oauth2 and google-id-token entries, by peer origin and outcome. */
  readonly tokenRequests: () => readonly TokenRequestCount[];
  /** The trust store for `SignatureOptions.keys`. */
  readonly keys: readonly TrustedKey[];
  /** The PostgreSQL store's password, when `storePasswordEnv` or `storePasswordFile` is set. */
  readonly storePassword?: string;
  /**
   * The replicas' shared key (`replica.keyEnv` / `replica.keyFile`), at least 32 characters:
   * followers sign their requests to the leader with it, never with the service's token.
   */
  readonly replicaKey?: string;
  /**
   * The private key that signs the service's AI Catalog, when `server.catalog` is enabled with
   * `signing`; checked by signing with the configured `alg` and `kid` once.
   */
  readonly catalogSigningKey?: KeyObject;
}

/** One count of {@link ResolvedSecrets.tokenRequests}. */
export interface TokenRequestCount {
  readonly origin: string;
  readonly outcome: TokenRequestOutcome;
  readonly count: number;
}

/** What {@link resolveSecrets} passes on to the peers' credential providers (clock, randomness, tests' token source). */
export type ResolveSecretsOptions = Pick<CreatePeerCredentialsOptions, 'clock' | 'random' | 'googleSource' | 'resolve' | 'ca' | 'refreshBeforeMs'>;

/** Largest secret or key file read, in bytes. */
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/**
 * Reads every secret the configuration names, from `env` and from files.
 *
 * Env values and files have one trailing line break removed. A secret must be non-empty and free
 * of line breaks and control characters (it goes into an HTTP header). Key files hold one public
 * JWK (or a JWKS, from which the key with the configured `kid` is taken). The catalog signing key
 * (`server.catalog.signing`, read only while the catalog is enabled) is a private key as PEM or
 * JWK, proven by signing once with the configured `alg` and `kid`.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) listing every secret that is
 *   missing or unusable, naming the variable or file (never its value); problems carry the YAML
 *   line and column when the configuration came from {@link parseConfig}.
 * @example
 * const secrets = await resolveSecrets(config);          // process.env
 * const fetcher = createCardFetcher({ policy, credentials: secrets.credentials });
 */
export async function resolveSecrets(config: DiscoveryConfig, env: NodeJS.ProcessEnv = process.env, options: ResolveSecretsOptions = {}): Promise<ResolvedSecrets> {
  const problems: Problem[] = [];
  const fail = (path: ConfigPath, message: string): undefined => {
    problems.push(problemIn(config, path, message));
    return undefined;
  };

  const fromEnv = (path: ConfigPath, name: string, what: string): string | undefined => {
    const value = env[name];
    if (value === undefined) return fail(path, `environment variable ${name} (${what}) is not set`);
    return usable(path, trimEol(value), `environment variable ${name} (${what})`);
  };
  const fromFile = async (path: ConfigPath, file: string, what: string): Promise<string | undefined> => {
    const text = await readSmall(path, file, what);
    return text === undefined ? undefined : usable(path, trimEol(text), `${what} file ${file}`);
  };
  const usable = (path: ConfigPath, value: string, where: string): string | undefined => {
    if (value === '') return fail(path, `${where} is empty`);
    if (CONTROL.test(value)) return fail(path, `${where} contains a line break or control character, which cannot go into an HTTP header`);
    return value;
  };
  const readSmall = async (path: ConfigPath, file: string, what: string): Promise<string | undefined> => {
    try {
      return await readSecretFile(file);
    } catch (err) {
      return fail(path, `cannot read ${what} file ${file}: ${fsReason(err)}`);
    }
  };

  // The bearer token.
  const { server } = config;
  let token: string | undefined;
  if (server.tokenEnv !== undefined) token = fromEnv(['server', 'tokenEnv'], server.tokenEnv, 'the service token');
  else if (server.tokenFile !== undefined) token = await fromFile(['server', 'tokenFile'], server.tokenFile, 'token');

  // Per-origin credentials: secrets read now, tokens requested when a peer is first called.
  const counts = new Map<string, number>();
  const credentials = await createPeerCredentials(config.credentials, {
    ...options,
    env,
    readFile: async (file) => {
      try {
        return await readSecretFile(file);
      } catch (err) {
        throw new DiscoveryError('ERR_CONFIG_INVALID', fsReason(err), { cause: err, stage: 'config' });
      }
    },
    allowLoopback: config.allowLoopback,
    ...(config.allowCidrs.length > 0 && { allowCidrs: config.allowCidrs }),
    onTokenRequest: ({ origin, outcome }) => {
      const key = `${outcome} ${origin}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    },
    onProblem: (i, key, message) => fail(['credentials', i, ...(key === undefined ? [] : [key])], message),
  });
  const tokenRequests = (): TokenRequestCount[] =>
    [...counts].map(([key, count]) => {
      const space = key.indexOf(' ');
      return { outcome: key.slice(0, space) as TokenRequestOutcome, origin: key.slice(space + 1), count };
    });

  // Trusted keys.
  const keys: TrustedKey[] = [];
  for (const [i, k] of config.signatures.keys.entries()) {
    const path: ConfigPath = ['signatures', 'keys', i, 'jwkFile'];
    const text = await readSmall(path, k.jwkFile, 'key');
    if (text === undefined) continue;
    const jwk = publicJwk(text, k.kid, (message) => fail(path, `key file ${k.jwkFile}: ${message}`));
    if (jwk !== undefined) keys.push(Object.freeze({ kid: k.kid, jwk, ...(k.origins !== undefined && { origins: k.origins }) }));
  }

  // The catalog's signing key.
  let catalogSigningKey: KeyObject | undefined;
  const signing = server.catalog?.enabled === true ? server.catalog.signing : undefined;
  if (signing !== undefined) {
    const at: ConfigPath = ['server', 'catalog', 'signing', signing.keyFile !== undefined ? 'keyFile' : 'keyEnv'];
    const where = signing.keyFile !== undefined ? `key file ${signing.keyFile}` : `environment variable ${signing.keyEnv} (the catalog signing key)`;
    const text =
      signing.keyFile !== undefined
        ? await readSmall(at, signing.keyFile, 'key')
        : signing.keyEnv !== undefined
          ? (env[signing.keyEnv] ?? fail(at, `${where} is not set`))
          : fail(['server', 'catalog', 'signing'], 'names neither keyFile nor keyEnv');
    if (text !== undefined) catalogSigningKey = await signingKey(text, signing, (message) => fail(at, `${where}: ${message}`));
  }

  // The store's password.
  let storePassword: string | undefined;
  if (config.storePasswordEnv !== undefined) storePassword = fromEnv(['storePasswordEnv'], config.storePasswordEnv, 'the store password');
  else if (config.storePasswordFile !== undefined) storePassword = await fromFile(['storePasswordFile'], config.storePasswordFile, 'store password');

  // The replicas' key.
  let replicaKey: string | undefined;
  const { replica } = config;
  const keyAt: ConfigPath = ['replica', replica.keyEnv !== undefined ? 'keyEnv' : 'keyFile'];
  if (replica.keyEnv !== undefined) replicaKey = fromEnv(keyAt, replica.keyEnv, 'the replica key');
  else if (replica.keyFile !== undefined) replicaKey = await fromFile(keyAt, replica.keyFile, 'replica key');
  if (replicaKey !== undefined && replicaKey.length < REPLICA_DEFAULTS.minKeyLength) {
    replicaKey = fail(keyAt, `the replica key is ${replicaKey.length} characters; at least ${REPLICA_DEFAULTS.minKeyLength} are needed (for example \`openssl rand -base64 32\`)`);
  }

  if (problems.length > 0) {
    await credentials.close();
    const first = problems[0]!;
    throw new DiscoveryError('ERR_CONFIG_INVALID', `${problems.length} secret(s) could not be read; first: ${first.path}: ${first.message}`, {
      stage: 'config',
      path: first.path,
      problems,
    });
  }
  return secrets(token, credentials, tokenRequests, config.credentials.map((c) => c.origin), Object.freeze(keys), storePassword, catalogSigningKey, replicaKey);
}

function trimEol(value: string): string {
  return value.replace(/\r?\n$/, '');
}

/** A key file whose JWK names another kid than the configuration. */
function otherKid(own: unknown, configured: string): string {
  return `the key's own kid ${JSON.stringify(own)} differs from the configured kid ${JSON.stringify(configured)}`;
}

/** The public JWK for `kid` in a key file's text, or undefined after reporting why not. */
function publicJwk(text: string, kid: string, fail: (message: string) => undefined): JWK | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // The parser's message quotes the input; keep key material out of messages anyway.
    return fail('is not valid JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('must hold a JWK object');
  let jwk = value as JWK & { keys?: unknown };
  if (Array.isArray(jwk.keys)) {
    const match = (jwk.keys as JWK[]).find((key) => typeof key === 'object' && key !== null && key.kid === kid);
    if (match === undefined) return fail(`is a key set without a key whose kid is ${JSON.stringify(kid)}`);
    jwk = match;
  }
  if (jwk.kid !== undefined && jwk.kid !== kid) return fail(otherKid(jwk.kid, kid));
  const unusable = unusableJwk(jwk);
  if (unusable !== undefined) return fail(unusable);
  try {
    createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
  } catch (err) {
    return fail(`is not a usable public key (${(err as Error).message})`);
  }
  return frozenCopy(jwk, { kid });
}

/**
 * The private key in a PEM or JWK text, proven able to sign the catalog with `alg` and `kid`, or
 * undefined after reporting why not (never quoting the text).
 */
async function signingKey(text: string, signing: { kid: string; alg: string }, fail: (message: string) => undefined): Promise<KeyObject | undefined> {
  const trimmed = text.trim();
  let key: KeyObject;
  if (trimmed.startsWith('{')) {
    let jwk: unknown;
    try {
      jwk = JSON.parse(trimmed);
    } catch {
      return fail('is not valid JSON (a private JWK, or a PEM "-----BEGIN PRIVATE KEY-----" block, is expected)');
    }
    if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) return fail('must hold one private JWK object');
    const k = jwk as JWK;
    if (k.kty !== 'EC' && k.kty !== 'OKP' && k.kty !== 'RSA') return fail(`has unsupported kty ${JSON.stringify(k.kty)} (EC, OKP or RSA expected; symmetric keys cannot sign a public catalog)`);
    if (!('d' in k)) return fail('is a public key; the catalog is signed with the private key (publish only the public part to verifiers)');
    if (k.kid !== undefined && k.kid !== signing.kid) return fail(otherKid(k.kid, signing.kid));
    try {
      key = createPrivateKey({ key: k as JsonWebKey, format: 'jwk' });
    } catch (err) {
      return fail(`is not a usable private key (${(err as Error).message})`);
    }
  } else if (trimmed.startsWith('-----BEGIN')) {
    if (/^-----BEGIN (RSA )?PUBLIC KEY-----/.test(trimmed) || trimmed.startsWith('-----BEGIN CERTIFICATE-----')) {
      return fail('is a public key or certificate; the catalog is signed with the private key');
    }
    if (trimmed.startsWith('-----BEGIN ENCRYPTED PRIVATE KEY-----')) return fail('is an encrypted private key; give it unencrypted (the file or variable is the secret)');
    try {
      key = createPrivateKey({ key: trimmed, format: 'pem' });
    } catch (err) {
      return fail(`is not a usable PEM private key (${(err as Error).message})`);
    }
  } else {
    return fail('must hold a private key, as PEM ("-----BEGIN PRIVATE KEY-----") or as a JWK');
  }
  try {
    await signDetached({ probe: true }, key, { alg: signing.alg, kid: signing.kid });
  } catch (err) {
    return fail(`cannot sign with ${signing.alg}: ${(err as Error).message}`);
  }
  return key;
}

/** The result object; its inspection and JSON never show the token or credential values. */
function secrets(
  token: string | undefined,
  credentials: PeerCredentials,
  tokenRequests: () => readonly TokenRequestCount[],
  origins: readonly string[],
  keys: readonly TrustedKey[],
  storePassword: string | undefined,
  catalogSigningKey: KeyObject | undefined,
  replicaKey: string | undefined,
): ResolvedSecrets {
  const redacted = (): Record<string, unknown> => ({
    token: token === undefined ? undefined : '[redacted]',
    storePassword: storePassword === undefined ? undefined : '[redacted]',
    catalogSigningKey: catalogSigningKey === undefined ? undefined : '[redacted]',
    replicaKey: replicaKey === undefined ? undefined : '[redacted]',
    credentials: [...origins],
    keys: keys.map((k) => k.kid),
  });
  const result = {
    ...(token !== undefined && { token }),
    ...(storePassword !== undefined && { storePassword }),
    ...(catalogSigningKey !== undefined && { catalogSigningKey }),
    ...(replicaKey !== undefined && { replicaKey }),
    credentials,
    tokenRequests,
    keys,
    toJSON: redacted,
    [inspect.custom]: () => redacted(),
  };
  return Object.freeze(result);
}
