/**
 * The conversations' history on plain SQL (`SqlSessionService`, issue 43) keeps ADK's session
 * service contract and ADK's rows: one script of calls (sessions with app, user, session and
 * `temp:` state, events with state deltas, an event replaced, the latest events, events after a
 * time, lists with pages, a deletion) runs on ADK 2.0's own `DatabaseSessionService` and on ours,
 * each on its own database, and every answer is compared. Then each reads what the other wrote on
 * one database, a session changed by a second writer is read back with every event when one is appended, and
 * a real ADK `Runner` keeps a conversation through it. On SQLite and, when it runs here, on a real
 * PostgreSQL.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BaseAgent, DatabaseSessionService, Runner, createEvent } from '@google/adk';
import type { BaseSessionService, Event, InvocationContext, Session } from '@google/adk';
import { SqliteDriver } from '@mikro-orm/sqlite';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { openAdkSessionService } from '../../packages/store/src/adk-sessions.js';
import knexFactory from 'knex';
import { SqlSessionService, postgresSessionSql, sqliteSessionSql } from '../../packages/store/src/sql-session-service.js';
import type { SessionSql } from '../../packages/store/src/sql-session-service.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';

const APP = 'contract-app';

/** ADK's own service on a database (its ORM), closed by `close`. */
async function adkService(target: Target): Promise<{ service: DatabaseSessionService; close(): Promise<void> }> {
  const service =
    target.kind === 'sqlite'
      ? new DatabaseSessionService({ driver: SqliteDriver, dbName: target.file })
      : new DatabaseSessionService({ driver: PostgreSqlDriver, clientUrl: target.url, schema: target.schema });
  await service.init();
  return { service, close: () => (service as unknown as { orm: { close(force: boolean): Promise<void> } }).orm.close(true) };
}

async function oursOn(target: Target): Promise<{ service: BaseSessionService; close(): Promise<void> }> {
  return target.kind === 'sqlite' ? openAdkSessionService(`sqlite:${target.file}`) : openAdkSessionService(target.url, { schema: target.schema });
}

type Target = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string; schema: string };

/** An event with a fixed id (`evt-<text>` unless given), so two runs of the script compare. */
const ev = (author: string, text: string, timestamp: number, delta?: Record<string, unknown>, id?: string): Event =>
  createEvent({
    invocationId: `inv-${text}`,
    author,
    timestamp,
    id: id ?? `evt-${text}`,
    content: { role: author === 'user' ? 'user' : 'model', parts: [{ text }, ...(author === 'user' ? [] : [{ functionCall: { name: 'lookUp', args: { serialNumber: text, nestedKey: { keepMe: 1 } } } }])] },
    ...(delta && { actions: { stateDelta: delta, artifactDelta: {}, requestedAuthConfigs: {}, requestedToolConfirmations: {} } }),
  });

/** What a session answers, without the times the database gave it (compared separately). */
function view(s: Session | undefined): unknown {
  if (!s) return s;
  return { id: s.id, appName: s.appName, userId: s.userId, state: s.state, events: s.events.map((e) => JSON.parse(JSON.stringify(e)) as unknown) };
}

