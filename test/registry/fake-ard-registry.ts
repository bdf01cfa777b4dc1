/**
 * A fake ARD registry on loopback, for the federation and ARD source tests: it speaks the wire
 * shapes of packages/core/src/ard/wire.ts (`POST /search`, `GET /agents` paged by `pageToken`,
 * the change feed `GET /agents?updated_since=<cursor|ISO time>` with `status: "deleted"`
 * tombstones and a `cursor` on the last page, 410 `cursor_expired`) over an in-memory entry set,
 * and records every request. It is not our registry (R1 builds that): a stand-in named as such.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ArdSearchResult } from '../../packages/core/src/ard/wire.js';

export interface FakeRequest {
  method: string;
  /** Path with query. */
  path: string;
  body: string;
}

/** A custom answer: status and JSON body, a redirect, or `hang` (no answer until the server closes). */
export type FakeAnswer = { status?: number; body: unknown; headers?: Record<string, string> } | 'hang';

export interface FakeArdRegistry {
  /** The API base (`http://127.0.0.1:<port>`). */
  readonly url: string;
  readonly requests: FakeRequest[];
  /** Replaces the built-in routes for every request. */
  answer?: (req: FakeRequest) => FakeAnswer;
  /** Adds or changes an entry (a change in the feed). */
  put(entry: ArdSearchResult): void;
  /** Removes an entry (a tombstone in the feed). */
  remove(identifier: string): void;
  /** Whether `GET /agents` honours `updated_since` (default true); false: it ignores it, as a registry without the feed would. */
  feed: boolean;
  /** Changes older than this sequence number are forgotten: a cursor before it answers 410. */
  forgetBefore: number;
  /** Whether the plain list's last page carries the feed's `cursor` too (default false). */
  listCursor: boolean;
  close(): Promise<void>;
}

interface Change {
  seq: number;
  at: number;
  entry: ArdSearchResult;
}

/** Starts the fake with `entries`, dated a minute ago (older than any cursor its `Date` header gives). */
export async function startFakeArdRegistry(entries: readonly ArdSearchResult[] = []): Promise<FakeArdRegistry> {
  const current = new Map<string, ArdSearchResult>();
  const log: Change[] = [];
  let seq = 0;
  const record = (entry: ArdSearchResult, at: number) => {
    log.push({ seq: ++seq, at, entry });
  };
  const old = Date.now() - 60_000;
  for (const e of entries) {
    current.set(e.identifier, e);
    record(e, old);
  }
  const sockets = new Set<Socket>();
  const fake: FakeArdRegistry = {
    url: '',
    requests: [],
    feed: true,
    forgetBefore: 0,
    listCursor: false,
    put(entry) {
      current.set(entry.identifier, entry);
      record(entry, Date.now());
    },
    remove(identifier) {
      const was = current.get(identifier);
      current.delete(identifier);
      record({ identifier, displayName: was?.displayName ?? identifier, type: was?.type ?? 'application/a2a-agent-card+json', status: 'deleted', ...(was?.url !== undefined && { url: was.url }) }, Date.now());
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const page = <T>(items: readonly T[], params: URLSearchParams): { items: T[]; next?: string } => {
    const size = Math.min(Number(params.get('pageSize') ?? 10), 100);
    const start = Number(params.get('pageToken') ?? 0);
    const items2 = items.slice(start, start + size);
    return start + size < items.length ? { items: items2, next: String(start + size) } : { items: items2 };
  };
  const builtIn = (req: FakeRequest): FakeAnswer => {
    const url = new URL(req.path, 'http://fake');
    if (req.method === 'POST' && url.pathname === '/search') {
      const ask = JSON.parse(req.body) as { query?: { text?: string }; pageSize?: number; pageToken?: string };
      const text = (ask.query?.text ?? '').toLowerCase();
      const hits = [...current.values()].filter((e) => `${e.displayName} ${e.description ?? ''}`.toLowerCase().includes(text));
      const params = new URLSearchParams({ pageSize: String(ask.pageSize ?? 10), ...(ask.pageToken !== undefined && { pageToken: ask.pageToken }) });
      const { items, next } = page(hits, params);
      return { body: { results: items.map((e) => ({ ...e, score: 50 })), ...(next !== undefined && { pageToken: next }) } };
    }
    if (req.method === 'GET' && url.pathname === '/agents') {
      const since = url.searchParams.get('updated_since');
      if (since === null || !fake.feed) {
        const { items, next } = page([...current.values()].sort((a, b) => a.identifier.localeCompare(b.identifier)), url.searchParams);
        return { body: { items, ...(next !== undefined ? { pageToken: next } : fake.listCursor && { cursor: `c${seq}` }) } };
      }
      let changes: Change[];
      if (/^c\d+$/.test(since)) {
        const from = Number(since.slice(1));
        if (from < fake.forgetBefore) return { status: 410, body: { errorCode: 'CURSOR_EXPIRED', message: 'the cursor is older than the tombstones kept' } };
        changes = log.filter((c) => c.seq > from);
      } else {
        const at = Date.parse(since);
        if (!Number.isFinite(at)) return { status: 400, body: { errorCode: 'INVALID_ARGUMENT', message: 'updated_since' } };
        changes = log.filter((c) => c.at > at);
      }
      // One entry per identifier, its last change, in change order.
      const last = new Map<string, Change>();
      for (const c of changes) {
        last.delete(c.entry.identifier);
        last.set(c.entry.identifier, c);
      }
      const { items, next } = page([...last.values()], url.searchParams);
      return { body: { items: items.map((c) => c.entry), ...(next !== undefined ? { pageToken: next } : { cursor: `c${seq}` }) } };
    }
    return { status: 404, body: { errorCode: 'NOT_FOUND', message: req.path } };
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: FakeRequest = { method: req.method ?? 'GET', path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') };
      fake.requests.push(request);
      const answer = (fake.answer ?? builtIn)(request);
      if (answer === 'hang') return; // answered never: the socket is destroyed on close
      const text = JSON.stringify(answer.body);
      res.writeHead(answer.status ?? 200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...answer.headers }).end(text);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  (fake as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}

/** An ARD entry for an agent card at `url`. */
export function cardEntry(identifier: string, displayName: string, url: string, extra: Partial<ArdSearchResult> = {}): ArdSearchResult {
  return { identifier, displayName, type: 'application/a2a-agent-card+json', url, ...extra };
}
