/**
 * ADK's session service contract on ADK's own session tables, written with plain SQL (issue 43).
 *
 * ADK's `DatabaseSessionService` goes through an ORM: a turn of a routed root (one `getSession`,
 * two or three `appendEvent`s) cost about twenty ORM round trips and 24 ms of CPU on a quiet
 * machine (docs/benchmarks.md, "Issue 43: the chat turn"). This service keeps ADK's tables and
 * rows exactly (`sessions`, `events`, `app_states`, `user_states`; events as ADK's snake_case JSON,
 * times as ADK writes them), so a database written by one is read by the other, a backup restores
 * either, and ADK's own service can be switched back at any time. What changes is how they are
 * written:
 * - `getSession`: two statements (the session with its app and user state in one join, then its
 *   events through the `a2ad_events_by_session` index instead of a scan of every event);
 * - `appendEvent`: one transaction of three to five statements (the session row locked and read,
 *   the event written or replaced, the rows that the event's delta changes);
 * - `batchAppends`: a turn's events (the user's message, the agents' answers) held in memory and
 *   written in one such transaction when the turn ends, before its answer is given;
 * - on SQLite, through the `sqlite3` driver itself with prepared statements (no query builder);
 *   on PostgreSQL, through knex's pool;
 * - no identity map, no unit of work, no change sets.
 *
 * Behaviour follows ADK 2.0's `DatabaseSessionService` call for call (test/store/sql-sessions.test.ts
 * replays one script on both and compares): `temp:` keys are never stored, `app:` and `user:` keys
 * go to their shared rows, an event appended to a session another writer changed since it was
 * read is written and the session read back with every stored event, a partial event is not stored.
 *
 * @module
 */
import { BaseSessionService, State, createSession } from '@google/adk';
import type { Event, Session } from '@google/adk';
import type { BatchedAppends } from 'a2a-discovery/adk';
// ADK's own row format for events (its `DatabaseSessionService` uses the same two functions);
// exported by the package under `dist/web/*`.
import { transformToCamelCaseEvent, transformToSnakeCaseEvent } from '@google/adk/dist/web/events/event.js';
import type { Knex } from 'knex';
import { DiscoveryError } from 'a2a-discovery';
import type { Database, Statement } from 'sqlite3';

type Request<M extends keyof BaseSessionService> = BaseSessionService[M] extends (arg: infer A) => unknown ? A : never;
type Reply<M extends keyof BaseSessionService> = BaseSessionService[M] extends (...args: never[]) => infer R ? R : never;
type JsonObject = Record<string, unknown>;
type Row = Record<string, unknown>;

/** Writes on a SQLite file shared with the store go through its gate (see `StateStore.exclusive`). */
export type SessionGate = <T>(work: () => Promise<T>) => Promise<T>;

/**
 * Statements on one database, `?` for each parameter. A transaction's statements run on one
 * connection, nothing else between them.
 */
export interface SessionSql {
  readonly kind: 'sqlite' | 'postgres';
  all(sql: string, params: readonly unknown[]): Promise<Row[]>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params: readonly unknown[]): Promise<number>;
  transaction<T>(work: (tx: SessionSql) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The index this service reads a session's events by (ADK's primary key starts with the event id). */
export const EVENTS_INDEX = 'a2ad_events_by_session';

/** Creates the events index when missing (at open, after ADK created its tables). */
export async function ensureSessionIndex(sql: SessionSql): Promise<void> {
  await sql.run(`CREATE INDEX IF NOT EXISTS ${EVENTS_INDEX} ON events (app_name, user_id, session_id, "timestamp")`, []);
}

/**
 * SQLite through the driver itself (`sqlite3`), one connection in WAL mode: a statement costs
 * about 30–60 µs where knex adds some 80 µs to each. Statements are prepared once and kept (the
 * service has a fixed set of them); calls run one after another on the connection, a transaction
 * (`BEGIN IMMEDIATE`: the write lock first, so a transaction never reads a state another connection
 * then changes) with nothing between its statements.
 */