/** One script of calls; every answer is recorded. */
async function script(service: BaseSessionService, hold = false): Promise<unknown[]> {
  const out: unknown[] = [];
  // With `hold`, session a's appends are one turn's (`batchAppends`), written when it ends.
  const held = (work: () => Promise<void>) => (hold ? (service as SqlSessionService).batchAppends({ appName: APP, userId: 'ana', sessionId: 's-a' }, work) : work());
  const t0 = 1_800_000_000_000;
  const a = await service.createSession({ appName: APP, userId: 'ana', sessionId: 's-a', state: { topic: 'billing', 'app:region': 'eu', 'user:tier': 'gold', 'temp:scratch': 1 } });
  out.push(['create a', view(a)]);
  const b = await service.createSession({ appName: APP, userId: 'bo', sessionId: 's-b', state: { topic: 'warranty' } });
  out.push(['create b', view(b)]);
  await assert.rejects(service.createSession({ appName: APP, userId: 'ana', sessionId: 's-a' }), /already exists/);
  await held(async () => {
    await service.appendEvent({ session: a, event: ev('user', 'one', t0 + 1, { step: 1, 'temp:t': 'x', 'user:lastSeen': 'one' }) });
    await service.appendEvent({ session: a, event: ev('agent', 'two', t0 + 2, { step: 2, 'app:version': 3 }, 'evt-two') });
    await service.appendEvent({ session: a, event: { ...ev('agent', 'partial', t0 + 3), partial: true } });
    // The same event id again replaces the stored event.
    await service.appendEvent({ session: a, event: ev('agent', 'two-bis', t0 + 4, { step: 3 }, 'evt-two') });
  });
  out.push(['after appends (in memory)', view(a)]);
  // A fractional millisecond (ADK's ORM keeps whole ones).
  await service.appendEvent({ session: b, event: ev('user', 'b-one', t0 + 5.75) });
  out.push(['b after a fractional time', b.lastUpdateTime]);
  out.push(['get a', view(await service.getSession({ appName: APP, userId: 'ana', sessionId: 's-a' }))]);
  out.push(['get a, latest 1', view(await service.getSession({ appName: APP, userId: 'ana', sessionId: 's-a', config: { numRecentEvents: 1 } }))]);
  out.push(['get a, after t0+1', view(await service.getSession({ appName: APP, userId: 'ana', sessionId: 's-a', config: { afterTimestamp: t0 + 1 } }))]);
  out.push(['get b (sees app state)', view(await service.getSession({ appName: APP, userId: 'bo', sessionId: 's-b' }))]);
  out.push(['get missing', view(await service.getSession({ appName: APP, userId: 'ana', sessionId: 'nope' }))]);
  out.push(['get other user', view(await service.getSession({ appName: APP, userId: 'bo', sessionId: 's-a' }))]);
  const list = (r: Awaited<ReturnType<BaseSessionService['listSessions']>>) => ({ ...r, sessions: r.sessions.map(view) });
  out.push(['list all', list(await service.listSessions({ appName: APP, order: 'asc' }))]);
  out.push(['list ana', list(await service.listSessions({ appName: APP, userId: 'ana' }))]);
  out.push(['list page 2 of 1', list(await service.listSessions({ appName: APP, limit: 1, page: 2, order: 'asc' }))]);
  out.push(['list offset 1', list(await service.listSessions({ appName: APP, offset: 1, order: 'asc' }))]);
  await service.deleteSession({ appName: APP, userId: 'bo', sessionId: 's-b' });
  out.push(['get b after delete', view(await service.getSession({ appName: APP, userId: 'bo', sessionId: 's-b' }))]);
  out.push(['list after delete', list(await service.listSessions({ appName: APP, order: 'desc' }))]);
  return out;
}

/** Echoes the user's text, and counts turns in the session state. */
class EchoAgent extends BaseAgent {
  constructor() {
    super({ name: 'echo', description: 'echoes' });
  }
  protected async *runAsyncImpl(ctx: InvocationContext): AsyncGenerator<Event, void, void> {
    const text = ctx.userContent?.parts?.[0]?.text ?? '';
    const turns = Number(ctx.session.state['turns'] ?? 0) + 1;
    yield createEvent({ invocationId: ctx.invocationId, author: this.name, content: { role: 'model', parts: [{ text: `echo: ${text}` }] }, actions: { stateDelta: { turns }, artifactDelta: {}, requestedAuthConfigs: {}, requestedToolConfirmations: {} } });
  }
  // eslint-disable-next-line require-yield
  protected async *runLiveImpl(): AsyncGenerator<Event, void, void> {
    throw new Error('not live');
  }
}

/** Our service on a fresh database, and a second connection to it (another writer, another reader). */
async function twoConnections(targets: () => Promise<{ one: Target }>): Promise<{ ours: Awaited<ReturnType<typeof oursOn>>; other: Awaited<ReturnType<typeof oursOn>>; service: SqlSessionService }> {
  const { one } = await targets();
  const ours = await oursOn(one);
  const other = await oursOn(one);
  return { ours, other, service: ours.service as SqlSessionService };
}

