/**
 * The Kubernetes source: Services carrying a label selector, listed and then watched, like a
 * client-go informer. Uses the optional peer dependency `@kubernetes/client-node` ~1.4 (2.x does
 * not run on Node 20), imported only when this source first does I/O.
 *
 * Lifecycle: `start()` lists the Services, then watches from the list's `resourceVersion`
 * (`allowWatchBookmarks`), so every ADDED / MODIFIED / DELETED updates the list and notifies
 * subscribers. A watch closed by the server is re-established from the last resourceVersion
 * seen; an ERROR event, a 410 Gone or a broken connection triggers a re-list and a new watch,
 * with capped exponential backoff when it keeps failing. Every `resyncIntervalMs` the source
 * re-lists and restarts the watch, which also recovers a connection that died silently.
 *
 * This module checks the options; the list-and-watch loop is in kubernetes-informer.ts.
 *
 * @module
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Clock } from '../clock/index.js';
import type { EventStream } from '../events/index.js';
import { SOURCE_DEFAULTS } from '../rules/defaults.js';
import { KubernetesSource } from './kubernetes-informer.js';
import { describe, hasControl } from '../text.js';
import { OptionProblems } from './source-core.js';
import type { Source } from './types.js';

/** Inputs of {@link kubernetesSource}. Durations are milliseconds. */
export interface KubernetesSourceOptions {
  /** Source id, e.g. `'cluster'`. */
  id: string;
  /** The namespace to watch; every namespace when unset (needs cluster-wide list/watch RBAC). */
  namespace?: string;
  /** A Kubernetes label selector, e.g. `'a2a.example.com/agent=true'`. Required: a source never watches every Service. */
  labelSelector: string;
  /** A `KubeConfig` from `@kubernetes/client-node`. Default: `new KubeConfig().loadFromDefault()` (in-cluster or `~/.kube/config`). */
  kubeConfig?: unknown;
  /** Scheme of the derived base URLs. Default `'https'` (the allowlist requires TLS outside loopback development). */
  scheme?: 'https' | 'http';
  /** The cluster DNS domain of derived base URLs. Default `'cluster.local'`. */
  clusterDomain?: string;
  /** Re-list (and restart the watch) this often. Default 300000 (5 minutes). */
  resyncIntervalMs?: number;
  /** First retry delay after repeated watch or list failures (the first retry is immediate). Default 1000. */
  initialBackoffMs?: number;
  /** Cap of the retry delay. Default 30000. */
  maxBackoffMs?: number;
  /** Bound on one list request. Default 30000. */
  listTimeoutMs?: number;
  /** Where `source-error`, `source-problem` and `source-watch-error` alerts go. */
  events?: EventStream;
  /** Timers and `updatedAt`. Default the system clock. */
  clock?: Clock;
  /**
   * How to import `@kubernetes/client-node`. Default `() => import('@kubernetes/client-node')`;
   * set it for bundlers that need a static import, or in tests.
   */
  importClient?: () => Promise<unknown>;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/**
 * Creates a Kubernetes source. Pure: validates the options, loads nothing and does no I/O.
 * Records: `name` = `<namespace>/<service>`, `baseUrl` by the rules in docs/sources.md
 * (annotation `a2a-discovery/base-url`, else `<scheme>://<name>.<namespace>.svc.<clusterDomain>:<port>/`
 * with the port from annotation `a2a-discovery/port`, the port named `a2a`, or the first port),
 * `metadata` = `{ namespace, service, baseUrlFrom, port? }`. A Service with no usable port is
 * skipped with a problem (state `problems`, a `source-problem` alert).
 *
 * `refresh()` re-lists (and, once started, restarts the watch); `start()` lists and watches.
 * Both reject with `ERR_CONFIG_INVALID` when `@kubernetes/client-node` cannot be loaded or the
 * kubeconfig has no usable cluster; API failures never reject (the last good list is kept,
 * `error` is set: `ERR_FETCH_STATUS`, `ERR_FETCH_NETWORK` or `ERR_FETCH_TIMEOUT`, stage `source`).
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for bad options, listing each.
 * @example
 * const source = kubernetesSource({ id: 'cluster', namespace: 'agents', labelSelector: 'a2a.example.com/agent=true' });
 * source.subscribe((state) => resolver.update(source.id, state.records));
 * await source.start();
 */
export function kubernetesSource(options: KubernetesSourceOptions): Source {
  const check = new OptionProblems('kubernetes source');
  const opts = (options ?? {}) as Partial<KubernetesSourceOptions>;
  const id = check.id(opts.id);
  if (opts.namespace !== undefined && (typeof opts.namespace !== 'string' || !DNS_LABEL.test(opts.namespace))) {
    check.add('namespace', `must be a namespace name (a DNS label), got ${describe(opts.namespace)}`);
  }
  if (typeof opts.labelSelector !== 'string' || opts.labelSelector.trim() === '' || opts.labelSelector.length > 1024 || hasControl(opts.labelSelector)) {
    check.add('labelSelector', `must be a non-empty label selector such as "a2a.example.com/agent=true", got ${describe(opts.labelSelector)}`);
  }
  const kc = opts.kubeConfig as Partial<KubeConfig> | null | undefined;
  if (kc !== undefined && (typeof kc?.getCurrentCluster !== 'function' || typeof kc.makeApiClient !== 'function')) {
    check.add('kubeConfig', 'must be a KubeConfig from @kubernetes/client-node');
  }
  const scheme = opts.scheme ?? 'https';
  if (scheme !== 'https' && scheme !== 'http') check.add('scheme', `must be "https" or "http", got ${describe(scheme)}`);
  const clusterDomain = opts.clusterDomain ?? 'cluster.local';
  if (typeof clusterDomain !== 'string' || !DNS_NAME.test(clusterDomain)) check.add('clusterDomain', `must be a DNS name, got ${describe(clusterDomain)}`);
  const resyncIntervalMs = check.positiveInt(opts.resyncIntervalMs, 'resyncIntervalMs') ?? SOURCE_DEFAULTS.resyncIntervalMs;
  const initialBackoffMs = check.positiveInt(opts.initialBackoffMs, 'initialBackoffMs') ?? 1000;
  const maxBackoffMs = check.positiveInt(opts.maxBackoffMs, 'maxBackoffMs') ?? 30_000;
  const listTimeoutMs = check.positiveInt(opts.listTimeoutMs, 'listTimeoutMs') ?? 30_000;
  if (opts.importClient !== undefined && typeof opts.importClient !== 'function') check.add('importClient', 'must be a function returning the module');
  check.throwIfAny();
  return new KubernetesSource({
    id,
    namespace: opts.namespace,
    labelSelector: (opts.labelSelector as string).trim(),
    kubeConfig: kc ?? undefined,
    scheme,
    clusterDomain,
    resyncIntervalMs,
    initialBackoffMs,
    maxBackoffMs: Math.max(maxBackoffMs, initialBackoffMs),
    listTimeoutMs,
    events: opts.events,
    clock: opts.clock,
    importClient: opts.importClient,
  });
}
