/**
 * The commands that read a running service (docs/cli.md): `a2a-discovery search <text>` (the
 * registry's search), `a2a-discovery events [--follow]` (the change feed) and
 * `a2a-discovery endpoints` (every endpoint's verdict and its cause, in the words of
 * docs/vocabulary.md), in the conventions of the field's tools (`dirctl search`,
 * `mcp-publisher`): text for people, `--json` (one object) or `-o jsonl` (one object per line)
 * as a contract for scripts.
 *
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { ENDPOINT_CAUSES, systemRandom } from 'a2a-discovery';
import type { EndpointCause, EndpointVerdict } from 'a2a-discovery';
import type { DiscoveryError } from 'a2a-discovery';
import { backoffDelay, createDeploymentFetch } from 'a2a-discovery/internal';
import { MAX_SEARCH_PAGES as MAX_PAGES, type Io } from './flags.js';
import { askService, authorization, refusal, serviceTarget, unreachable } from './service-client.js';
import type { ServiceTarget } from './service-client.js';

/** A stream connection's deadline for its headers, and for the silence between two frames (the service pings every 15 s). */
const STREAM_SILENCE_MS = 60_000;
/** Bytes one stream connection reads before it reconnects (the guarded fetch's cap). */
const STREAM_CONNECTION_BYTES = 64 * 1024 * 1024;
/** Reconnection backoff after a failed connection (rules/backoff.ts). */
const RECONNECT = { baseMs: 500, maxMs: 30_000, jitter: 0.5 };

export interface SearchFlags {
  url?: string;
  tokenFile?: string;
  tag: string[];
  limit?: number;
  all: boolean;
  json: boolean;
}

/** One result as the command prints it (the `--json` contract's `results[]`). */
interface Found {
  score: number | null;
  name: string;
  identifier: string;
  tags: string[];
  url: string | null;
}

export async function runSearch(text: string, flags: SearchFlags, io: Io): Promise<void> {
  const t = await serviceTarget(flags);
  const results: Found[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < (flags.all ? MAX_PAGES : 1); page++) {
    const body = {
      query: { text, ...(flags.tag.length > 0 && { filter: { tags: flags.tag } }) },
      federation: 'none',
      pageSize: flags.limit ?? 10,
      ...(pageToken !== undefined && { pageToken }),
    };
    const a = await askService(t, 'POST', '/api/registry/search', { body });
    if (a.status !== 200) throw refusal(a);
    const answer = a.body as { results?: Array<Record<string, unknown>>; pageToken?: string };
    for (const r of answer.results ?? []) {
      results.push({
        score: typeof r['score'] === 'number' ? r['score'] : null,
        name: String(r['displayName'] ?? r['identifier']),
        identifier: String(r['identifier']),
        tags: Array.isArray(r['tags']) ? (r['tags'] as unknown[]).map(String) : [],
        url: typeof r['url'] === 'string' ? r['url'] : null,
      });
    }
    pageToken = answer.pageToken;
    if (pageToken === undefined) break;
  }
  if (flags.json) {
    io.out(`${JSON.stringify({ query: text, service: t.url, results, more: pageToken !== undefined }, null, 2)}\n`);
    return;
  }
  if (results.length === 0) io.out(`no agent of ${t.url} matches ${JSON.stringify(text)}\n`);
  for (const r of results) {
    io.out(`${String(r.score ?? '-').padStart(3)}  ${r.name}  ${r.identifier}${r.tags.length > 0 ? `  [${r.tags.join(', ')}]` : ''}${r.url !== null ? `\n     ${r.url}` : ''}\n`);
  }
  if (pageToken !== undefined) io.out(flags.all ? `(more than ${MAX_PAGES} pages: narrow the search)\n` : '(more results: --all, or --limit)\n');
}

export interface EndpointsFlags {
  url?: string;
  tokenFile?: string;
  verdict: string[];
  json: boolean;
}

/** One endpoint as the command prints it (the `--json` contract's `endpoints[]`). */
interface EndpointLine {
  baseUrl: string;
  names: string[];
  verdict: EndpointVerdict;
  cause: EndpointCause | null;
  /** The cause in words (docs/vocabulary.md), or null without a cause. */
  causeWords: string | null;
  reason: string;
  since: string;
}

