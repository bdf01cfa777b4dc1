/**
 * ADK JS 2.0's own A2A 0.3 client classes.
 *
 * `RemoteA2AAgent` speaks A2A 0.3 through the copy of `@a2a-js/sdk` that `@google/adk` depends
 * on (0.3.x, usually nested under `@google/adk/node_modules`). ADK does not re-export its
 * `ClientFactory` or transport factories, and a bare `import '@a2a-js/sdk/client'` from this
 * package resolves to the 1.x SDK, whose client does not work with ADK (it rejects ADK's
 * 0.3-shaped messages). So the module is resolved **from ADK's own location**, which finds the
 * very copy (and version) ADK uses, wherever npm placed it.
 *
 * It is loaded synchronously through `require` (the SDK ships CommonJS next to ESM), so building
 * agents stays synchronous and this module needs no top-level await (which would break CommonJS
 * bundlers such as the ADK dev UI's). The price: our factory classes come from the SDK's CJS
 * build while ADK's default ones come from its ESM build. ADK only calls
 * `factory.createFromAgentCard()` and the client's methods (no `instanceof`), which was checked
 * in `@google/adk` 2.0.0.
 *
 * @module
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { RemoteA2AAgentConfig } from '@google/adk';
import { DiscoveryError } from '../../errors.js';

/** ADK's 0.3 `ClientFactory` instance type (from ADK's own config type). */
export type AdkClientFactory = NonNullable<RemoteA2AAgentConfig['clientFactory']>;
/** The 0.3 `ClientFactoryOptions`. */
type AdkClientFactoryOptions = AdkClientFactory['options'];
/** A 0.3 `TransportFactory`. */
type AdkTransportFactory = AdkClientFactoryOptions['transports'][number];

/** The part of `@a2a-js/sdk/client` 0.3 this package uses. */
export interface AdkA2aClientModule {
  readonly ClientFactory: new (options: AdkClientFactoryOptions) => AdkClientFactory;
  readonly JsonRpcTransportFactory: new (options?: { fetchImpl?: typeof fetch }) => AdkTransportFactory;
  readonly RestTransportFactory: new (options?: { fetchImpl?: typeof fetch }) => AdkTransportFactory;
}

let loaded: AdkA2aClientModule | undefined;

/**
 * ADK's own 0.3 client module, resolved from ADK's location on first use and cached.
 *
 * @throws Error when `@google/adk` or its `@a2a-js/sdk` copy cannot be resolved, or the copy
 *   is not 0.x or lacks the expected classes.
 */
export function adkA2aClient(): AdkA2aClientModule {
  if (loaded !== undefined) return loaded;
  const fromHere = createRequire(import.meta.url);
  const fromAdk = createRequire(fromHere.resolve('@google/adk'));
  const mod = fromAdk('@a2a-js/sdk/client') as Partial<AdkA2aClientModule>;
  for (const name of ['ClientFactory', 'JsonRpcTransportFactory', 'RestTransportFactory'] as const) {
    if (typeof mod[name] !== 'function') throw new DiscoveryError('ERR_CONFIG_INVALID', `the @a2a-js/sdk copy used by @google/adk does not export ${name}`);
  }
  // A 1.x copy here would fail on ADK's first send (it rejects ADK's 0.3-shaped messages), so
  // refuse it while building the agent rather than on the request path.
  const version = adkA2aSdkVersion(fromAdk);
  if (version !== undefined && !version.startsWith('0.')) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `@google/adk resolves @a2a-js/sdk ${version}; ADK's RemoteA2AAgent needs its 0.x (A2A 0.3) client`);
  }
  loaded = mod as AdkA2aClientModule;
  return loaded;
}

/** The version of ADK's SDK copy, found by walking up from its resolved client entry. */
function adkA2aSdkVersion(fromAdk: NodeJS.Require): string | undefined {
  let dir = path.dirname(fromAdk.resolve('@a2a-js/sdk/client'));
  for (let i = 0; i < 6; i++) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === '@a2a-js/sdk' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not a package root; keep walking up
    }
    dir = path.dirname(dir);
  }
  return undefined;
}
