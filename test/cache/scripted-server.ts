/**
 * A loopback HTTP server whose every answer comes from a script the test sets, for cache tests
 * that need answers the fault server does not give (a 304 with another ETag, per-path 404s).
 * Requests are recorded with their path and headers.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}
export type Script = (req: http.IncomingMessage, path: string) => Answer;

/** A loopback server whose every answer is decided by the current script. */
export async function startScriptedServer(): Promise<{
  origin: string;
  requests: Array<{ path: string; headers: http.IncomingHttpHeaders }>;
  script: (fn: Script) => void;
  close: () => Promise<void>;
}> {
  let current: Script = () => ({ status: 500 });
  const requests: Array<{ path: string; headers: http.IncomingHttpHeaders }> = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    requests.push({ path, headers: req.headers });
    const a = current(req, path);
    const body = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
    res.writeHead(a.status, { ...(a.status !== 304 && { 'content-type': 'application/json' }), ...a.headers });
    res.end(a.status === 304 ? undefined : body);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    requests,
    script: (fn) => {
      current = fn;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
