/**
 * Static headers for peers (the original form of credentials): fixed header values, read once
 * from an environment variable or a file, sent to their origins only. A 401 cannot be helped by
 * a retry with the same values, so {@link PeerCredentials.rejected} answers false.
 *
 * @module
 */
import { schemesOfHeaders, type PeerCredentials, type PresentableScheme } from '../rules/credentials.js';

/** Inputs of {@link staticHeaders}. */
export interface StaticHeadersOptions {
  /** The peers' exact origins the headers are sent to. */
  origins: readonly string[];
  /** The headers (values are secrets: never logged). Names are sent lower case. */
  headers: Readonly<Record<string, string>>;
}

/**
 * Credentials of fixed headers. The identity names the headers (`static authorization header
 * for https://…`), never their values.
 *
 * @example staticHeaders({ origins: ['https://billing.example.com'], headers: { authorization: `Bearer ${process.env.BILLING_TOKEN}` } })
 */
export function staticHeaders(options: StaticHeadersOptions): PeerCredentials {
  const origins = new Set(options.origins);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers)) headers[name.toLowerCase()] = value;
  const names = Object.keys(headers);
  const schemes: readonly PresentableScheme[] = Object.freeze(schemesOfHeaders(names, headers['authorization']));
  return {
    headers: async (origin) => (origins.has(origin) ? { ...headers } : undefined),
    identity: (origin) => (origins.has(origin) && names.length > 0 ? `static ${names.join(', ')} header for ${origin}` : undefined),
    schemes: (origin) => (origins.has(origin) ? schemes : []),
    rejected: async () => false,
    close: async () => undefined,
  };
}