function suite(name: string, skip: string | undefined, targets: () => Promise<{ one: Target; two: Target }>): void {
  describe(name, { skip }, () => {
    test('the same script gives the same answers on ADK\'s service and on ours', async () => {
      const { one, two } = await targets();
      const adk = await adkService(one);
      const adkOut = await script(adk.service).finally(() => adk.close());
      const ours = await oursOn(two);
      assert.ok(ours.service instanceof SqlSessionService);
      const ourOut = await script(ours.service).finally(() => ours.close());
      assert.deepEqual(ourOut, adkOut);
      // The same again with session a's appends held as one turn's (a fresh database).
      const { one: fresh } = await targets();
      const batched = await oursOn(fresh);
      const batchedOut = await script(batched.service, true).finally(() => batched.close());
      assert.deepEqual(batchedOut, adkOut);
    });

    test("a turn's held events are stored together when it ends, in one transaction, and read back here at once", async () => {
      const { counted, ours, other } = await countedService(targets);
      try {
        const s = await ours.createSession({ appName: APP, userId: 'u', sessionId: 'turn' });
        const t = s.lastUpdateTime;
        const before = counted.transactions;
        await ours.batchAppends({ appName: APP, userId: 'u', sessionId: 'turn' }, async () => {
          await ours.appendEvent({ session: s, event: ev('user', 'q', t + 1, { 'user:seen': 1 }) });
          await ours.appendEvent({ session: s, event: ev('router', 'transfer', t + 2, { routed: 'billing' }) });
          await ours.appendEvent({ session: s, event: ev('billing', 'answer', t + 3) });
          // The session in memory is the turn's at once: ADK's next agent reads it.
          assert.deepEqual(s.events.map((e) => e.id), ['evt-q', 'evt-transfer', 'evt-answer']);
          assert.deepEqual(s.state, { 'user:seen': 1, routed: 'billing' });
          // Another connection sees nothing of the turn yet.
          const elsewhere = await other.service.getSession({ appName: APP, userId: 'u', sessionId: 'turn' });
          assert.deepEqual(elsewhere?.events, []);
          assert.equal(counted.transactions, before, 'nothing written while the turn runs');
        });
        assert.equal(counted.transactions, before + 1, 'one transaction for the three events');
        const stored = await other.service.getSession({ appName: APP, userId: 'u', sessionId: 'turn' });
        assert.deepEqual(view(stored), view(s));
        assert.equal(s.lastUpdateTime, t + 3);

        // A read here during a turn writes what is held first.
        await ours.batchAppends({ appName: APP, userId: 'u', sessionId: 'turn' }, async () => {
          await ours.appendEvent({ session: s, event: ev('user', 'q2', t + 4) });
          const read = await ours.getSession({ appName: APP, userId: 'u', sessionId: 'turn' });
          assert.deepEqual(read?.events.at(-1)?.id, 'evt-q2');
          await ours.appendEvent({ session: s, event: ev('billing', 'a2', t + 5) });
        });
        const after = await other.service.getSession({ appName: APP, userId: 'u', sessionId: 'turn' });
        assert.deepEqual(after?.events.map((e) => e.id), ['evt-q', 'evt-transfer', 'evt-answer', 'evt-q2', 'evt-a2']);

        // An event appended while a reader's write of the held ones runs stays in the turn's session.
        await ours.batchAppends({ appName: APP, userId: 'u', sessionId: 'turn' }, async () => {
          await ours.appendEvent({ session: s, event: ev('user', 'q3', t + 6, { x: 1 }) });
          const reading = ours.getSession({ appName: APP, userId: 'u', sessionId: 'turn' });
          await ours.appendEvent({ session: s, event: ev('billing', 'a3', t + 7, { y: 2 }) });
          await reading;
          assert.deepEqual(s.events.slice(-2).map((e) => e.id), ['evt-q3', 'evt-a3']);
          assert.equal(s.state['y'], 2, 'the state the later event set');
        });
        const last = await other.service.getSession({ appName: APP, userId: 'u', sessionId: 'turn' });
        assert.deepEqual(view(last), view(s));
        assert.deepEqual([last?.state['x'], last?.state['y']], [1, 2]);
      } finally {
        await other.close();
        await ours.close();
      }
    });

    test("a turn's events are written by one statement (eight at most); an event appended twice is stored as its last", async () => {
      const { counted, ours, other } = await countedService(targets);
      try {
        const s = await ours.createSession({ appName: APP, userId: 'u', sessionId: 'statements' });
        const t = s.lastUpdateTime;
        await ours.batchAppends({ appName: APP, userId: 'u', sessionId: 'statements' }, async () => {
          await ours.appendEvent({ session: s, event: ev('user', 'q', t + 1) });
          await ours.appendEvent({ session: s, event: ev('billing', 'draft', t + 2, undefined, 'evt-a') });
          await ours.appendEvent({ session: s, event: ev('billing', 'final', t + 3, { done: true }, 'evt-a') });
        });
        assert.equal(counted.eventWrites, 1, 'one statement for the turn');
        const stored = await other.service.getSession({ appName: APP, userId: 'u', sessionId: 'statements' });
        assert.deepEqual(stored?.events.map((e) => [e.id, e.content?.parts?.[0]?.text]), [['evt-q', 'q'], ['evt-a', 'final']], 'the event given twice is its last');
        assert.deepEqual(view(stored), view(s));
        const before = counted.eventWrites;
        await ours.batchAppends({ appName: APP, userId: 'u', sessionId: 'statements' }, async () => {
          for (let i = 0; i < 19; i++) await ours.appendEvent({ session: s, event: ev(i % 2 === 0 ? 'user' : 'billing', `m${i}`, t + 10 + i) });
        });
        assert.equal(counted.eventWrites - before, 3, 'nineteen events: eight, eight and three');
        const many = await other.service.getSession({ appName: APP, userId: 'u', sessionId: 'statements' });
        assert.deepEqual(many?.events.slice(2).map((e) => e.id), Array.from({ length: 19 }, (_, i) => `evt-m${i}`));
      } finally {
        await other.close();
        await ours.close();
      }
    });

    test('a write by another writer during a held turn is kept, and the session is read back with both', async () => {
      const { ours, other, service } = await twoConnections(targets);
      try {
        const s = await service.createSession({ appName: APP, userId: 'u', sessionId: 'two-writers', state: { a: 1 } });
        const t = s.lastUpdateTime;
        await service.batchAppends({ appName: APP, userId: 'u', sessionId: 'two-writers' }, async () => {
          await service.appendEvent({ session: s, event: ev('user', 'mine-1', t + 1, { b: 1 }) });
          const theirs = await other.service.getSession({ appName: APP, userId: 'u', sessionId: 'two-writers' });
          await other.service.appendEvent({ session: theirs!, event: ev('agent', 'theirs', t + 2, { c: 1 }) });
          await service.appendEvent({ session: s, event: ev('agent', 'mine-2', t + 3) });
        });
        assert.deepEqual(s.events.map((e) => e.id), ['evt-mine-1', 'evt-theirs', 'evt-mine-2'], 'read back: both writers\' events');
        assert.deepEqual(s.state, { a: 1, b: 1, c: 1 });
        const stored = await other.service.getSession({ appName: APP, userId: 'u', sessionId: 'two-writers' });
        assert.deepEqual(view(stored), view(s));
      } finally {
        await other.close();
        await ours.close();
      }
    });

    test("a held turn's events are stored when the turn throws; a held write that fails is the turn's error", async () => {
      const { ours, other, service } = await twoConnections(targets);
      const key = { appName: APP, userId: 'u', sessionId: 'failing' };
      try {
        const s = await service.createSession(key);
        const t = s.lastUpdateTime;
        await assert.rejects(
          service.batchAppends(key, async () => {
            await service.appendEvent({ session: s, event: ev('user', 'asked', t + 1) });
            throw new Error('the peer went away');
          }),
          /the peer went away/,
        );
        assert.deepEqual((await other.service.getSession(key))?.events.map((e) => e.id), ['evt-asked'], 'the user message is kept');
        // The session is deleted elsewhere while a turn holds its events: the write fails, loudly.
        await assert.rejects(
          service.batchAppends(key, async () => {
            await service.appendEvent({ session: s, event: ev('user', 'orphan', t + 2) });
            await other.service.deleteSession(key);
          }),
          /not found/,
        );
        // The same when a read in the turn wrote the held events (and failed): the turn still fails.
        const again = await service.createSession({ ...key, sessionId: 'failing-read' });
        await assert.rejects(
          service.batchAppends({ ...key, sessionId: 'failing-read' }, async () => {
            await service.appendEvent({ session: again, event: ev('user', 'orphan-2', again.lastUpdateTime + 1) });
            await other.service.deleteSession({ ...key, sessionId: 'failing-read' });
            assert.equal(await service.getSession({ ...key, sessionId: 'failing-read' }), undefined, 'the reader reads what is stored');
          }),
          /not found/,
        );
        // Nothing is held after the turns: an append outside one is written at once.
        const next = await service.createSession({ ...key, sessionId: 'failing-2' });
        await service.appendEvent({ session: next, event: ev('user', 'direct', next.lastUpdateTime + 1) });
        assert.equal((await other.service.getSession({ ...key, sessionId: 'failing-2' }))?.events.length, 1);
      } finally {
        await other.close();
        await ours.close();
      }
    });

    test('each reads what the other wrote, and an append after another writer reloads the session', async () => {
      const { one } = await targets();
      const ours = await oursOn(one);
      const first = await ours.service.createSession({ appName: APP, userId: 'u', sessionId: 'shared', state: { a: 1 } });
      await ours.service.appendEvent({ session: first, event: ev('user', 'from-ours', first.lastUpdateTime + 10, { a: 2 }) });
      await ours.close();

      const adk = await adkService(one);
      try {
        const seen = await adk.service.getSession({ appName: APP, userId: 'u', sessionId: 'shared' });
        assert.deepEqual(view(seen), view(first), 'ADK reads our rows as its own');
        await adk.service.appendEvent({ session: seen!, event: ev('agent', 'from-adk', seen!.lastUpdateTime + 10, { b: 1 }) });
      } finally {
        await adk.close();
      }

      // `first` is now stale: ADK appended after it was read. Appending through it reads it back.
      const again = await oursOn(one);
      try {
        await again.service.appendEvent({ session: first, event: ev('user', 'after-adk', first.lastUpdateTime + 1_000, { c: 1 }) });
        assert.deepEqual(first.events.map((e) => e.content?.parts?.[0]?.text), ['from-ours', 'from-adk', 'after-adk'], 'the stale session was read back with both writers\' events');
        assert.deepEqual(first.state, { a: 2, b: 1, c: 1 });
        const stored = await again.service.getSession({ appName: APP, userId: 'u', sessionId: 'shared' });
        assert.deepEqual(view(stored), view(first));
      } finally {
        await again.close();
      }
    });

    test('an ADK Runner keeps a conversation through it, across a reopen', async () => {
      const { one } = await targets();
      const turn = async (service: BaseSessionService, text: string) => {
        const runner = new Runner({ appName: APP, agent: new EchoAgent(), sessionService: service });
        const replies: string[] = [];
        for await (const e of runner.runAsync({ userId: 'r', sessionId: 'runner', newMessage: { role: 'user', parts: [{ text }] } })) replies.push(e.content?.parts?.[0]?.text ?? '');
        return replies;
      };
      const first = await oursOn(one);
      await first.service.createSession({ appName: APP, userId: 'r', sessionId: 'runner' });
      assert.deepEqual(await turn(first.service, 'hello'), ['echo: hello']);
      await first.close();
      const second = await oursOn(one);
      try {
        assert.deepEqual(await turn(second.service, 'again'), ['echo: again']);
        const s = await second.service.getSession({ appName: APP, userId: 'r', sessionId: 'runner' });
        assert.deepEqual(s?.events.map((e) => `${e.author}: ${e.content?.parts?.[0]?.text}`), ['user: hello', 'echo: echo: hello', 'user: again', 'echo: echo: again']);
        assert.equal(s?.state['turns'], 2);
      } finally {
        await second.close();
      }
    });
  });
}

