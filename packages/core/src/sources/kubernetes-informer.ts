/**
 * The Kubernetes source at work, like a client-go informer: the client module loaded and the API
 * client built once; Services listed (bounded by `listTimeoutMs`), then watched from the list's
 * `resourceVersion`; each ADDED / MODIFIED / DELETED applied and the records published; a watch
 * the server closed resumed, an ERROR, 410 Gone or broken connection answered by a re-list, with
 * capped exponential backoff while it keeps failing; a periodic re-list. The options are checked
 * by `kubernetesSource` (kubernetes-source.ts).
 *
 * @module
 */
import { backoffDelay } from '../rules/backoff.js';

import type { CoreV1Api, KubeConfig, RequestContext, ResponseContext, V1ServiceList, Watch } from '@kubernetes/client-node';
import type { Clock, TimerHandle } from '../clock/index.js';
import { DiscoveryError, toDiscoveryError } from '../errors.js';
import type { Problem } from '../errors.js';
import type { EventStream } from '../events/index.js';
import { loadKubernetesClient, type KubeClientModule } from './kubernetes-client.js';
import { serviceEndpoint, type ServiceLike } from './kubernetes-endpoint.js';
import { SourceCore } from './source-core.js';
import type { EndpointRecord, Source, SourceListener, SourceState } from './types.js';

/** The watch's re-list keeps its documented delays exactly (initialBackoffMs, doubling): no jitter. */
const NO_JITTER = (): number => 0;

/** The options of a source, checked and completed (see `kubernetesSource`). */
export interface KubernetesSettings {
  id: string;
  namespace: string | undefined;
  labelSelector: string;
  kubeConfig: Partial<KubeConfig> | undefined;
  scheme: 'https' | 'http';
  clusterDomain: string;
  resyncIntervalMs: number;
  initialBackoffMs: number;
  maxBackoffMs: number;
  listTimeoutMs: number;
  events: EventStream | undefined;
  clock: Clock | undefined;
  importClient: (() => Promise<unknown>) | undefined;
}

interface Client {
  mod: KubeClientModule;
  api: CoreV1Api;
  watch: Watch;
  server: string;
}

class ListTimeout extends Error {}
class SourceClosed extends Error {}

/** The source `kubernetesSource` returns. */
export class KubernetesSource implements Source {
  readonly kind = 'kubernetes' as const;
  readonly id: string;
  readonly #s: KubernetesSettings;
  readonly #core: SourceCore;
  readonly #clock: Clock;
  readonly #path: string;
  #client: Promise<Client> | undefined;
  /** The client once built (set by a successful {@link #ensureClient}). */
  #ready: Client | undefined;
  #services = new Map<string, ServiceLike>();
  #resourceVersion: string | undefined;
  #started = false;
  #closed = false;
  #listing: Promise<boolean> | undefined;
  #listController: AbortController | undefined;
  /** Incremented whenever a watch ends or is replaced; callbacks of older watches are ignored. */
  #watchGen = 0;
  #watchController: AbortController | undefined;
  #watchStartedAt = 0;
  #watchSawEvent = false;
  /** Consecutive failures without proof of health; drives the backoff. */
  #failures = 0;
  #retryTimer: TimerHandle | undefined;
  #resyncTimer: TimerHandle | undefined;

  constructor(settings: KubernetesSettings) {
    this.#s = settings;
    this.id = settings.id;
    this.#core = new SourceCore(settings.id, 'kubernetes', { events: settings.events, clock: settings.clock });
    this.#clock = this.#core.clock;
    this.#path = settings.namespace === undefined ? '/api/v1/services' : `/api/v1/namespaces/${encodeURIComponent(settings.namespace)}/services`;
  }

  current(): SourceState {
    return this.#core.state;
  }

  subscribe(listener: SourceListener): () => void {
    return this.#core.subscribe(listener);
  }

  carryError(alert: { raisedAt: number }): void {
    this.#core.carryError(alert);
  }