export async function sqliteSessionSql(file: string): Promise<SessionSql> {
  const { default: sqlite3 } = await import('sqlite3');
  const db = await new Promise<Database>((resolve, reject) => {
    const opened: Database = new sqlite3.Database(file, (err) => (err ? reject(err) : resolve(opened)));
  });
  const exec = (sql: string) => new Promise<void>((resolve, reject) => db.exec(sql, (err) => (err ? reject(err) : resolve())));
  await exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;');
  const statements = new Map<string, Statement>();
  const prepared = (sql: string) => {
    let st = statements.get(sql);
    if (!st) statements.set(sql, (st = db.prepare(sql)));
    return st;
  };
  const direct: SessionSql = {
    kind: 'sqlite',
    all: (sql, params) => new Promise((resolve, reject) => prepared(sql).all(params as unknown[], (err: Error | null, rows: Row[]) => (err ? reject(err) : resolve(rows)))),
    run: (sql, params) =>
      new Promise((resolve, reject) =>
        prepared(sql).run(params as unknown[], function (this: { changes: number }, err: Error | null) {
          if (err) reject(err);
          else resolve(this.changes);
        }),
      ),
    transaction: () => Promise.reject(new DiscoveryError('ERR_STORE_UNAVAILABLE', 'a session transaction cannot nest another', { stage: 'store' })),
    close: () => Promise.resolve(),
  };
  let chain: Promise<unknown> = Promise.resolve();
  const queued = <T>(work: () => Promise<T>): Promise<T> => {
    const p = chain.then(work);
    chain = p.catch(() => undefined);
    return p;
  };
  return {
    kind: 'sqlite',
    all: (sql, params) => queued(() => direct.all(sql, params)),
    run: (sql, params) => queued(() => direct.run(sql, params)),
    transaction: (work) =>
      queued(async () => {
        await exec('BEGIN IMMEDIATE');
        try {
          const out = await work(direct);
          await exec('COMMIT');
          return out;
        } catch (err) {
          await exec('ROLLBACK').catch(() => undefined);
          throw err;
        }
      }),
    close: () =>
      queued(async () => {
        for (const st of statements.values()) await new Promise<void>((resolve) => st.finalize(() => resolve()));
        statements.clear();
        await new Promise<void>((resolve, reject) => db.close((err) => (err ? reject(err) : resolve())));
      }),
  };
}

/** PostgreSQL through knex (its pool, `?` placeholders); `schema` on the connection's search path. */
export function postgresSessionSql(db: Knex): SessionSql {
  const over = (q: Knex | Knex.Transaction): SessionSql => ({
    kind: 'postgres',
    all: async (sql, params) => ((await q.raw(sql, params as Knex.RawBinding[])) as { rows: Row[] }).rows,
    run: async (sql, params) => ((await q.raw(sql, params as Knex.RawBinding[])) as { rowCount: number | null }).rowCount ?? 0,
    transaction: (work) => db.transaction((trx) => work(over(trx))),
    close: () => db.destroy(),
  });
  return over(db);
}

const SESSION_ROW = `SELECT s.state, s.update_time, a.state AS app_state, u.state AS user_state FROM sessions s
  LEFT JOIN app_states a ON a.app_name = s.app_name
  LEFT JOIN user_states u ON u.app_name = s.app_name AND u.user_id = s.user_id
  WHERE s.app_name = ? AND s.user_id = ? AND s.id = ?`;
/** {@link SESSION_ROW} with the session's row locked until the transaction ends (PostgreSQL). */
const SESSION_ROW_LOCKED = `${SESSION_ROW} FOR UPDATE OF s`;
/** Events written by one statement, at most. */
const EVENTS_PER_STATEMENT = 8;
/** Events written or replaced, `n` to the statement (its text kept per `n`: SQLite prepares each once). */
const upsertEvents = (n: number): string =>
  `INSERT INTO events (id, app_name, user_id, session_id, invocation_id, "timestamp", event_data) VALUES ${Array.from({ length: n }, () => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}
  ON CONFLICT (id, app_name, user_id, session_id) DO UPDATE SET invocation_id = excluded.invocation_id, "timestamp" = excluded."timestamp", event_data = excluded.event_data`;

export interface SqlSessionServiceOptions {
  /** Runs every write; reads are not gated (SQLite's WAL lets them read beside a writer). */
  gate?: SessionGate;
}

/** A session's events held for a turn (`batchAppends`). */
interface Held {
  /** Turns holding it. */
  holds: number;
  /** The session object the held events were appended to (the first one appended). */
  session?: Session;
  pending: Event[];
  /** The session's time as stored once every write of it begun here is done. */
  expected: number;
  /** The write of it running, if any. */
  writing?: Promise<void>;
  /** The first write of it that failed: the turn's error. */
  failure?: unknown;
}

