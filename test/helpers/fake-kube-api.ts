/**
 * A FAKE Kubernetes API server for tests: one `node:http` server on 127.0.0.1, port 0, that
 * speaks just enough of the core/v1 Services API for a list-then-watch client. No cluster is
 * involved; nothing here is a real API server.
 *
 * Endpoints:
 * - `GET /api/v1/namespaces/<ns>/services` and `GET /api/v1/services` (all namespaces): a
 *   `ServiceList` filtered by `labelSelector` (`k=v`, `k==v`, `k!=v`, `k`, `!k`, comma-joined),
 *   with `metadata.resourceVersion`.
 * - The same paths with `watch=1` / `watch=true`: a chunked stream of newline-delimited watch
 *   events `{ type, object }`. Events newer than the requested `resourceVersion` are replayed
 *   first, then live changes are pushed. A requested resourceVersion older than the compaction
 *   point is answered with an `ERROR` event whose Status has code 410, as a real server does.
 *
 * Test controls: {@link FakeKubeApi.apply} / {@link FakeKubeApi.remove} change Services and push
 * ADDED / MODIFIED / DELETED to open watches; {@link FakeKubeApi.bookmark} pushes a BOOKMARK;
 * {@link FakeKubeApi.closeWatches} ends every open watch cleanly (a server-side timeout);
 * {@link FakeKubeApi.expireWatches} sends `ERROR` 410 and ends them (and compacts history, so a
 * re-watch from an old resourceVersion gets 410 too); {@link FakeKubeApi.failLists} answers lists
 * with an error status. Every request is recorded.
 *
 * @example
 * const api = await startFakeKubeApi();
 * api.apply(fakeService({ namespace: 'agents', name: 'billing', labels: { a2a: 'true' }, ports: [{ name: 'a2a', port: 8443 }] }));
 * kc.loadFromOptions(api.kubeConfigOptions());
 * await api.close();
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A Service as the fake stores it (the subset of v1.Service the tests need). */
export interface FakeService {
  apiVersion: 'v1';
  kind: 'Service';
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: { ports: Array<{ name?: string; port: number; protocol: string }> };
}

/** Builds a Service for {@link FakeKubeApi.apply}. */
export function fakeService(input: {
  namespace: string;
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ports?: Array<{ name?: string; port: number }>;
}): FakeService {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      uid: `uid-${input.namespace}-${input.name}`,
      resourceVersion: '0',
      labels: { ...(input.labels ?? {}) },
      annotations: { ...(input.annotations ?? {}) },
    },
    spec: { ports: (input.ports ?? []).map((p) => ({ ...p, protocol: 'TCP' })) },
  };
}

/** One request the fake received. */
export interface RecordedKubeRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  watch: boolean;
  authorization: string | undefined;
}

interface Change {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: FakeService;
  previous: FakeService | undefined;
}

interface OpenWatch {
  namespace: string | undefined;
  selector: Selector;
  res: http.ServerResponse;
}

type Selector = (labels: Record<string, string>) => boolean;

