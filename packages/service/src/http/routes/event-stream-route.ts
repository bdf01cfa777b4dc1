/**
 * `GET /api/stream`: discovery events as Server-Sent Events, written straight to the Node response
 * so that backpressure is visible. Every stream is bounded:
 *
 * - at most `maxStreams` open streams, shared fairly by clients (fair-pool.ts: a newcomer under
 *   its share takes the oldest stream of a client holding more than its share, which is told
 *   `event: dropped` with reason `fair-share`), and `maxStreamsPerClient` per client (503 beyond);
 *   the client is the app's fair-share key (client-identity.ts: person, token, or network);
 * - at most `streamQueueEvents` events waiting for a slow reader; past that the reader is sent an
 *   `event: dropped` notice and disconnected (it may reconnect with `Last-Event-ID`);
 * - a replay after `Last-Event-ID` sends at most `maxReplayEvents`, announcing older missed events
 *   with `event: gap`, and is written at the reader's pace (it waits for the socket to drain);
 * - sequence numbers are a process's own: a reader that names the replica its `Last-Event-ID`
 *   came from (`?replica=`) and reaches another process (a restart, another replica behind a load
 *   balancer) is not replayed a foreign position; it gets `hello` with `resumedFrom`, so it knows
 *   to read its lists again;
 * - one shutdown listener for all streams, not one per stream;
 * - draining (SIGTERM, docs/operations.md "Graceful drain"): every stream gets a `retry:` hint and
 *   `event: draining`, then ends, so its reader reconnects (through the load balancer, to another
 *   replica) with its `Last-Event-ID`; a new stream is refused with 503 and `Retry-After`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { DiscoveryEvent } from 'a2a-discovery';
import type { EventBuffer } from '../event-buffer.js';
import type { OnRefusal, ServerLimits } from '../limits.js';
import { actorOf } from '../../auth/request-guard.js';
import { FairPool } from '../fair-pool.js';
import { problem } from '../problem.js';

/** Inputs of {@link EventStreamHub}. */
export interface EventStreamHubOptions {
  buffer: EventBuffer;
  limits: Pick<ServerLimits, 'maxStreams' | 'maxStreamsPerClient' | 'streamQueueEvents' | 'streamStallMs' | 'maxReplayEvents'>;
  /** The current snapshot's version, for the `hello` event (0 before the first). */
  version: () => number;
  /** This process's replica id (the store's), for `hello` and to recognise a reader's `?replica=`. */
  replica?: string;
  onRefusal?: OnRefusal;
  /** Ping interval. Default 15 s. */
  pingMs?: number;
}

const PACE = 64;

/** The reconnection delay told to readers when the service drains (the SSE `retry:` field), ms. */
const DRAIN_RECONNECT_MS = 1_000;

/** The open streams and their limits. */
export class EventStreamHub {
  readonly #o: EventStreamHubOptions;
  readonly #streams = new Set<Stream>();
  /** Stream slots, shared fairly; a stream lasts until its reader leaves, so a newcomer preempts rather than waits. */
  readonly #pool: FairPool;
  #draining = false;

  constructor(options: EventStreamHubOptions) {
    this.#o = options;
    this.#pool = new FairPool(() => ({ capacity: options.limits.maxStreams, perClient: options.limits.maxStreamsPerClient, queueLength: 0, waitMs: 0 }));
  }

  /** Streams open now. */
  get size(): number {
    return this.#streams.size;
  }

