/**
 * A loopback fault server: one `node:http` (or `node:https`) server on 127.0.0.1, port 0,
 * serving many A2A endpoints at once, each of which can be switched to a failure mode mid-test.
 *
 * Each endpoint lives at base path `/<id>/`; its card is served at
 * `/<id>/.well-known/agent-card.json` (and at the legacy `/<id>/.well-known/agent.json`).
 * Every request under `/<id>/` counts as a hit of that endpoint and its method, path and
 * headers are recorded (the most recent `maxRecordedRequests` per endpoint).
 *
 * Modes (see {@link FaultMode}):
 * - `ok`: the current card with `ETag` (quoted sha256 prefix of the body) and the endpoint's
 *   caching headers; 304 to a matching `If-None-Match`.
 * - `status`: any status code with a small body (404, 503, ...).
 * - `unauthorized`: 401 unless the configured header carries the configured value, then `ok`.
 * - `hang`: never answers. `drip`: headers, then one body byte every `intervalMs`.
 * - `big`: `bytes` bytes, with or without `content-length`. `gzip`: a small gzip body that
 *   inflates to `decompressedBytes`, with `content-encoding: gzip`.
 * - `truncated`: `content-length` larger than what is sent, then the socket is destroyed.
 * - `malformed`: invalid JSON. `redirect`: 302 (or `status`) to `location`.
 * - `etag-churn`: same body, a new ETag on every response. `etag-stuck`: 304 to any
 *   `If-None-Match`, even after the card changed.
 *
 * Per-endpoint options (see {@link EndpointOptions}): `cacheControl` (default: no header),
 * `age`, `date` override (null omits the header), `lastModified`, `latencyMs` before answering,
 * extra `headers`. They apply to every response of the endpoint.
 *
 * Built for volume: bodies and ETags are precomputed on `setCard`, lookups are one `Map.get`,
 * keep-alive is on, so 1,000 endpoints and tens of thousands of requests are cheap.
 *
 * @example
 * const fs = await startFaultServer();
 * const ep = fs.endpoint('billing', { card: { name: 'Billing' }, cacheControl: 'max-age=300' });
 * await fetch(ep.cardUrl);           // 200, ETag, Cache-Control
 * ep.set({ mode: 'status', status: 503 });
 * ep.setCard({ name: 'Billing v2' });
 * ep.hits; ep.requests[0].headers;
 * await fs.close();
 */
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';

/** The behaviour of an endpoint. */
export type FaultMode =
  | { mode: 'ok' }
  | { mode: 'status'; status: number; body?: string }
  | { mode: 'unauthorized'; value: string; header?: string }
  | { mode: 'hang' }
  | { mode: 'drip'; intervalMs?: number }
  | { mode: 'big'; bytes: number; contentLength?: boolean }
  | { mode: 'gzip'; decompressedBytes?: number }
  | { mode: 'truncated'; missingBytes?: number }
  | { mode: 'malformed'; body?: string }
  | { mode: 'redirect'; location: string; status?: number }
  | { mode: 'etag-churn' }
  | { mode: 'etag-stuck' };

/** Per-endpoint response options, applied to every response of the endpoint. */
export interface EndpointOptions {
  /** The card: an object (serialised with JSON.stringify) or the exact body text. */
  card?: unknown;
  /** `Cache-Control` value; undefined or null sends none. */
  cacheControl?: string | null;
  /** `Age` header (seconds); null removes it. */
  age?: number | string | null;
  /** `Date` header override; null omits Date entirely; undefined lets Node set the real date. */
  date?: string | null;
  /** `Last-Modified` header; null removes it. */
  lastModified?: string | null;
  /** Delay before answering, in ms. */
  latencyMs?: number;
  /** Extra response headers. */
  headers?: Record<string, string>;
}

/** What {@link FaultEndpoint.set} accepts: options, a mode, or both. */
export type FaultChange = EndpointOptions | (FaultMode & EndpointOptions);

