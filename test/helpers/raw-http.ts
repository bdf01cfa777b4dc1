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
