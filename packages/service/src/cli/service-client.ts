/**
 * How a CLI command talks to a running service (`search`, `events`, `doctor`): where it is
 * (`--url`, else `A2A_DISCOVERY_URL`, else `http://127.0.0.1:7340`), the token it presents
 * (`--token-file`, else `A2A_DISCOVERY_TOKEN`; never taken as a value on the command line, never
 * printed), and one request through the guarded fetch of the operator's own deployment
 * (`createDeploymentFetch`: no redirects, its addresses judged, the answer bounded in time and bytes).
 *
 * @module
 */
import { DiscoveryError, isDiscoveryError } from 'a2a-discovery';
import { createDeploymentFetch, fileErrorReason, readSecretFile } from 'a2a-discovery/internal';

/** The service's default address (`server.port`'s default). */
const DEFAULT_SERVICE_URL = 'http://127.0.0.1:7340';

export interface ServiceTarget {
  /** The service's origin and base path, without a trailing slash. */
  readonly url: string;
  readonly token?: string;
}

/** The service a command asks, from its flags and the environment. */
export async function serviceTarget(flags: { url?: string; tokenFile?: string }, env: NodeJS.ProcessEnv = process.env): Promise<ServiceTarget> {
  const raw = flags.url ?? env['A2A_DISCOVERY_URL'] ?? DEFAULT_SERVICE_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DiscoveryError('ERR_USAGE', `--url ${JSON.stringify(raw)} is not an http(s) URL`, { stage: 'config' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new DiscoveryError('ERR_USAGE', `--url ${JSON.stringify(raw)} is not an http(s) URL`, { stage: 'config' });
  let token = env['A2A_DISCOVERY_TOKEN'];
  if (flags.tokenFile !== undefined) {
    try {
      // The one way a secret file is read: a regular file, at most 64 KiB, never its content in an error.
      token = (await readSecretFile(flags.tokenFile)).trim();
    } catch (err) {
      throw new DiscoveryError('ERR_USAGE', `cannot read --token-file ${flags.tokenFile}: ${fileErrorReason(err)}`, { stage: 'config' });
    }
  }
  return { url: url.href.replace(/\/+$/, ''), ...(token !== undefined && token !== '' && { token }) };
}

/** A service's JSON answer. */
export interface ServiceAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly url: string;
}

/** One request to the service, its JSON answer read under `maxBytes` within `timeoutMs`. */
export async function askService(t: ServiceTarget, method: 'GET' | 'POST', path: string, o: { body?: unknown; maxBytes?: number; timeoutMs?: number } = {}): Promise<ServiceAnswer> {
  const target = `${t.url}${path}`;
  const maxBytes = o.maxBytes ?? 8 * 1024 * 1024;
  const service = createDeploymentFetch({ origin: new URL(target).origin, timeoutMs: o.timeoutMs ?? 10_000, maxResponseBytes: maxBytes, maxResponseName: 'the answer cap' });
  try {
    const res = await service(target, {
      method,
      headers: { accept: 'application/json', ...authorization(t), ...(o.body !== undefined && { 'content-type': 'application/json' }) },
      ...(o.body !== undefined && { body: JSON.stringify(o.body) }),
    });
    const text = Buffer.from(await res.arrayBuffer()).toString('utf8');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: the text.
    }
    return { status: res.status, body, url: target };
  } catch (err) {
    throw unreachable(target, err);
  } finally {
    await service.close();
  }
}

/** The `Authorization` header of `t`, if it has a token. */
export function authorization(t: ServiceTarget): Record<string, string> {
  return t.token !== undefined ? { authorization: `Bearer ${t.token}` } : {};
}

/** The error of a request that got no answer: the URL and why. */
export function unreachable(target: string, err: unknown): DiscoveryError {
  if (isDiscoveryError(err) && err.code === 'ERR_BODY_TOO_LARGE') return new DiscoveryError('ERR_BODY_TOO_LARGE', `${target} answered more than the command reads: ${err.message}`, { url: target, cause: err });
  const cause = err instanceof Error ? ((err.cause as { code?: string } | undefined)?.code ?? err.message) : String(err);
  return new DiscoveryError('ERR_FETCH_NETWORK', `cannot reach ${target}: ${cause} (is the service running there? --url or A2A_DISCOVERY_URL names it)`, { url: target, cause: err });
}

/** An error answer in words: the service's own message, and what to do about 401 and 403. */
export function refusal(a: ServiceAnswer): DiscoveryError {
  const body = typeof a.body === 'object' && a.body !== null ? (a.body as Record<string, unknown>) : {};
  const said = String(body['message'] ?? body['detail'] ?? body['error'] ?? body['errorCode'] ?? (typeof a.body === 'string' ? a.body.slice(0, 200) : ''));
  const hint =
    a.status === 401
      ? ' (give a token: --token-file <file> or A2A_DISCOVERY_TOKEN)'
      : a.status === 403
        ? ` (this token's role is not enough${body['needed'] !== undefined ? `: ${String(body['needed'])} is needed` : ''})`
        : a.status === 404
          ? ' (is this an a2a-discovery service, with this route enabled?)'
          : '';
  return new DiscoveryError('ERR_FETCH_STATUS', `${a.url} answered ${a.status}: ${said}${hint}`, { url: a.url, status: a.status });
}
