/**
 * Idle expiry across replicas, two services in process on one real PostgreSQL: a session started
 * on replica A and continued on replica B keeps its pin and its history when A's idle check runs
 * (what A's idle timer calls), because B's last use is in the shared store; a session idle
 * everywhere is still expired, its history and stored pin deleted. Each replica has its own
 * clock, so A's idleness is made by moving A's clock, never by waiting.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import type { Clock } from '../../packages/core/src/clock/index.js';
import { systemClock } from '../../packages/core/src/clock/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger, startService } from '../../packages/service/src/index.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';

const IDLE_MS = 600_000;

/** The system clock, which a test can move forward (monotonic time, wall time, or both) at once. */
function movableClock(): { clock: Clock; move(monotonicMs: number, wallMs: number): void } {
  let mono = 0;
  let wall = 0;
  return {
    clock: { now: () => systemClock.now() + mono, wallNow: () => systemClock.wallNow() + wall, setTimer: systemClock.setTimer, sleep: systemClock.sleep },
    move(monotonicMs, wallMs) {
      mono += monotonicMs;
      wall += wallMs;
    },
  };
}

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
}
const { Client } = createRequire(import.meta.url)('pg') as { Client: new (c: Record<string, unknown>) => PgClient };

describe('idle expiry with two replicas on one PostgreSQL', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  let billing: RunningPeer;
  let a: RunningService;
  let b: RunningService;
  const aClock = movableClock();
  const sql = async (text: string, params: unknown[] = []) => {
    const c = new Client({ host: '127.0.0.1', port: pg.port, user: 'a2a', database: 'postgres' });
    await c.connect();
    try {
      return (await c.query(text, params)).rows;
    } finally {
      await c.end();
    }
  };
  const userTurns = async (sessionId: string) =>
    (await sql('SELECT event_data FROM idle_expiry.events WHERE session_id = $1 ORDER BY timestamp', [sessionId]))
      .map((r) => (typeof r.event_data === 'string' ? JSON.parse(r.event_data) : r.event_data) as { author: string; content?: { parts?: Array<{ text?: string }> } })
      .filter((e) => e.author === 'user')
      .map((e) => e.content?.parts?.[0]?.text);
  const chat = async (s: RunningService, body: Record<string, unknown>, secret?: string) => {
    const res = await fetch(`${s.url}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(secret !== undefined && { 'x-session-secret': secret }) },
      body: JSON.stringify(body),
    });
    return (await res.json()) as Record<string, unknown>;
  };

  before(async () => {
    pg = await startPostgres();
    billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: done', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
    const options = (id: string, clock: Clock): ServiceOptions => ({
      port: 0,
      logger: createLogger({ level: 'silent' }),
      clock,
      policy: { allow: [new URL(billing.baseUrl).origin], allowLoopback: true },
      vocabulary: [{ tag: 'billing', description: 'Invoices.', keywords: ['invoice'] }],
      needs: [{ tag: 'billing' }],
      static: [{ name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
      cache: { minTtlMs: 0 },
      loop: { cycleIntervalMs: 60_000 },
      sessions: { idleTimeoutMs: IDLE_MS },
      store: pg.url,
      storeOptions: { schema: 'idle_expiry' },
      replica: { id, leaderRetryMs: 200, pollMs: 500, leaseMs: 3_000 },
    });
    a = await startService(options('replica-a', aClock.clock));
    b = await startService(options('replica-b', systemClock));
  });

  after(async () => {
    await b?.close();
    await a?.close();
    await billing?.close();
    await pg?.close();
  });

  test("a session used on replica B keeps its pin and history when replica A's idle check runs", async () => {
    const t1 = await chat(a, { message: 'Explain my invoice' });
    assert.equal(t1.author, 'billing_agent', JSON.stringify(t1));
    const sessionId = t1.sessionId as string;
    const secret = t1.sessionSecret as string;
    await a.flushStore();
    const t2 = await chat(b, { sessionId, message: 'Another invoice question' }, secret);
    assert.deepEqual([t2.author, t2.digest], ['billing_agent', t1.digest], JSON.stringify(t2));
    await b.flushStore();

    // On A's clock the session has been idle longer than the timeout; on the wall, B used it just now.
    aClock.move(IDLE_MS + 60_000, 0);
    assert.deepEqual(await a.trees.expireIdleEverywhere(), [], 'not expired: used on B');
    assert.equal(a.trees.stats.keptElsewhere, 1);
    assert.equal(a.trees.stats.expired, 0);
    assert.equal(a.trees.digestOf(sessionId), t1.digest, "A's pin is renewed from B's last use, on the same digest");
    await a.flushStore();
    assert.equal((await sql('SELECT 1 FROM idle_expiry.a2ad_pins WHERE session_id = $1', [sessionId])).length, 1, 'the stored pin is kept');
    assert.deepEqual(await userTurns(sessionId), ['Explain my invoice', 'Another invoice question'], 'the history is kept');

    // The conversation goes on on A, with its whole history.
    const t3 = await chat(a, { sessionId, message: 'A third invoice question' }, secret);
    assert.deepEqual([t3.author, t3.digest, t3.notices], ['billing_agent', t1.digest, []], JSON.stringify(t3));
    assert.deepEqual(await userTurns(sessionId), ['Explain my invoice', 'Another invoice question', 'A third invoice question']);
    await a.flushStore();

    // Now idle everywhere: A's last use was its own, and A's wall clock has moved past the timeout too.
    aClock.move(IDLE_MS + 60_000, IDLE_MS + 60_000);
    assert.deepEqual(await a.trees.expireIdleEverywhere(), [sessionId], 'idle everywhere: expired');
    await a.flushStore();
    assert.equal(a.trees.digestOf(sessionId), undefined);
    assert.equal((await sql('SELECT 1 FROM idle_expiry.a2ad_pins WHERE session_id = $1', [sessionId])).length, 0, 'the stored pin is deleted');
    // The history is deleted in the background, with the pin (polled: a bound, not an assertion).
    for (let i = 0; i < 200 && (await userTurns(sessionId)).length > 0; i++) await new Promise((r) => setTimeout(r, 25));
    assert.deepEqual(await userTurns(sessionId), [], 'and the history with it');
  });
});
