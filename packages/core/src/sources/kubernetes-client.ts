/**
 * Internal: loads the optional peer dependency `@kubernetes/client-node` (~1.4; 2.x crashes on
 * Node 20) only when a Kubernetes source is used, with a configuration error a person can act
 * on when it is missing.
 */
import type * as KubeClient from '@kubernetes/client-node';
import { DiscoveryError } from '../errors.js';

/** The module's shape (a type-only import: nothing is loaded with this file). */
export type KubeClientModule = typeof KubeClient;

const PACKAGE = '@kubernetes/client-node';

let cached: Promise<KubeClientModule> | undefined;

/**
 * Imports `@kubernetes/client-node` once per process (unless `importer` is given, as tests do).
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) when the package is not installed
 *   or fails to load, naming the version to install.
 */
export async function loadKubernetesClient(importer?: () => Promise<unknown>): Promise<KubeClientModule> {
  if (importer === undefined) {
    cached ??= load(() => import('@kubernetes/client-node')).catch((err: unknown) => {
      cached = undefined;
      throw err;
    });
    return cached;
  }
  return load(importer);
}

async function load(importer: () => Promise<unknown>): Promise<KubeClientModule> {
  let mod: unknown;
  try {
    mod = await importer();
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
    const message = missing
      ? `the kubernetes source needs the optional dependency ${PACKAGE}, which is not installed: run npm install ${PACKAGE}@~1.4.0 (2.x does not run on Node 20)`
      : `the kubernetes source could not load ${PACKAGE} (version ~1.4.0 is required; 2.x does not run on Node 20): ${err instanceof Error ? err.message : String(err)}`;
    throw new DiscoveryError('ERR_CONFIG_INVALID', message, { stage: 'config', cause: err, problems: [{ path: 'kubernetes', message }] });
  }
  const m = mod as Partial<KubeClientModule> | null;
  if (typeof m?.KubeConfig !== 'function' || typeof m.Watch !== 'function' || typeof m.CoreV1Api !== 'function') {
    const message = `${PACKAGE} does not export KubeConfig, Watch and CoreV1Api; version ~1.4.0 is required`;
    throw new DiscoveryError('ERR_CONFIG_INVALID', message, { stage: 'config', problems: [{ path: 'kubernetes', message }] });
  }
  return mod as KubeClientModule;
}
