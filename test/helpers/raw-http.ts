/**
 * Raw HTTP for tests of the service's checks: one request over a fresh connection with exactly
 * the headers given (a Host header included when given, which fetch cannot send), and a reader
 * of one Prometheus sample.
 */
import http from 'node:http';

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** One request over a fresh connection, with exactly the headers given (Host included). */
export function request(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Reply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers: { connection: 'close', ...headers }, agent: false, setHost: !('host' in headers) }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The value of one sample of `/metrics` (`labels` as written inside the braces; '' for none); 0 when absent. */
export async function metric(base: string, name: string, labels = ''): Promise<number> {
  const text = (await request(base, 'GET', '/metrics')).body;
  const line = text.split('\n').find((l) => l.startsWith(labels === '' ? `${name} ` : `${name}{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

/** A reply with its body parsed as JSON (`{}` when it is not JSON). */
export interface JsonReply extends Reply {
  json: Record<string, unknown>;
}

/**
 * One request over a fresh connection, its body read as JSON: from the local address `from`
 * (127.0.0.2 …: another client to the service), `onRequest` given the request (to cut it). A body
 * is framed with its Content-Length (Node's client sends a DELETE body unframed, which the server's
 * parser reads as a malformed next request: 400); an event stream is read up to its headers.
 */
export function requestJson(base: string, method: string, path: string, headers: Record<string, string> = {}, body?: string, options: { from?: string; onRequest?: (req: http.ClientRequest) => void } = {}): Promise<JsonReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const framing = body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {};
    const req = http.request({ host: url.hostname, port: url.port, ...(options.from !== undefined && { localAddress: options.from }), method, path, headers: { connection: 'close', ...framing, ...headers }, agent: false }, (res) => {
      if (String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: '', json: {} });
        return;
      }
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let json: Record<string, unknown> = {};
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    options.onRequest?.(req);
    req.end(body);
  });
}
