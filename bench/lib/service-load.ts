/**
 * The chat load of the service benchmark: turns at a steady rate with bounded concurrency, on two
 * sides interleaved in the same run —
 *
 * - `service`: `POST /api/chat` on the service, in conversations of {@link TURNS_PER_SESSION}
 *   turns (each then ended with `DELETE /api/sessions/:id`, untimed); the routed root picks the
 *   warranty agent by its reviewed keywords (no model), which calls the A2A peer;
 * - `direct`: the same message sent straight to the same peer with @a2a-js/sdk 1.x's client (the
 *   client the service's `V1RemoteAgent` uses), the baseline.
 *
 * Every message carries a turn id (`T<n>`); the peer files its own time under it, so each turn's
 * time without the peer's is known. A turn fails when the answer is not a 200, carries an `error`,
 * or its reply does not echo the turn id (the peer was not reached): the load stops at the first.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { AgentCard, Role } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { ClientFactory, JsonRpcTransportFactory } from '@a2a-js/sdk/client';

export const TURNS_PER_SESSION = 4;

export type Side = 'service' | 'direct';

export interface Turn {
  side: Side;
  id: string;
  /** Start, ms since the window opened. */
  atMs: number;
  wallMs: number;
}

interface LoadOptions {
  serviceUrl: string;
  peerCard: Record<string, unknown>;
  /** Turns per second on each side. */
  rate: number;
  /** Turns in flight at most, per side; a tick that finds the side full is skipped (counted). */
  concurrency: number;
}

interface LoadResult {
  turns: Turn[];
  skipped: Record<Side, number>;
  sessionsEnded: number;
  /** The first failure, if any (the load stopped there). */
  failure?: string;
}

const QUESTIONS = ['Is serial {id} still under warranty?', 'What does the warranty on serial {id} cover?', 'Can I claim a repair under warranty for serial {id}?'];

interface Conversation {
  sessionId: string;
  secret?: string;
  turns: number;
}

export class ChatLoad {
  readonly #o: LoadOptions;
  readonly #http = new Agent({ connections: 64, keepAliveTimeout: 30_000 });
  #client: Promise<Client> | undefined;
  #n = 0;
  #idle: Conversation[] = [];
  #inFlight: Record<Side, number> = { service: 0, direct: 0 };
  #pending = new Set<Promise<void>>();
  #origin = 0;
  #record: Turn[] | undefined;
  readonly result: LoadResult = { turns: [], skipped: { service: 0, direct: 0 }, sessionsEnded: 0 };

  constructor(options: LoadOptions) {
    this.#o = options;
  }

  get failed(): boolean {
    return this.result.failure !== undefined;
  }

  /** Runs `turns` turns per side one after the other, unrecorded (connections, JIT, first tree build). */
  async warmUp(turns: number): Promise<void> {
    for (let i = 0; i < turns && !this.failed; i++) {
      await this.#turn('service');
      await this.#turn('direct');
    }
  }