  /** Handles one request (Hono on `@hono/node-server`) of `client` (the app's fair-share key; default the remote address). */
  handle(c: Context, client?: string): Response {
    const env = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
    const res = env?.outgoing;
    if (res === undefined) return problem(c, 501, 'unsupported', 'the event stream needs the Node HTTP server');
    client ??= `addr:${env?.incoming?.socket.remoteAddress ?? 'unknown'}`;
    const { limits } = this.#o;
    const refuse = (reason: 'streams' | 'streams_per_client' | 'draining', message: string): Response => {
      this.#o.onRefusal?.(reason);
      c.header('Retry-After', reason === 'draining' ? String(DRAIN_RECONNECT_MS / 1000) : '5');
      return problem(c, 503, reason === 'draining' ? 'draining' : 'too-many-streams', message);
    };
    if (this.#draining) return refuse('draining', 'the service is shutting down; reconnect (another replica will answer)');
    // Made first (it writes nothing yet), so a preemption can end it.
    const stream = new Stream(res, limits.streamQueueEvents, limits.streamStallMs, (reason) => this.#o.onRefusal?.(reason));
    const slot = this.#pool.admit(client, () => {
      this.#o.onRefusal?.('streams_fair_share');
      stream.end(`event: dropped\ndata: ${JSON.stringify({ reason: 'fair-share', message: 'another client needed an event stream and this client holds more than its share (server.limits.maxStreams); reconnect later with Last-Event-ID' })}\n\n`);
      // A reader that reads nothing never lets the notice through: free the socket anyway.
      setTimeout(() => res.destroy(), 1_000).unref();
    });
    if (!slot.ok) {
      return slot.reason === 'per_client'
        ? refuse('streams_per_client', `this client has ${limits.maxStreamsPerClient} event streams open (server.limits.maxStreamsPerClient)`)
        : refuse('streams', `the service has ${limits.maxStreams} event streams open and this client holds its share of them (server.limits.maxStreams)`);
    }

    const header = c.req.header('last-event-id') ?? c.req.query('lastEventId');
    // A position is only meaningful in the process that numbered it.
    const from = c.req.query('replica');
    const foreign = from !== undefined && from !== '' && this.#o.replica !== undefined && from !== this.#o.replica;
    const last = header === undefined || header.trim() === '' || foreign ? NaN : Number(header);
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    // Send the headers now: a resume with nothing to replay writes no frame until the next event,
    // and the client only knows it is live once it has the response.
    res.flushHeaders();
    this.#streams.add(stream);
    const off = this.#o.buffer.listen((e) => {
      if (!(Number.isFinite(last) && e.seq <= last)) stream.push(frame(e));
    });
    const ping = setInterval(() => stream.push('event: ping\ndata: {}\n\n'), this.#o.pingMs ?? 15_000);
    ping.unref();
    // A stream opened with a person's token lasts no longer than the token: it ends at `exp`
    // (the client reconnects and is asked for a fresh token), so an expired token keeps no live feed.
    const actor = actorOf(c);
    const expiresAt = actor.kind === 'person' ? actor.person.expiresAt : undefined;
    const expiry =
      expiresAt === undefined
        ? undefined
        : setTimeout(() => {
            stream.end(`event: expired\ndata: ${JSON.stringify({ message: 'the token this stream was opened with has expired; reconnect with a fresh one' })}\n\n`);
          }, Math.min(2 ** 31 - 1, Math.max(0, expiresAt - Date.now())));
    expiry?.unref();
    res.once('close', () => {
      off();
      clearInterval(ping);
      if (expiry !== undefined) clearTimeout(expiry);
      this.#streams.delete(stream);
      slot.release();
    });

    // Resume: what is still buffered after Last-Event-ID, at most maxReplayEvents of it.
    if (Number.isFinite(last)) {
      const missed = this.#o.buffer.since(last);
      const replay = missed.slice(-Math.min(limits.maxReplayEvents, limits.streamQueueEvents));
      const firstSent = replay[0]?.seq ?? this.#o.buffer.oldestSeq;
      if (replay.length < missed.length) this.#o.onRefusal?.('replay_events');
      const gap = last < firstSent - 1 ? [`event: gap\ndata: ${JSON.stringify({ from: last, oldest: firstSent })}\n\n`] : [];
      // The listener was added in this same synchronous turn, so nothing is queued yet.
      stream.prime([...gap, ...replay.map(frame)]);
    } else {
      const hello = { version: this.#o.version(), lastSeq: this.#o.buffer.newestSeq, ...(this.#o.replica !== undefined && { replica: this.#o.replica }), ...(foreign && { resumedFrom: from }) };
      stream.push(`event: hello\ndata: ${JSON.stringify(hello)}\n\n`);
    }
    return RESPONSE_ALREADY_SENT;
  }

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const s of this.#streams) s.end();
  }

  /** Draining: tells every reader to reconnect elsewhere (a `retry:` hint and `event: draining`), ends its stream, and refuses new ones. */
  drain(): number {
    this.#draining = true;
    const told = this.#streams.size;
    const notice = `retry: ${DRAIN_RECONNECT_MS}\nevent: draining\ndata: ${JSON.stringify({ retryMs: DRAIN_RECONNECT_MS, message: 'the service is shutting down; reconnect with Last-Event-ID (another replica will answer)' })}\n\n`;
    for (const s of this.#streams) s.end(notice);
    return told;
  }
}

