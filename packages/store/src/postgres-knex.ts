/**
 * A knex pool on a PostgreSQL store's database for the work beside the state store's own pool:
 * backup and restore, and ADK's session history. The connection (host, port, user, database and
 * TLS as `sslmode` says) is `postgresConnection` of `a2a-discovery/config`, as the state store's;
 * knex loads when a pool is made, never with this module.
 *
 * @module
 */
import type { Knex } from 'knex';
import { postgresConnection } from 'a2a-discovery/config';

/** knex's own log, silenced: failures reach the caller as errors. */
const QUIET = { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined };

/** A pool of at most `maxConnections` on `url` (the password apart from it), with `searchPath` as the schema when given. */
export async function postgresKnex(target: { readonly url: string; readonly password?: string }, o: { readonly searchPath?: string; readonly maxConnections: number }): Promise<Knex> {
  const { default: knexFactory } = await import('knex');
  return knexFactory({
    client: 'pg',
    connection: { ...postgresConnection(target.url), ...(target.password !== undefined && { password: target.password }) },
    ...(o.searchPath !== undefined && { searchPath: [o.searchPath] }),
    pool: { min: 0, max: o.maxConnections },
    acquireConnectionTimeout: 10_000,
    log: QUIET,
  });
}
