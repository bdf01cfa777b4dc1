// @ts-check
/**
 * The dashboard's only way to the service: JSON calls and the event stream, each with the
 * bearer token the user pasted (kept in sessionStorage, for this tab only) when the API asks.
 */
import { readSse } from './sse.js';

const TOKEN_KEY = 'a2a-discovery.token';

/**
 * Where the service answers the ARD registry API (`POST {ARD_BASE}/search`, `POST
 * {ARD_BASE}/explore`, `GET {ARD_BASE}/agents`): under `/api/registry` (docs/registry-api.md). One
 * constant, so the Search view follows the base the service serves.
 */
export const ARD_BASE = '/api/registry';

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {any} body the service's `{ error, message }`, or the ARD error shape `{ errorCode, message }`
   */
  constructor(status, body) {
    const ard = body && typeof body === 'object' && typeof body.errorCode === 'string' ? { code: body.errorCode, message: body.message } : undefined;
    const message =
      body && typeof body === 'object' && typeof body.message === 'string' ? body.message : ard && typeof ard.message === 'string' ? ard.message : `HTTP ${status}`;
    super(message);
    this.status = status;
    this.body = body;
    /** The error's code (`bad-request`, `INVALID_ARGUMENT`, …) when the body names one. */
    this.code = ard && typeof ard.code === 'string' ? ard.code : body && typeof body === 'object' && typeof body.error === 'string' ? body.error : undefined;
  }
}

/** @returns {string} */
export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? '';
  } catch {
    return '';
  }
}

/** @param {string} token */
export function setToken(token) {
  try {
    if (token === '') sessionStorage.removeItem(TOKEN_KEY);
    else sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // storage disabled: the token lives as long as the page
  }
}

/** @type {Set<() => void>} */
const unauthorizedListeners = new Set();

/**
 * Called whenever the API answers 401 (no token, or a wrong one).
 * @param {() => void} listener
 * @returns {() => void}
 */
export function onUnauthorized(listener) {
  unauthorizedListeners.add(listener);
  return () => unauthorizedListeners.delete(listener);
}

/** @returns {Record<string, string>} */
function authHeaders() {
  const token = getToken();
  return token !== '' ? { authorization: `Bearer ${token}` } : {};
}

/**
 * @param {string} path
 * @param {{ method?: string, body?: unknown, signal?: AbortSignal }} [options]
 * @returns {Promise<any>}
 */
export async function api(path, options = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json', ...authHeaders() };
  // The service refuses state-changing calls without a JSON content type (a CSRF defence).
  if (options.body !== undefined || (options.method ?? 'GET') !== 'GET') headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method: options.method ?? 'GET',
    headers,
    cache: 'no-store',
    ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
    ...(options.signal && { signal: options.signal }),
  });
  /** @type {any} */
  let json;
  try {
    json = await res.json();
  } catch {
    json = undefined;
  }
  if (res.status === 401) for (const l of unauthorizedListeners) l();
  if (!res.ok) throw new ApiError(res.status, json);
  return json;
}

/**
 * Follows `/api/stream` (SSE) with fetch, reconnecting with backoff and resuming from the last
 * event seen (`Last-Event-ID`).
 *
 * @param {{
 *   lastEventId: () => number | undefined,
 *   replica?: () => string | undefined,
 *   onMessage: (event: string, data: string, id: string | undefined) => void,
 *   onState: (state: 'connecting' | 'live' | 'reconnecting' | 'unauthorized') => void,
 * }} o
 * @returns {() => void} stops the stream
 */
export function followStream(o) {
  let stopped = false;
  /** @type {AbortController | undefined} */
  let controller;
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer;
  let delay = 500;
  const run = async () => {
    while (!stopped) {
      controller = new AbortController();
      try {
        /** @type {Record<string, string>} */
        const headers = { accept: 'text/event-stream', ...authHeaders() };
        const last = o.lastEventId();
        if (last !== undefined) headers['last-event-id'] = String(last);
        // The process that numbered that position: another one (a restart, another replica)
        // answers with a fresh `hello` instead of replaying a position it never had.
        const replica = last !== undefined ? o.replica?.() : undefined;
        const url = replica ? `/api/stream?replica=${encodeURIComponent(replica)}` : '/api/stream';
        const res = await fetch(url, { headers, signal: controller.signal, cache: 'no-store' });
        if (res.status === 401) {
          o.onState('unauthorized');
          for (const l of unauthorizedListeners) l();
          return;
        }
        if (!res.ok || res.body === null) throw new Error(`HTTP ${res.status}`);
        o.onState('live');
        delay = 500;
        await readSse(res.body, (m) => o.onMessage(m.event, m.data, m.id));
      } catch {
        // network error or abort: reconnect below unless stopped
      }
      if (stopped) return;
      o.onState('reconnecting');
      await new Promise((resolve) => {
        timer = setTimeout(resolve, delay);
      });
      delay = Math.min(delay * 2, 10_000);
    }
  };
  o.onState('connecting');
  void run();
  return () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    controller?.abort();
  };
}