  async refresh(): Promise<SourceState> {
    if (this.#closed) return this.#core.state;
    await this.#ensureClient();
    const ok = await this.#list();
    if (ok && this.#running) this.#startWatch();
    return this.#core.state;
  }

  async start(): Promise<void> {
    if (this.#started || this.#closed) return;
    await this.#ensureClient();
    if (this.#closed) return;
    this.#started = true;
    await this.#relistAndWatch();
    this.#scheduleResync();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#endWatch();
    this.#retryTimer?.cancel();
    this.#resyncTimer?.cancel();
    this.#listController?.abort(new SourceClosed('the kubernetes source was closed'));
    this.#core.clearListeners();
    await this.#listing?.catch(() => undefined);
  }

  get #running(): boolean {
    return this.#started && !this.#closed;
  }

  /** Loads the client module and builds the API client once; a failure is retried on the next call. */
  #ensureClient(): Promise<Client> {
    this.#client ??= this.#makeClient().catch((err: unknown) => {
      this.#client = undefined;
      throw err;
    });
    return this.#client;
  }

  async #makeClient(): Promise<Client> {
    const mod = await loadKubernetesClient(this.#s.importClient);
    const configError = (message: string, cause?: unknown): DiscoveryError =>
      new DiscoveryError('ERR_CONFIG_INVALID', `kubernetes source ${this.id}: ${message}`, {
        stage: 'config',
        cause,
        problems: [{ path: 'kubeConfig', message }],
      });
    let kc: KubeConfig;
    if (this.#s.kubeConfig !== undefined) kc = this.#s.kubeConfig as KubeConfig;
    else {
      kc = new mod.KubeConfig();
      try {
        kc.loadFromDefault();
      } catch (err) {
        throw configError(`could not load the default kubeconfig: ${err instanceof Error ? err.message : String(err)}`, err);
      }
    }
    const cluster = kc.getCurrentCluster();
    if (cluster === null || typeof cluster.server !== 'string' || cluster.server === '') throw configError('the kubeconfig has no current cluster with a server URL');
    let api: CoreV1Api;
    try {
      api = kc.makeApiClient(mod.CoreV1Api);
    } catch (err) {
      throw configError(`could not create the API client: ${err instanceof Error ? err.message : String(err)}`, err);
    }
    this.#ready = { mod, api, watch: new mod.Watch(kc), server: cluster.server.replace(/\/+$/, '') };
    return this.#ready;
  }

  /** Lists and then watches; on a failed list, retries with backoff. Never rejects. */
  async #relistAndWatch(): Promise<void> {
    if (!this.#running) return;
    const ok = await this.#list();
    if (!this.#running) return;
    if (ok) this.#startWatch();
    else {
      this.#failures++;
      this.#scheduleRetry(() => this.#relistAndWatch());
    }
  }

  /** One list; concurrent callers share it. True when it succeeded; API failures are recorded, not thrown (only a configuration error from loading the client rejects). */
  #list(): Promise<boolean> {
    this.#listing ??= this.#doList().finally(() => {
      this.#listing = undefined;
    });
    return this.#listing;
  }

  async #doList(): Promise<boolean> {
    if (this.#closed) return false;
    const client = await this.#ensureClient();
    if (this.#closed) return false;
    const controller = new AbortController();
    this.#listController = controller;
    const timer = this.#clock.setTimer(() => controller.abort(new ListTimeout()), this.#s.listTimeoutMs);
    // The generated client takes an AbortSignal only through a request middleware.
    const withSignal = {
      middleware: [
        {
          pre: (ctx: RequestContext) => {
            ctx.setSignal(controller.signal);
            return new client.mod.Observable(Promise.resolve(ctx));
          },
          post: (ctx: ResponseContext) => new client.mod.Observable(Promise.resolve(ctx)),
        },
      ],
      middlewareMergeStrategy: 'append' as const,
    };
    try {
      const { namespace, labelSelector } = this.#s;
      const list: V1ServiceList =
        namespace === undefined
          ? await client.api.listServiceForAllNamespaces({ labelSelector }, withSignal)
          : await client.api.listNamespacedService({ namespace, labelSelector }, withSignal);
      if (this.#closed) return false;
      const services = new Map<string, ServiceLike>();
      for (const item of list.items ?? []) {
        const service = item as ServiceLike;
        services.set(keyOf(service), service);
      }
      this.#services = services;
      this.#resourceVersion = list.metadata?.resourceVersion ?? undefined;
      this.#publish();
      return true;
    } catch (err) {
      if (this.#closed) return false;
      this.#core.fail(this.#listError(err, controller.signal.reason, client.server));
      return false;
    } finally {
      timer.cancel();
      if (this.#listController === controller) this.#listController = undefined;
    }
  }

  #listError(err: unknown, reason: unknown, server: string): DiscoveryError {
    const url = `${server}${this.#path}?labelSelector=${encodeURIComponent(this.#s.labelSelector)}`;
    const what = `listing Services ${this.#s.namespace === undefined ? 'in all namespaces' : `in namespace ${this.#s.namespace}`} with labelSelector ${JSON.stringify(this.#s.labelSelector)}`;
    if (reason instanceof ListTimeout) {
      return new DiscoveryError('ERR_FETCH_TIMEOUT', `${what}: no answer within listTimeoutMs=${this.#s.listTimeoutMs}`, { url, stage: 'source', cause: err });
    }
    const status = (err as { code?: unknown } | null)?.code;
    if (typeof status === 'number') {
      const body = (err as { body?: unknown }).body;
      const detail = statusMessage(body);
      return new DiscoveryError('ERR_FETCH_STATUS', `${what}: the API server answered ${status}${detail === undefined ? '' : `: ${detail}`}`, { url, stage: 'source', status, cause: err });
    }
    return new DiscoveryError('ERR_FETCH_NETWORK', `${what}: ${err instanceof Error ? err.message : String(err)}`, { url, stage: 'source', cause: err });
  }

  /** Recomputes the records from the Services known and publishes them. */
  #publish(): void {
    const records: EndpointRecord[] = [];
    const problems: Problem[] = [];
    const keys = [...this.#services.keys()].sort();
    for (const key of keys) {
      const result = serviceEndpoint(this.#services.get(key)!, { source: this.id, scheme: this.#s.scheme, clusterDomain: this.#s.clusterDomain });
      if ('record' in result) records.push(result.record);
      else problems.push(result.problem);
    }
    this.#core.succeed(records, problems);
  }

  /** Opens a watch from the last resourceVersion, replacing any current one. Needs a successful list first. */
  #startWatch(): void {
    const client = this.#ready;
    if (client === undefined || !this.#running) return;
    this.#endWatch();
    this.#retryTimer?.cancel();
    this.#retryTimer = undefined;
    const gen = ++this.#watchGen;
    this.#watchStartedAt = this.#clock.now();
    this.#watchSawEvent = false;
    const query: Record<string, string | boolean> = { labelSelector: this.#s.labelSelector, allowWatchBookmarks: true };
    if (this.#resourceVersion !== undefined) query['resourceVersion'] = this.#resourceVersion;
    client.watch
      .watch(
        this.#path,
        query,
        (type: string, object: unknown) => {
          if (gen === this.#watchGen) this.#onEvent(type, object);
        },
        (err: unknown) => {
          if (gen === this.#watchGen) this.#onWatchDone(err);
        },
      )
      .then((controller) => {
        // Watch.watch resolves once the response headers arrive; the watch may already be over.
        if (gen === this.#watchGen) this.#watchController = controller;
        else controller.abort();
      })
      .catch((err: unknown) => {
        if (gen === this.#watchGen) this.#onWatchDone(err ?? new Error('watch failed'));
      });
  }

  /** Forgets the current watch (its late callbacks are ignored) and aborts its connection. */
  #endWatch(): void {
    this.#watchGen++;
    const controller = this.#watchController;
    this.#watchController = undefined;
    controller?.abort();
  }

  #onEvent(type: string, object: unknown): void {
    const service = object as ServiceLike | null;
    const rv = service?.metadata?.resourceVersion;
    switch (type) {
      case 'ADDED':
      case 'MODIFIED':
      case 'DELETED': {
        if (service === null || typeof service !== 'object') return;
        if (typeof rv === 'string') this.#resourceVersion = rv;
        this.#markHealthy();
        if (type === 'DELETED') this.#services.delete(keyOf(service));
        else this.#services.set(keyOf(service), service);
        this.#publish();
        return;
      }
      case 'BOOKMARK':
        // Only moves the resourceVersion a re-watch resumes from; the list does not change.
        if (typeof rv === 'string') this.#resourceVersion = rv;
        this.#markHealthy();
        return;
      case 'ERROR':
        this.#onWatchError(object);
        return;
      default:
        return;
    }
  }

  #markHealthy(): void {
    this.#watchSawEvent = true;
    this.#failures = 0;
  }

  /** An ERROR event: 410 Gone (resourceVersion too old) or another failure. Re-list and re-watch. */
  #onWatchError(status: unknown): void {
    this.#endWatch();
    if (!this.#running) return;
    const code = (status as { code?: unknown } | null)?.code;
    if (code !== 410) {
      const message = statusMessage(status) ?? 'unknown error';
      this.#core.alert('source-watch-error', `source ${this.id}: the watch reported an error (${String(code ?? 'no code')}): ${message}; re-listing`, { code });
    }
    this.#failures++;
    this.#scheduleRetry(() => this.#relistAndWatch());
  }

  /** The watch connection ended: closed by the server (err null) or failed. */
  #onWatchDone(err: unknown): void {
    this.#endWatch();
    if (!this.#running) return;
    if (err === null || err === undefined) {
      // A normal server-side close: resume from the last resourceVersion without a re-list. A
      // watch that ends at once and delivered nothing counts as a failure, so closes cannot spin.
      const lived = this.#clock.now() - this.#watchStartedAt;
      if (this.#watchSawEvent || lived >= this.#s.initialBackoffMs) this.#failures = 0;
      else this.#failures++;
      this.#scheduleRetry(() => this.#startWatch());
      return;
    }
    const status = (err as { statusCode?: unknown } | null)?.statusCode;
    if (status !== 410) {
      const message = err instanceof Error ? err.message : String(err);
      this.#core.alert('source-watch-error', `source ${this.id}: the watch failed${typeof status === 'number' ? ` with ${status}` : ''}: ${message}; re-listing`, {
        ...(typeof status === 'number' && { status }),
      });
    }
    this.#failures++;
    this.#scheduleRetry(() => this.#relistAndWatch());
  }

  /** The first retry is immediate; then `initialBackoffMs`, doubling up to `maxBackoffMs`. */
  #backoffMs(): number {
    if (this.#failures <= 1) return 0;
    return backoffDelay(this.#failures - 1, { baseMs: this.#s.initialBackoffMs, maxMs: this.#s.maxBackoffMs, jitter: 0, random: NO_JITTER });
  }

  #scheduleRetry(action: () => void | Promise<void>): void {
    if (!this.#running) return;
    this.#retryTimer?.cancel();
    const timer = this.#clock.setTimer(() => {
      if (this.#retryTimer === timer) this.#retryTimer = undefined;
      if (this.#running) void this.#guard(action);
    }, this.#backoffMs());
    this.#retryTimer = timer;
  }

  #scheduleResync(): void {
    if (!this.#running) return;
    this.#resyncTimer = this.#clock.setTimer(() => {
      void this.#guard(() => this.#relistAndWatch()).finally(() => this.#scheduleResync());
    }, this.#s.resyncIntervalMs);
  }

  /** Runs background work; anything unexpected is reported, never left unhandled. */
  async #guard(action: () => void | Promise<void>): Promise<void> {
    try {
      await action();
    } catch (err) {
      if (!this.#closed) this.#core.fail(toDiscoveryError(err, 'ERR_INTERNAL', { stage: 'source' }));
    }
  }
}

function keyOf(service: ServiceLike): string {
  return `${service.metadata?.namespace ?? ''}/${service.metadata?.name ?? ''}`;
}

/** The `message` of a Kubernetes Status object (or its JSON text), shortened. */
function statusMessage(body: unknown): string | undefined {
  let value = body;
  if (typeof body === 'string') {
    try {
      value = JSON.parse(body) as unknown;
    } catch {
      return body.slice(0, 300);
    }
  }
  const message = (value as { message?: unknown } | null)?.message;
  return typeof message === 'string' ? message.slice(0, 300) : undefined;
}