export async function runEndpoints(flags: EndpointsFlags, io: Io): Promise<void> {
  const t = await serviceTarget(flags);
  const a = await askService(t, 'GET', '/api/endpoints', { maxBytes: 64 * 1024 * 1024 });
  if (a.status !== 200) throw refusal(a);
  const all = ((a.body as { endpoints?: Array<{ baseUrl: string; names?: string[]; state: { verdict: EndpointVerdict; reason: string; cause?: EndpointCause; since: number } }> }).endpoints ?? []).map(
    (e): EndpointLine => ({
      baseUrl: e.baseUrl,
      names: e.names ?? [],
      verdict: e.state.verdict,
      cause: e.state.cause ?? null,
      // A cause a newer service names and this CLI does not know: its code is its words.
      causeWords: e.state.cause === undefined ? null : (Object.hasOwn(ENDPOINT_CAUSES, e.state.cause) ? ENDPOINT_CAUSES[e.state.cause].label : e.state.cause),
      reason: e.state.reason,
      since: new Date(e.state.since).toISOString(),
    }),
  );
  const shown = flags.verdict.length === 0 ? all : all.filter((e) => flags.verdict.includes(e.verdict));
  if (flags.json) {
    io.out(`${JSON.stringify({ service: t.url, endpoints: shown }, null, 2)}\n`);
    return;
  }
  if (shown.length === 0) {
    io.out(all.length === 0 ? `${t.url} knows no endpoint yet\n` : `no endpoint of ${t.url} has the verdict ${flags.verdict.join(' or ')}\n`);
    return;
  }
  const width = (k: (e: EndpointLine) => string, head: string): number => Math.max(head.length, ...shown.map((e) => k(e).length));
  const wv = width((e) => e.verdict, 'VERDICT');
  const wc = width((e) => e.causeWords ?? '', 'CAUSE');
  const we = width((e) => e.baseUrl, 'ENDPOINT');
  io.out(`${'VERDICT'.padEnd(wv)}  ${'CAUSE'.padEnd(wc)}  ${'ENDPOINT'.padEnd(we)}  REASON\n`);
  for (const e of shown) io.out(`${e.verdict.padEnd(wv)}  ${(e.causeWords ?? '').padEnd(wc)}  ${e.baseUrl.padEnd(we)}  ${e.reason}\n`);
}

export interface EventsFlags {
  url?: string;
  tokenFile?: string;
  follow: boolean;
  output: 'text' | 'jsonl';
  since?: number;
  types?: string;
  maxEvents?: number;
}

type Event = Record<string, unknown> & { seq: number; type: string };

/** One event as a line: `-o jsonl` the event itself with its `id`; text its sequence, time, type and what it is about. */
function line(e: Event, output: 'text' | 'jsonl'): string {
  if (output === 'jsonl') return `${JSON.stringify({ id: e.seq, ...e })}\n`;
  const at = typeof e['at'] === 'number' ? new Date(e['at']).toISOString() : '';
  const about = ['url', 'baseUrl', 'name', 'localName', 'source', 'digest', 'version', 'message', 'reason'].flatMap((k) => (e[k] !== undefined && typeof e[k] !== 'object' ? [`${k}=${String(e[k]).slice(0, 120)}`] : []));
  return `${String(e.seq).padStart(6)}  ${at}  ${e.type}${about.length > 0 ? `  ${about.join(' ')}` : ''}\n`;
}

async function runEvents(flags: EventsFlags, io: Io, signal?: AbortSignal): Promise<void> {
  const t = await serviceTarget(flags);
  const types = flags.types?.split(',').map((s) => s.trim()).filter((s) => s !== '');
  // Where the reader stands: --since, else the service's newest event when the first stream opened.
  let last: number | undefined = flags.since;
  let printed = 0;
  const show = (e: Event): boolean => {
    if (last !== undefined && e.seq <= last) return true; // already printed (a replay after a reconnection)
    last = e.seq;
    if (types !== undefined && !types.includes(e.type)) return true;
    io.out(line(e, flags.output));
    printed++;
    return flags.maxEvents === undefined || printed < flags.maxEvents;
  };
  if (!flags.follow) {
    const a = await askService(t, 'GET', `/api/events${flags.since !== undefined ? `?since=${flags.since}` : ''}`);
    if (a.status !== 200) throw refusal(a);
    for (const e of (a.body as { events?: Event[] }).events ?? []) if (!show(e)) break;
    return;
  }
  let failures = 0;
  const stopped = (): boolean => signal?.aborted === true;
  while (!stopped()) {
    const outcome = await followOnce(t, last, show, (lastSeq) => (last ??= lastSeq), io, signal);
    if (outcome.kind === 'done' || stopped()) return;
    if (outcome.kind === 'refused') throw outcome.error;
    failures = outcome.kind === 'failed' ? failures + 1 : 0;
    const wait = outcome.retryMs ?? (failures > 0 ? backoffDelay(failures, { ...RECONNECT, random: systemRandom }) : 0);
    io.err(`events: ${outcome.kind === 'failed' ? outcome.why : 'the stream ended'}; reconnecting in ${Math.round(wait)} ms from event ${last ?? 'the newest'}\n`);
    try {
      await sleep(wait, undefined, signal ? { signal } : undefined);
    } catch {
      return; // interrupted
    }
  }
}