/** One recorded request. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** performance.now() when it arrived. */
  at: number;
}

export interface FaultEndpoint {
  readonly id: string;
  /** `<origin>/<id>/` */
  readonly baseUrl: string;
  /** `<origin>/<id>/.well-known/agent-card.json` */
  readonly cardUrl: string;
  /** Requests received under `/<id>/` since creation or the last reset(). */
  readonly hits: number;
  /** The most recent requests (up to maxRecordedRequests). */
  readonly requests: readonly RecordedRequest[];
  /** The current mode. */
  readonly mode: FaultMode;
  /** The current card body and its ETag (quoted). */
  readonly body: Buffer;
  readonly etag: string;
  /** Changes the mode and/or options. */
  set(change: FaultChange): FaultEndpoint;
  /** Replaces the card (object or exact body text); the ETag follows the body. */
  setCard(card: unknown): FaultEndpoint;
  /** Clears hits and recorded requests. */
  reset(): FaultEndpoint;
}

export interface FaultServerOptions {
  /** Serve HTTPS with this key and certificate (see `tls.ts`). */
  tls?: { key: string; cert: string };
  /** Host name used in the URLs handed out; the server still listens on 127.0.0.1 only. */
  hostname?: string;
  /** Requests kept per endpoint in `requests` (oldest dropped first; 0 records none, for benchmarks). Default 1000. */
  maxRecordedRequests?: number;
}

export interface FaultServer {
  /** `http://127.0.0.1:<port>` (or with the configured hostname / https). */
  readonly origin: string;
  readonly port: number;
  /** Creates an endpoint, or returns the existing one with the options applied. */
  endpoint(id: string, options?: FaultChange): FaultEndpoint;
  get(id: string): FaultEndpoint | undefined;
  /** All requests received, including paths that match no endpoint. */
  readonly hits: number;
  /** TCP connections accepted. */
  readonly connections: number;
  /** Destroys every connection, clears every timer and stops listening. */
  close(): Promise<void>;
}

const CARD_PATHS = new Set(['.well-known/agent-card.json', '.well-known/agent.json']);
const PAD_CHUNK = Buffer.alloc(64 * 1024, 'a');
const gzipCache = new Map<number, Buffer>();

function gzipBomb(decompressedBytes: number): Buffer {
  let body = gzipCache.get(decompressedBytes);
  if (body === undefined) {
    const inner = Buffer.alloc(Math.max(decompressedBytes, 12), ' ');
    inner.write('{"pad":"', 0);
    inner.write('"}', inner.length - 2);
    body = gzipSync(inner, { level: 9 });
    gzipCache.set(decompressedBytes, body);
  }
  return body;
}