/** Our service's statements on a target, counting the transactions begun. */
/** Our service on a fresh database through counted SQL, and a second connection to it. */
async function countedService(targets: () => Promise<{ one: Target }>): Promise<{ counted: Awaited<ReturnType<typeof countedSql>>; ours: SqlSessionService; other: Awaited<ReturnType<typeof oursOn>> }> {
  const { one } = await targets();
  await (await oursOn(one)).close(); // ADK's tables
  const counted = await countedSql(one);
  return { counted, ours: new SqlSessionService(counted.sql), other: await oursOn(one) };
}

async function countedSql(target: Target): Promise<{ sql: SessionSql; readonly transactions: number; readonly eventWrites: number }> {
  const sql = target.kind === 'sqlite' ? await sqliteSessionSql(target.file) : postgresSessionSql(knexFactory({ client: 'pg', connection: target.url, searchPath: [target.schema], pool: { min: 0, max: 2 } }));
  const counter = { transactions: 0, eventWrites: 0 };
  const counting = (inner: SessionSql): SessionSql => ({
    kind: inner.kind,
    all: (q, p) => inner.all(q, p),
    run: (q, p) => {
      if (q.startsWith('INSERT INTO events')) counter.eventWrites++;
      return inner.run(q, p);
    },
    transaction: (work) => {
      counter.transactions++;
      return inner.transaction((tx) => work(counting(tx)));
    },
    close: () => inner.close(),
  });
  return {
    sql: counting(sql),
    get transactions() {
      return counter.transactions;
    },
    get eventWrites() {
      return counter.eventWrites;
    },
  };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'a2ad-sql-sessions-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});
let n = 0;
suite('conversations on SQLite', undefined, async () => ({ one: { kind: 'sqlite', file: join(dir, `one-${++n}.sqlite`) }, two: { kind: 'sqlite', file: join(dir, `two-${n}.sqlite`) } }));

let pg: TestPostgres | undefined;
after(async () => {
  await pg?.close();
});
suite('conversations on PostgreSQL', POSTGRES_SKIP, async () => {
  pg ??= await startPostgres();
  return { one: { kind: 'postgres', url: pg.url, schema: pg.schema() }, two: { kind: 'postgres', url: pg.url, schema: pg.schema() } };
});