export class SqlSessionService extends BaseSessionService implements BatchedAppends {
  readonly #sql: SessionSql;
  /** Sessions whose appends a turn holds, by app, user and id: one per turn in flight. */
  readonly #held = new Map<string, Held>();
  readonly #sqlite: boolean;
  readonly #gate: SessionGate;

  constructor(sql: SessionSql, options: SqlSessionServiceOptions = {}) {
    super();
    this.#sql = sql;
    this.#sqlite = sql.kind === 'sqlite';
    this.#gate = options.gate ?? ((work) => work());
  }

  /** Closes the connection. */
  close(): Promise<void> {
    return this.#sql.close();
  }

  override async createSession({ appName, userId, state, sessionId }: Request<'createSession'>): Reply<'createSession'> {
    const id = sessionId || crypto.randomUUID();
    const split = splitState(state ?? {});
    const now = Date.now();
    const stored = await this.#gate(() =>
      this.#sql.transaction(async (tx) => {
        const existing = await tx.all('SELECT id FROM sessions WHERE app_name = ? AND user_id = ? AND id = ?', [appName, userId, id]);
        if (existing.length > 0) throw new DiscoveryError('ERR_SESSION_INVALID', `Session with id ${id} already exists.`, { stage: 'store' });
        const app = await this.#mergeShared(tx, 'app', [appName], split.app, now);
        const user = await this.#mergeShared(tx, 'user', [appName, userId], split.user, now);
        await tx.run('INSERT INTO sessions (id, app_name, user_id, state, create_time, update_time) VALUES (?, ?, ?, ?, ?, ?)', [id, appName, userId, JSON.stringify(split.session), this.#time(now), this.#time(now)]);
        return { app, user };
      }),
    );
    return createSession({ id, appName, userId, state: mergeStates(stored.app, stored.user, split.session), events: [], lastUpdateTime: now });
  }

  override async getSession({ appName, userId, sessionId, config }: Request<'getSession'>): Reply<'getSession'> {
    // Held events of a turn in this process are written before they are read (`batchAppends`).
    // (A failure of that write is the turn's: `batchAppends` throws it; this reads what is stored.)
    const held = this.#held.get(keyOf(appName, userId, sessionId));
    if (held !== undefined) await this.#flush(held).catch(() => undefined);
    // Both at once: on PostgreSQL two connections of the pool, one round trip's wait instead of two.
    const [[row], events] = await Promise.all([this.#sql.all(SESSION_ROW, [appName, userId, sessionId]), this.#events(this.#sql, appName, userId, sessionId, config?.afterTimestamp, config?.numRecentEvents)]);
    if (!row) return undefined;
    return createSession({
      id: sessionId,
      appName,
      userId,
      state: mergeStates(json(row['app_state']), json(row['user_state']), json(row['state'])),
      events,
      lastUpdateTime: ms(row['update_time']),
    });
  }

  override async listSessions({ appName, userId, limit, offset, page, order }: Request<'listSessions'>): Reply<'listSessions'> {
    const where = userId ? 'app_name = ? AND user_id = ?' : 'app_name = ?';
    const key = userId ? [appName, userId] : [appName];
    const orderBy = order === 'asc' ? ' ORDER BY update_time ASC, id ASC' : order === 'desc' ? ' ORDER BY update_time DESC, id ASC' : '';
    const select = `SELECT id, user_id, state, update_time FROM sessions WHERE ${where}${orderBy}`;
    const count = async () => Number((await this.#sql.all(`SELECT count(*) AS n FROM sessions WHERE ${where}`, key))[0]?.['n'] ?? 0);
    // SQLite takes OFFSET only after a LIMIT (-1: none); PostgreSQL takes LIMIT ALL.
    const noLimit = this.#sqlite ? 'LIMIT -1' : 'LIMIT ALL';
    let rows: Row[];
    let meta: { page: number; limit: number; totalItems: number; totalPages: number };
    if (limit !== undefined) {
      const totalItems = await count();
      const effectiveOffset = page !== undefined ? (page - 1) * limit : (offset ?? 0);
      const effectivePage = page ?? (limit === 0 ? 1 : Math.floor(effectiveOffset / limit) + 1);
      rows = await this.#sql.all(`${select} LIMIT ? OFFSET ?`, [...key, limit, effectiveOffset]);
      meta = { page: effectivePage, limit, totalItems, totalPages: limit === 0 ? 0 : Math.ceil(totalItems / limit) };
    } else {
      rows = offset ? await this.#sql.all(`${select} ${noLimit} OFFSET ?`, [...key, offset]) : await this.#sql.all(select, key);
      const totalItems = offset ? await count() : rows.length;
      meta = { page: 1, limit: totalItems, totalItems, totalPages: totalItems === 0 ? 0 : 1 };
    }
    const [appRow] = await this.#sql.all('SELECT state FROM app_states WHERE app_name = ?', [appName]);
    const userRows = await this.#sql.all(`SELECT user_id, state FROM user_states WHERE ${where}`, key);
    const users = new Map(userRows.map((u) => [String(u['user_id']), json(u['state'])]));
    const app = json(appRow?.['state']);
    const sessions = rows.map((r) => {
      const user = String(r['user_id']);
      return createSession({ id: String(r['id']), appName, userId: user, state: mergeStates(app, users.get(user) ?? {}, json(r['state'])), events: [], lastUpdateTime: ms(r['update_time']) });
    });
    return { sessions, ...meta } as Awaited<Reply<'listSessions'>>;
  }

  override async deleteSession({ appName, userId, sessionId }: Request<'deleteSession'>): Reply<'deleteSession'> {
    await this.#gate(() =>
      this.#sql.transaction(async (tx) => {
        await tx.run('DELETE FROM sessions WHERE app_name = ? AND user_id = ? AND id = ?', [appName, userId, sessionId]);
        await tx.run('DELETE FROM events WHERE app_name = ? AND user_id = ? AND session_id = ?', [appName, userId, sessionId]);
      }),
    );
  }

  override async appendEvent({ session, event }: Request<'appendEvent'>): Reply<'appendEvent'> {
    if (event.partial) return event;
    trimTempDelta(event);
    const held = this.#held.get(keyOf(session.appName, session.userId, session.id));
    if (held !== undefined && (held.session ?? session) === session) {
      // Held for a turn (`batchAppends`): the session in memory changes now, the rows at its end.
      if (held.session === undefined) {
        held.session = session;
        held.expected = session.lastUpdateTime;
      }
      held.pending.push(event);
      applyInMemory(session, event);
      return event;
    }
    await this.#write(session, [event], session.lastUpdateTime);
    return event;
  }

  /**
   * Runs `work` (a turn) with the events appended to that session held in memory, then writes them
   * in one transaction before it resolves: a turn of three events costs one transaction where it
   * cost three. While held, the session object ADK appends to changes at once (its events, its
   * state), as it would after each write; a `getSession` of the same session in this process
   * writes what is held first, so every reader here sees every appended event. Events appended to
   * another object of the same session (a second turn on it at once) are written at once, as
   * without a hold; a write by another writer meanwhile is found at the end as it is per event
   * (the session is read back from the store). The held events are written even when `work`
   * throws (its error is the one thrown); when their write fails (at the end, or for a reader
   * meanwhile), that error is thrown.
   */
  async batchAppends<T>({ appName, userId, sessionId }: { appName: string; userId: string; sessionId: string }, work: () => Promise<T>): Promise<T> {
    const key = keyOf(appName, userId, sessionId);
    let held = this.#held.get(key);
    if (held === undefined) this.#held.set(key, (held = { holds: 0, pending: [], expected: 0 }));
    held.holds++;
    const done = await Promise.resolve().then(work).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    if (--held.holds === 0) this.#held.delete(key);
    await this.#flush(held).catch(() => undefined);
    if ('error' in done) throw done.error;
    // A write of the hold that failed: this one, or one a reader started meanwhile.
    if (held.failure !== undefined) throw held.failure;
    return done.value;
  }

  /** Writes what a hold has pending, in one transaction once any write of it still running is done. */
  #flush(held: Held): Promise<void> {
    const session = held.session;
    if (session === undefined || held.pending.length === 0) return held.writing ?? Promise.resolve();
    const events = held.pending.splice(0);
    const expected = held.expected;
    held.expected = new Date(events.at(-1)!.timestamp).getTime();
    // One after another, as they were taken (on PostgreSQL two transactions could otherwise commit
    // in either order, and the session's time go back).
    const write = (held.writing ?? Promise.resolve()).catch(() => undefined).then(() => this.#write(session, events, expected)).then(
      () => {
        // Appended while the write ran: the session as stored has not got them yet.
        for (const event of held.pending) applyInMemory(session, event);
      },
      (err: unknown) => {
        held.failure ??= err;
        throw err;
      },
    );
    const chained = write.finally(() => {
      if (held.writing === chained) held.writing = undefined;
    });
    held.writing = chained;
    return chained;
  }

  /**
   * Writes `events` of `session` in one transaction: the session's row locked and read, the
   * events written or replaced, the shared state rows their deltas change, the session's state
   * and time. `expected` is the session's time as last read or written here: a later time means
   * another writer changed it, and the session's events (these included) are read back from the
   * store; else these are put in `session.events` (where a hold put them already: in place).
   */
  async #write(session: Session, events: readonly Event[], expected: number): Promise<void> {
    const { appName, userId, id } = session;
    const delta = { app: {} as JsonObject, user: {} as JsonObject, session: {} as JsonObject };
    for (const event of events) {
      const split = splitState(event.actions?.stateDelta ?? {});
      Object.assign(delta.app, split.app);
      Object.assign(delta.user, split.user);
      Object.assign(delta.session, split.session);
    }
    const last = events.at(-1)!.timestamp;
    const updated = await this.#gate(() =>
      this.#sql.transaction(async (tx) => {
        // PostgreSQL: the session's row is locked for the transaction. SQLite: BEGIN IMMEDIATE holds the file's write lock.
        const [row] = await tx.all(this.#sqlite ? SESSION_ROW : SESSION_ROW_LOCKED, [appName, userId, id]);
        if (!row) throw new DiscoveryError('ERR_SESSION_INVALID', `Session ${id} not found for appendEvent`, { stage: 'store' });
        // Another writer changed the session since it was read: its events are read back below.
        const stale = ms(row['update_time']) > expected;
        const app = await this.#mergeShared(tx, 'app', [appName], delta.app, last, row['app_state']);
        const user = await this.#mergeShared(tx, 'user', [appName, userId], delta.user, last, row['user_state']);
        const state = { ...json(row['state']), ...delta.session };
        await this.#upsertEvents(tx, appName, userId, id, events);
        if (Object.keys(delta.session).length > 0) {
          await tx.run('UPDATE sessions SET state = ?, update_time = ? WHERE app_name = ? AND user_id = ? AND id = ?', [JSON.stringify(state), this.#time(last), appName, userId, id]);
        } else {
          await tx.run('UPDATE sessions SET update_time = ? WHERE app_name = ? AND user_id = ? AND id = ?', [this.#time(last), appName, userId, id]);
        }
        // Every stored event, the other writer's and these, in their order.
        const stored = stale ? await this.#events(tx, appName, userId, id) : undefined;
        return { app, user, state, stored };
      }),
    );
    if (updated.stored) session.events = updated.stored;
    else for (const event of events) putEvent(session.events, event);
    session.state = mergeStates(updated.app, updated.user, updated.state);
    session.lastUpdateTime = new Date(last).getTime();
  }

  /**
   * Writes `events` (each new, or replacing the stored one of its id) in one statement: a turn's
   * two to four events in one round trip ({@link EVENTS_PER_STATEMENT} at most, so that SQLite keeps
   * as many prepared statements). An id given twice is written as the last one given, as
   * one statement per event would leave it (PostgreSQL refuses a statement that changes a row twice).
   */
  async #upsertEvents(tx: SessionSql, appName: string, userId: string, sessionId: string, events: readonly Event[]): Promise<void> {
    const last = new Map<string, Event>();
    for (const event of events) {
      last.delete(event.id);
      last.set(event.id, event);
    }
    const all = [...last.values()];
    for (let i = 0; i < all.length; i += EVENTS_PER_STATEMENT) {
      const part = all.slice(i, i + EVENTS_PER_STATEMENT);
      const params: unknown[] = [];
      for (const event of part) params.push(event.id, appName, userId, sessionId, event.invocationId, this.#time(event.timestamp), JSON.stringify(transformToSnakeCaseEvent(event)));
      await tx.run(upsertEvents(part.length), params);
    }
  }

  async #events(sql: SessionSql, appName: string, userId: string, sessionId: string, after?: number, recent?: number): Promise<Event[]> {
    const params: unknown[] = [appName, userId, sessionId];
    let query = 'SELECT event_data FROM events WHERE app_name = ? AND user_id = ? AND session_id = ?';
    if (after) {
      query += ' AND "timestamp" > ?';
      params.push(this.#time(after));
    }
    query += ' ORDER BY "timestamp" DESC';
    if (recent !== undefined) {
      query += ' LIMIT ?';
      params.push(recent);
    }
    const rows = await sql.all(query, params);
    return rows.reverse().map((r) => transformToCamelCaseEvent(json(r['event_data'])));
  }

  /**
   * Merges a delta into a shared state row (`app_states` by app, `user_states` by app and user),
   * creating the row when missing, and returns the state. `known` is the row's state when the
   * caller read it already (null: no row).
   */
  async #mergeShared(tx: SessionSql, shared: 'app' | 'user', key: [string] | [string, string], delta: JsonObject, now: number, known?: unknown): Promise<JsonObject> {
    const table = shared === 'app' ? 'app_states' : 'user_states';
    const where = shared === 'app' ? 'app_name = ?' : 'app_name = ? AND user_id = ?';
    const current = known !== undefined ? known : (await tx.all(`SELECT state FROM ${table} WHERE ${where}`, key))[0]?.['state'];
    if (current === undefined || current === null) {
      const columns = shared === 'app' ? 'app_name' : 'app_name, user_id';
      await tx.run(`INSERT INTO ${table} (${columns}, state, update_time) VALUES (${key.map(() => '?').join(', ')}, ?, ?)`, [...key, JSON.stringify(delta), this.#time(now)]);
      return { ...delta };
    }
    const state = { ...json(current), ...delta };
    if (Object.keys(delta).length > 0) await tx.run(`UPDATE ${table} SET state = ?, update_time = ? WHERE ${where}`, [JSON.stringify(state), this.#time(now), ...key]);
    return state;
  }

  /**
   * A time as ADK's ORM stores it: whole milliseconds on SQLite, a timestamp on PostgreSQL (through
   * a `Date`, as ADK: a fractional millisecond is cut).
   */
  #time(msSinceEpoch: number): number | Date {
    const date = new Date(msSinceEpoch);
    return this.#sqlite ? date.getTime() : date;
  }
}

function keyOf(appName: string, userId: string, sessionId: string): string {
  return JSON.stringify([appName, userId, sessionId]);
}

/** A held event in the session ADK holds: its events and its state, as a write would leave them. */
function applyInMemory(session: Session, event: Event): void {
  putEvent(session.events, event);
  session.state = { ...session.state, ...event.actions?.stateDelta };
}

/** Puts an event in a session's events: in place of one with its id, else at the end. */
function putEvent(events: Event[], event: Event): void {
  const index = events.findIndex((e) => e.id === event.id);
  if (index >= 0) events[index] = event;
  else events.push(event);
}

/** A JSON column as read: text on SQLite, parsed on PostgreSQL (`jsonb`). */
function json(value: unknown): JsonObject {
  if (value === null || value === undefined) return {};
  return (typeof value === 'string' ? JSON.parse(value) : value) as JsonObject;
}

/** A time column as read: milliseconds (SQLite), a Date (PostgreSQL), or text. */
function ms(value: unknown): number {
  if (value instanceof Date) return value.getTime();
  if (typeof value === 'number') return value;
  const n = Number(value);
  return Number.isFinite(n) ? n : Date.parse(String(value));
}

/** A state split as ADK stores it: `app:` and `user:` keys to their rows, `temp:` keys dropped. */
function splitState(state: JsonObject): { app: JsonObject; user: JsonObject; session: JsonObject } {
  const out = { app: {} as JsonObject, user: {} as JsonObject, session: {} as JsonObject };
  for (const [key, value] of Object.entries(state)) {
    if (key.startsWith(State.APP_PREFIX)) out.app[key.slice(State.APP_PREFIX.length)] = value;
    else if (key.startsWith(State.USER_PREFIX)) out.user[key.slice(State.USER_PREFIX.length)] = value;
    else if (!key.startsWith(State.TEMP_PREFIX)) out.session[key] = value;
  }
  return out;
}

/** The state a session shows: its own, then the app's and the user's under their prefixes. */
function mergeStates(app: JsonObject, user: JsonObject, session: JsonObject): JsonObject {
  const merged: JsonObject = structuredClone(session);
  for (const [k, v] of Object.entries(app)) merged[State.APP_PREFIX + k] = v;
  for (const [k, v] of Object.entries(user)) merged[State.USER_PREFIX + k] = v;
  return merged;
}

/**
 * Drops `temp:` keys from an event's delta in place (ADK's `trimTempDeltaState` replaces the object
 * and carries its write stamps over; editing it in place keeps them).
 */
function trimTempDelta(event: Event): void {
  const delta = event.actions?.stateDelta;
  if (!delta) return;
  for (const key of Object.keys(delta)) if (key.startsWith(State.TEMP_PREFIX)) delete delta[key];
}