export interface FakeKubeApi {
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** Every request, oldest first. */
  readonly requests: readonly RecordedKubeRequest[];
  /** Watches currently open. */
  readonly openWatches: number;
  /** The current resourceVersion. */
  readonly resourceVersion: string;
  /** Options for `KubeConfig.loadFromOptions` pointing at this server (token auth, `skipTLSVerify` so http is accepted). */
  kubeConfigOptions(): object;
  /** Creates or replaces a Service and pushes ADDED / MODIFIED (or DELETED if it stops matching) to open watches. */
  apply(service: FakeService): FakeService;
  /** Deletes a Service and pushes DELETED. */
  remove(namespace: string, name: string): void;
  /** Pushes a BOOKMARK carrying the current resourceVersion to every open watch. */
  bookmark(): void;
  /** Ends every open watch cleanly, as a server-side watch timeout does. */
  closeWatches(): void;
  /** Sends ERROR 410 (Expired) to every open watch, ends them, and compacts history. */
  expireWatches(): void;
  /** Answers the next `count` list requests with `status` (default 500). */
  failLists(count: number, status?: number): void;
  /** Resolves when `predicate` holds, polling every 10 ms; rejects after `timeoutMs`. */
  waitFor(predicate: () => boolean, what: string, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the FAKE API server on 127.0.0.1, port 0. */
export async function startFakeKubeApi(): Promise<FakeKubeApi> {
  const services = new Map<string, FakeService>();
  const history: Change[] = [];
  const requests: RecordedKubeRequest[] = [];
  const watches = new Set<OpenWatch>();
  const sockets = new Set<Socket>();
  let rv = 100;
  let compactedBelow = 0;
  let listFailures: { count: number; status: number } = { count: 0, status: 500 };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const query = Object.fromEntries(url.searchParams);
    const isWatch = query['watch'] === '1' || query['watch'] === 'true';
    requests.push({ method: req.method ?? 'GET', path: url.pathname, query, watch: isWatch, authorization: req.headers.authorization });
    const match = /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?services$/.exec(url.pathname);
    if (req.method !== 'GET' || match === null) return status(res, 404, 'NotFound', `the fake API serves only Service list and watch, not ${req.method} ${url.pathname}`);
    const namespace = match[1] === undefined ? undefined : decodeURIComponent(match[1]);
    let selector: Selector;
    try {
      selector = parseSelector(query['labelSelector'] ?? '');
    } catch (err) {
      return status(res, 400, 'BadRequest', (err as Error).message);
    }
    if (isWatch) return openWatch(res, namespace, selector, query['resourceVersion']);
    if (listFailures.count > 0) {
      listFailures.count--;
      return status(res, listFailures.status, 'InternalError', 'injected list failure');
    }
    const items = [...services.values()].filter((s) => (namespace === undefined || s.metadata.namespace === namespace) && selector(s.metadata.labels));
    items.sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`));
    json(res, 200, { apiVersion: 'v1', kind: 'ServiceList', metadata: { resourceVersion: String(rv) }, items });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  function openWatch(res: http.ServerResponse, namespace: string | undefined, selector: Selector, from: string | undefined): void {
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    const start = from === undefined || from === '' || from === '0' ? rv : Number(from);
    if (!Number.isFinite(start) || start < compactedBelow) {
      res.end(line({ type: 'ERROR', object: expiredStatus(from) }));
      return;
    }
    const watch: OpenWatch = { namespace, selector, res };
    watches.add(watch);
    res.on('close', () => watches.delete(watch));
    for (const change of history) if (change.rv > start) deliver(watch, change);
  }

  function deliver(watch: OpenWatch, change: Change): void {
    if (watch.namespace !== undefined && change.object.metadata.namespace !== watch.namespace) return;
    const before = change.previous !== undefined && watch.selector(change.previous.metadata.labels);
    const after = change.type !== 'DELETED' && watch.selector(change.object.metadata.labels);
    let type: string;
    if (change.type === 'DELETED') {
      if (!before) return;
      type = 'DELETED';
    } else if (after) type = before ? 'MODIFIED' : 'ADDED';
    else if (before) type = 'DELETED';
    else return;
    watch.res.write(line({ type, object: change.object }));
  }

  function record(change: Omit<Change, 'rv'>): void {
    const full = { ...change, rv };
    history.push(full);
    for (const watch of watches) deliver(watch, full);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    origin,
    get requests() {
      return requests;
    },
    get openWatches() {
      return watches.size;
    },
    get resourceVersion() {
      return String(rv);
    },
    kubeConfigOptions() {
      return {
        clusters: [{ name: 'fake', server: origin, skipTLSVerify: true }],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'c', cluster: 'fake', user: 'u' }],
        currentContext: 'c',
      };
    },
    apply(service) {
      const key = `${service.metadata.namespace}/${service.metadata.name}`;
      const previous = services.get(key);
      rv++;
      const stored: FakeService = structuredClone(service);
      stored.metadata.resourceVersion = String(rv);
      services.set(key, stored);
      record({ type: previous === undefined ? 'ADDED' : 'MODIFIED', object: stored, previous });
      return stored;
    },
    remove(namespace, name) {
      const key = `${namespace}/${name}`;
      const previous = services.get(key);
      if (previous === undefined) return;
      services.delete(key);
      rv++;
      const object = structuredClone(previous);
      object.metadata.resourceVersion = String(rv);
      record({ type: 'DELETED', object, previous });
    },
    bookmark() {
      for (const watch of watches) watch.res.write(line({ type: 'BOOKMARK', object: { kind: 'Service', apiVersion: 'v1', metadata: { resourceVersion: String(rv) } } }));
    },
    closeWatches() {
      for (const watch of [...watches]) {
        watches.delete(watch);
        watch.res.end();
      }
    },
    expireWatches() {
      compactedBelow = rv;
      history.length = 0;
      for (const watch of [...watches]) {
        watches.delete(watch);
        watch.res.end(line({ type: 'ERROR', object: expiredStatus(undefined) }));
      }
    },
    failLists(count, statusCode = 500) {
      listFailures = { count, status: statusCode };
    },
    async waitFor(predicate, what, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async close() {
      for (const watch of watches) watch.res.end();
      watches.clear();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function expiredStatus(from: string | undefined): object {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `too old resource version: ${from ?? '?'}`, reason: 'Expired', code: 410 };
}

function line(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

function json(res: http.ServerResponse, code: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function status(res: http.ServerResponse, code: number, reason: string, message: string): void {
  json(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

/** Equality-based label selectors: `k=v`, `k==v`, `k!=v`, `k`, `!k`, comma-joined (AND). */
function parseSelector(text: string): Selector {
  const terms = text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '')
    .map((term): Selector => {
      let m = /^([A-Za-z0-9./_-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)$/.exec(term);
      if (m !== null) {
        const [, key, op, value] = m as unknown as [string, string, string, string];
        return op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value;
      }
      m = /^(!?)([A-Za-z0-9./_-]+)$/.exec(term);
      if (m !== null) {
        const [, not, key] = m as unknown as [string, string, string];
        return not === '!' ? (l) => !(key in l) : (l) => key in l;
      }
      throw new Error(`unable to parse requirement: ${JSON.stringify(term)}`);
    });
  return (labels) => terms.every((t) => t(labels));
}
