/** A loopback HTTP server answering JSON routes by path (query included), recording every request. */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';

export type JsonRoute = { status?: number; body: string | object; headers?: Record<string, string> };

export interface JsonServer {
  port: number;
  origin: string;
  /** Path (with query) → route; an unknown path answers 404. A route may be a function of the request. */
  routes: Map<string, JsonRoute | ((req: http.IncomingMessage) => JsonRoute)>;
  requests: Array<{ path: string; headers: http.IncomingHttpHeaders }>;
  /** Requests per path. */
  count(path: string): number;
  close(): Promise<void>;
}

/** `tls`: serve HTTPS with this key and certificate (see `tls.ts`) under `hostname` (default 127.0.0.1). */
export async function startJsonServer(options: { tls?: { key: string; cert: string }; hostname?: string } = {}): Promise<JsonServer> {
  const routes: JsonServer['routes'] = new Map();
  const requests: JsonServer['requests'] = [];
  const sockets = new Set<Socket>();
  const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
    requests.push({ path: req.url ?? '', headers: req.headers });
    const found = routes.get(req.url ?? '');
    const route = typeof found === 'function' ? found(req) : found;
    if (route === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such page');
      return;
    }
    const text = typeof route.body === 'string' ? route.body : JSON.stringify(route.body);
    res.writeHead(route.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...route.headers });
    res.end(route.status === 304 ? undefined : text);
  };
  const server = options.tls !== undefined ? https.createServer({ key: options.tls.key, cert: options.tls.cert }, handler) : http.createServer(handler);
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `${options.tls !== undefined ? 'https' : 'http'}://${options.hostname ?? '127.0.0.1'}:${port}`,
    routes,
    requests,
    count: (path) => requests.filter((r) => r.path === path).length,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