function etagOf(body: Buffer): string {
  return `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
}

function defaultCard(id: string, baseUrl: string): Record<string, unknown> {
  return {
    name: id,
    description: `Test agent ${id}`,
    url: baseUrl,
    version: '1.0.0',
    capabilities: {},
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: `${id}-skill`, name: `${id} skill`, description: 'test skill', tags: ['test'] }],
  };
}

/** True when an If-None-Match header matches the ETag (weak comparison, `*` included). */
function inmMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const bare = etag.replace(/^W\//, '');
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*' || tag.replace(/^W\//, '') === bare) return true;
  }
  return false;
}

class Endpoint implements FaultEndpoint {
  readonly id: string;
  readonly baseUrl: string;
  readonly cardUrl: string;
  hits = 0;
  requests: RecordedRequest[] = [];
  mode: FaultMode = { mode: 'ok' };
  body: Buffer = Buffer.alloc(0);
  etag = '""';
  options: EndpointOptions = {};
  churn = 0;
  readonly #maxRecorded: number;

  constructor(id: string, origin: string, maxRecorded: number) {
    this.id = id;
    this.baseUrl = `${origin}/${encodeURIComponent(id)}/`;
    this.cardUrl = `${this.baseUrl}.well-known/agent-card.json`;
    this.#maxRecorded = maxRecorded;
    this.setCard(defaultCard(id, this.baseUrl));
  }

  set(change: FaultChange): this {
    const { card, ...rest } = change as FaultChange & { mode?: FaultMode['mode'] };
    if (card !== undefined) this.setCard(card);
    if ('mode' in rest && rest.mode !== undefined) {
      const { cacheControl, age, date, lastModified, latencyMs, headers, ...mode } = rest as FaultMode & EndpointOptions;
      this.mode = mode as FaultMode;
      this.#applyOptions({ cacheControl, age, date, lastModified, latencyMs, headers });
    } else {
      this.#applyOptions(rest as EndpointOptions);
    }
    return this;
  }

  #applyOptions(opts: EndpointOptions): void {
    for (const [k, v] of Object.entries(opts)) {
      if (v !== undefined) (this.options as Record<string, unknown>)[k] = v;
    }
  }

  setCard(card: unknown): this {
    this.body = Buffer.from(typeof card === 'string' ? card : JSON.stringify(card));
    this.etag = etagOf(this.body);
    return this;
  }

  reset(): this {
    this.hits = 0;
    this.requests = [];
    return this;
  }

  record(req: http.IncomingMessage): void {
    this.hits++;
    if (this.#maxRecorded <= 0) return;
    if (this.requests.length >= this.#maxRecorded) this.requests.shift();
    this.requests.push({ method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, at: performance.now() });
  }

  /** Headers every response of this endpoint carries. */
  commonHeaders(res: http.ServerResponse): void {
    const o = this.options;
    if (o.cacheControl != null) res.setHeader('cache-control', o.cacheControl);
    if (o.age != null) res.setHeader('age', String(o.age));
    if (o.lastModified != null) res.setHeader('last-modified', o.lastModified);
    if (o.date === null) res.sendDate = false;
    else if (o.date !== undefined) res.setHeader('date', o.date);
    if (o.headers !== undefined) for (const [k, v] of Object.entries(o.headers)) res.setHeader(k, v);
  }
}

/**
 * Starts a fault server on 127.0.0.1, port 0. Close it with `close()` (in `after`/`t.after`).
 * @example const fs = await startFaultServer(); t.after(() => fs.close());
 */
export async function startFaultServer(options: FaultServerOptions = {}): Promise<FaultServer> {
  const endpoints = new Map<string, Endpoint>();
  const timers = new Set<NodeJS.Timeout>();
  const maxRecorded = options.maxRecordedRequests ?? 1000;
  let totalHits = 0;
  let connections = 0;
  let closing = false;

  const later = (ms: number, fn: () => void): void => {
    const t = setTimeout(() => {
      timers.delete(t);
      if (!closing) fn();
    }, ms);
    timers.add(t);
  };

  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    totalHits++;
    const url = req.url ?? '/';
    const slash = url.indexOf('/', 1);
    const id = slash > 1 ? decodeURIComponent(url.slice(1, slash)) : '';
    const ep = endpoints.get(id);
    if (ep === undefined) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"no such endpoint"}');
      return;
    }
    ep.record(req);
    const q = url.indexOf('?', slash);
    const rest = url.slice(slash + 1, q === -1 ? undefined : q);
    const latency = ep.options.latencyMs ?? 0;
    if (latency > 0) later(latency, () => respond(ep, rest, req, res));
    else respond(ep, rest, req, res);
  };

  const respond = (ep: Endpoint, rest: string, req: http.IncomingMessage, res: http.ServerResponse): void => {
    if (res.destroyed) return;
    ep.commonHeaders(res);
    const mode = ep.mode;
    if (mode.mode === 'redirect') {
      res.writeHead(mode.status ?? 302, { location: mode.location, 'content-type': 'text/plain' }).end('redirect');
      return;
    }
    if (!CARD_PATHS.has(rest)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
      return;
    }
    switch (mode.mode) {
      case 'ok':
        return serveCard(ep, req, res, ep.etag);
      case 'status':
        res.writeHead(mode.status, { 'content-type': 'application/json' }).end(mode.body ?? JSON.stringify({ error: mode.status }));
        return;
      case 'unauthorized': {
        const got = req.headers[(mode.header ?? 'authorization').toLowerCase()];
        if (got === mode.value) return serveCard(ep, req, res, ep.etag);
        res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
        return;
      }
      case 'hang':
        return; // never answer; close() destroys the socket
      case 'drip': {
        res.writeHead(200, { 'content-type': 'application/json', etag: ep.etag });
        res.flushHeaders();
        const body = ep.body;
        const interval = mode.intervalMs ?? 100;
        let i = 0;
        const step = (): void => {
          if (res.destroyed) return;
          if (i >= body.length) {
            res.end();
            return;
          }
          res.write(body.subarray(i, ++i));
          later(interval, step);
        };
        later(interval, step);
        return;
      }
      case 'big': {
        const total = mode.bytes;
        const headers: http.OutgoingHttpHeaders = { 'content-type': 'application/json' };
        if (mode.contentLength !== false) headers['content-length'] = String(total);
        res.writeHead(200, headers);
        let sent = 0;
        const pump = (): void => {
          while (sent < total && !res.destroyed) {
            const n = Math.min(PAD_CHUNK.length, total - sent);
            sent += n;
            if (!res.write(n === PAD_CHUNK.length ? PAD_CHUNK : PAD_CHUNK.subarray(0, n))) {
              res.once('drain', pump);
              return;
            }
          }
          if (!res.destroyed) res.end();
        };
        pump();
        return;
      }
      case 'gzip': {
        const body = gzipBomb(mode.decompressedBytes ?? 10 * 1024 * 1024);
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(body.length) }).end(body);
        return;
      }
      case 'truncated': {
        const body = ep.body;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length + (mode.missingBytes ?? 100)) });
        res.write(body, () => req.socket.destroy());
        return;
      }
      case 'malformed':
        res.writeHead(200, { 'content-type': 'application/json', etag: ep.etag }).end(mode.body ?? '{"name": "broken", "skills": [');
        return;
      case 'etag-churn':
        return serveCard(ep, req, res, `"${ep.etag.slice(1, -1)}-${++ep.churn}"`);
      case 'etag-stuck': {
        const inm = req.headers['if-none-match'];
        if (inm !== undefined) {
          res.writeHead(304, { etag: inm.split(',')[0]?.trim() ?? ep.etag }).end();
          return;
        }
        return serveCard(ep, req, res, ep.etag);
      }
    }
  };

  const serveCard = (ep: Endpoint, req: http.IncomingMessage, res: http.ServerResponse, etag: string): void => {
    if (inmMatches(req.headers['if-none-match'], etag)) {
      res.writeHead(304, { etag }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(ep.body.length), etag }).end(ep.body);
  };

  const server: http.Server = options.tls !== undefined ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler) : http.createServer(handler);
  server.keepAliveTimeout = 10_000;
  server.on('connection', (_socket: Socket) => {
    connections++;
  });
  // A client that resets mid-response is part of the game; never let it crash the test process.
  server.on('clientError', (_err, socket: Socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `${options.tls !== undefined ? 'https' : 'http'}://${options.hostname ?? '127.0.0.1'}:${port}`;

  return {
    origin,
    port,
    endpoint(id, change) {
      if (id === '' || id.includes('/')) throw new Error(`fault server: endpoint id ${JSON.stringify(id)} must be a non-empty path segment`);
      let ep = endpoints.get(id);
      if (ep === undefined) {
        ep = new Endpoint(id, origin, maxRecorded);
        endpoints.set(id, ep);
      }
      if (change !== undefined) ep.set(change);
      return ep;
    },
    get: (id) => endpoints.get(id),
    get hits() {
      return totalHits;
    },
    get connections() {
      return connections;
    },
    async close() {
      if (closing) return;
      closing = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