function frame(e: DiscoveryEvent): string {
  return `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
}

/** One response: a bounded queue of frames, written as fast as the reader drains them. */
class Stream {
  readonly #res: ServerResponse;
  readonly #limit: number;
  readonly #stallMs: number;
  readonly #onDrop: (reason: 'stream_queue' | 'stream_stall') => void;
  #queue: string[] = [];
  #pumping = false;
  #done = false;

  constructor(res: ServerResponse, limit: number, stallMs: number, onDrop: (reason: 'stream_queue' | 'stream_stall') => void) {
    this.#res = res;
    this.#limit = limit;
    this.#stallMs = stallMs;
    this.#onDrop = onDrop;
    res.once('close', () => (this.#done = true));
  }

  push(f: string): void {
    if (this.#done) return;
    if (this.#queue.length >= this.#limit) return this.#drop('stream_queue', 'the reader fell too far behind (server.limits.streamQueueEvents)');
    this.#queue.push(f);
    void this.#pump();
  }

  /** The first frames of a stream (a replay), whatever the queue limit. */
  prime(frames: string[]): void {
    this.#queue.push(...frames);
    void this.#pump();
  }

  /** Ends the response, after `last` when given (a final notice). */
  end(last?: string): void {
    if (this.#done) return;
    this.#done = true;
    this.#res.end(last);
  }

  #drop(kind: 'stream_queue' | 'stream_stall', why: string): void {
    if (this.#done) return;
    this.#done = true;
    this.#queue = [];
    this.#onDrop(kind);
    this.#res.end(`event: dropped\ndata: ${JSON.stringify({ reason: `${why}; reconnect with Last-Event-ID` })}\n\n`);
    // A reader that reads nothing never lets the notice through: free the socket anyway.
    setTimeout(() => this.#res.destroy(), 1_000).unref();
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      let written = 0;
      while (!this.#done && this.#queue.length > 0) {
        const ok = this.#res.write(this.#queue.shift()!);
        if (!ok) {
          // The socket's buffers are full. A reader that drains nothing for streamStallMs is
          // dropped: the kernel would otherwise hold megabytes for it before the queue counts.
          await new Promise<void>((resolve) => {
            const done = () => {
              clearTimeout(stall);
              this.#res.off('drain', done);
              this.#res.off('close', done);
              resolve();
            };
            const stall = setTimeout(() => {
              this.#drop('stream_stall', `the reader read nothing for ${this.#stallMs} ms (server.limits.streamStallMs)`);
              done();
            }, this.#stallMs);
            stall.unref();
            this.#res.on('drain', done);
            this.#res.on('close', done);
          });
        } else if (++written % PACE === 0) {
          // Paced: a long replay yields to other work between batches.
          await new Promise((r) => setImmediate(r));
        }
      }
    } finally {
      this.#pumping = false;
    }
  }
}