  /** The steady load for `ms`: a service turn every 1/rate s, a direct one half a period later. */
  async run(ms: number, stop: () => boolean): Promise<void> {
    this.#record = this.result.turns;
    this.#origin = performance.now();
    const period = 1000 / this.#o.rate;
    for (let k = 0; !this.failed && !stop(); k++) {
      const due = this.#origin + k * period;
      if (due - this.#origin >= ms) break;
      await sleepUntil(due);
      this.#launch('service');
      await sleepUntil(due + period / 2);
      this.#launch('direct');
    }
    await Promise.all(this.#pending);
  }

  async close(): Promise<void> {
    await Promise.all(this.#pending);
    await this.#http.close();
  }

  #launch(side: Side): void {
    if (this.failed) return;
    if (this.#inFlight[side] >= this.#o.concurrency) {
      this.result.skipped[side]++;
      return;
    }
    const p = this.#turn(side).finally(() => this.#pending.delete(p));
    this.#pending.add(p);
  }

  async #turn(side: Side): Promise<void> {
    const id = `T${++this.#n}`;
    const message = QUESTIONS[this.#n % QUESTIONS.length]!.replace('{id}', id);
    this.#inFlight[side]++;
    const t0 = performance.now();
    try {
      const reply = side === 'service' ? await this.#viaService(message) : await this.#direct(message);
      const wallMs = performance.now() - t0;
      if (!reply.includes(id)) throw new Error(`the reply does not echo ${id} (the peer was not reached?): ${JSON.stringify(reply).slice(0, 300)}`);
      this.#record?.push({ side, id, atMs: t0 - this.#origin, wallMs });
    } catch (err) {
      this.result.failure ??= `${side} turn ${id} failed: ${err instanceof Error ? err.message : String(err)}`;
    } finally {
      this.#inFlight[side]--;
    }
  }

  async #viaService(message: string): Promise<string> {
    const conv = this.#idle.pop() ?? { sessionId: `bench-${randomUUID()}`, turns: 0 };
    const secret = conv.secret === undefined ? {} : { 'x-session-secret': conv.secret };
    const res = await request(`${this.#o.serviceUrl}/api/chat`, {
      method: 'POST',
      dispatcher: this.#http,
      headers: {
        'content-type': 'application/json',
        // Not sampled: the turn is not recorded (service-otlp.ts).
        traceparent: `00-${randomBytes(16).toString('hex')}-${randomBytes(8).toString('hex')}-00`,
        ...secret,
      },
      body: JSON.stringify({ sessionId: conv.sessionId, message, ...(conv.secret !== undefined && { sessionSecret: conv.secret }) }),
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw new Error(`POST /api/chat answered ${res.statusCode}: ${text.slice(0, 300)}`);
    const body = JSON.parse(text) as { sessionSecret?: string; reply?: string; error?: string | null; author?: string };
    if (body.error !== null && body.error !== undefined) throw new Error(`POST /api/chat carried an error: ${body.error}`);
    if (typeof body.sessionSecret === 'string') conv.secret = body.sessionSecret;
    if (++conv.turns >= TURNS_PER_SESSION) void this.#end(conv);
    else this.#idle.push(conv);
    return body.reply ?? '';
  }

  async #end(conv: Conversation): Promise<void> {
    const p = request(`${this.#o.serviceUrl}/api/sessions/${encodeURIComponent(conv.sessionId)}`, {
      method: 'DELETE',
      dispatcher: this.#http,
      headers: { 'content-type': 'application/json', ...(conv.secret !== undefined && { 'x-session-secret': conv.secret }) },
    })
      .then(async (res) => {
        await res.body.dump();
        if (res.statusCode === 200) this.result.sessionsEnded++;
        else this.result.failure ??= `DELETE /api/sessions/${conv.sessionId} answered ${res.statusCode}`;
      })
      .catch((err: unknown) => {
        this.result.failure ??= `DELETE /api/sessions/${conv.sessionId} failed: ${String(err)}`;
      })
      .finally(() => this.#pending.delete(p));
    this.#pending.add(p);
    await p;
  }

  async #direct(text: string): Promise<string> {
    this.#client ??= new ClientFactory({ transports: [new JsonRpcTransportFactory()] }).createFromAgentCard(AgentCard.fromJSON(this.#o.peerCard));
    const client = await this.#client;
    const result = await client.sendMessage({
      tenant: '',
      message: {
        messageId: randomUUID(),
        contextId: '',
        taskId: '',
        role: Role.ROLE_USER,
        parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }],
        metadata: undefined,
        extensions: [],
        referenceTaskIds: [],
      },
      configuration: undefined,
      metadata: undefined,
    });
    return JSON.stringify(result);
  }
}

function sleepUntil(t: number): Promise<void> {
  const ms = t - performance.now();
  return ms > 0 ? new Promise((resolve) => setTimeout(resolve, ms)) : Promise.resolve();
}