type FollowOutcome =
  | { kind: 'done' }
  | { kind: 'refused'; error: DiscoveryError }
  | { kind: 'ended'; retryMs?: number }
  | { kind: 'failed'; why: string; retryMs?: number };

/** One connection to the SSE stream, from `lastId`: its events shown until it ends, fails, or `show` says stop. */
async function followOnce(t: ServiceTarget, lastId: number | undefined, show: (e: Event) => boolean, started: (lastSeq: number) => void, io: Io, signal?: AbortSignal): Promise<FollowOutcome> {
  const target = `${t.url}/api/stream`;
  const stream = createDeploymentFetch({ origin: new URL(target).origin, read: 'stream', timeoutMs: 10_000, bodyTimeoutMs: STREAM_SILENCE_MS, maxResponseBytes: STREAM_CONNECTION_BYTES, maxResponseName: 'one stream connection' });
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  signal?.addEventListener('abort', onAbort, { once: true });
  let retryMs: number | undefined;
  try {
    const res = await stream(target, { headers: { accept: 'text/event-stream', ...authorization(t), ...(lastId !== undefined && { 'last-event-id': String(lastId) }) }, signal: stop.signal });
    if (res.status === 401 || res.status === 403 || res.status === 404) {
      const text = await res.text();
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        // text
      }
      return { kind: 'refused', error: refusal({ status: res.status, body, url: target }) };
    }
    if (res.status !== 200 || res.body === null) {
      await res.body?.cancel();
      return { kind: 'failed', why: `${target} answered ${res.status}`, ...(res.headers.get('retry-after') !== null && { retryMs: Number(res.headers.get('retry-after')) * 1000 }) };
    }
    const decoder = new TextDecoder();
    let buffer = '';
    let data: string[] = [];
    let eventType = 'message';
    let id: string | undefined;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const raw = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (raw === '') {
          // A frame with an id is an event; the others tell the reader something (hello, ping, gap, draining, dropped, expired).
          if (id !== undefined && data.length > 0) {
            if (!show(JSON.parse(data.join('\n')) as Event)) {
              stop.abort();
              return { kind: 'done' };
            }
          } else if (eventType === 'hello') {
            const hello = JSON.parse(data.join('\n')) as { lastSeq?: number };
            if (typeof hello.lastSeq === 'number') started(hello.lastSeq);
          } else if (eventType === 'gap') io.err(`events: the service no longer holds every event after ${lastId ?? 0}: ${data.join(' ').slice(0, 200)}\n`);
          else if (eventType !== 'ping') io.err(`events: ${eventType}: ${data.join(' ').slice(0, 200)}\n`);
          data = [];
          eventType = 'message';
          id = undefined;
        } else if (raw.startsWith('id:')) id = raw.slice(3).trim();
        else if (raw.startsWith('data:')) data.push(raw.slice(5).replace(/^ /, ''));
        else if (raw.startsWith('event:')) eventType = raw.slice(6).trim();
        else if (raw.startsWith('retry:')) retryMs = Number(raw.slice(6).trim());
      }
    }
    return { kind: 'ended', ...(retryMs !== undefined && Number.isFinite(retryMs) && { retryMs }) };
  } catch (err) {
    if (signal?.aborted === true) return { kind: 'done' };
    return { kind: 'failed', why: unreachable(target, err).message, ...(retryMs !== undefined && { retryMs }) };
  } finally {
    signal?.removeEventListener('abort', onAbort);
    await stream.close();
  }
}

/** Runs `events` until it is done or SIGINT/SIGTERM stops it (exit 0). */
export async function runEventsCommand(flags: EventsFlags, io: Io): Promise<void> {
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await runEvents(flags, io, stop.signal);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
