/**
 * The state store on SQL, through knex: SQLite (the `sqlite3` driver ADK's MikroORM brings) for
 * one process, PostgreSQL (`pg`) for a shared database. One implementation; the two engines
 * differ only in how they are opened (the SQLite file is locked to one process).
 *
 * One file on purpose: every method goes through the same private write queue, fence check and status record, which a split would have to make public.
 */
import { hostname } from 'node:os';
import knexFactory from 'knex';
import type { Knex } from 'knex';
import type { CacheEntry, CardStore, Clock, DiscoveryEvent, RolloutState, Snapshot } from 'a2a-discovery';
import type { SnapshotSummary } from 'a2a-discovery/internal';
import { compareCodeUnits, heldCardEntry, Pacer, runPaced } from 'a2a-discovery/internal';
import { systemClock, DiscoveryError, isDiscoveryError } from 'a2a-discovery';
import { PROTECTED_JOURNAL_TYPES, journalCuts, prunedCounter } from './journal.js';
import { migrate, unknownMigrations } from './migrations.js';
import { FIGURES_PREFIX, ROLLOUT_CHANGED, ROLLOUT_KEY, figuresKey, parseFigures, parseRolloutState, rolloutRuns } from './rollout-record.js';
import type { StoredCard } from './serialize.js';
import { cardParser, entryFromRow, entryToJson, eventFromJson, freshnessToJson, eventToJson, joinSnapshot, splitSnapshotSteps, type SplitSnapshot } from './serialize.js';
import type { SqliteLock } from './sqlite-lock.js';
import { WriteQueue } from './write-queue.js';
import type { CatalogEntry, CounterDeltas, JournalEntry, JournalQuery, PinRecord, RolloutFiguresRecord, StateStore, StoredRollout, StoredSnapshots, StoreKind, StoreRetention, StoreStatus, TurnsInFlight } from './state-store.js';
import { DEFAULT_RETENTION, whenNoTurn } from './state-store.js';

export interface SqlStateStoreOptions {
  kind: Exclude<StoreKind, 'memory'>;
  /** knex connection: `{ filename }` for SQLite, a connection string or object for PostgreSQL. */
  connection: Knex.StaticConnectionConfig | string;
  /** Shown in status and messages: the file, or the URL without its password. */
  location: string;
  /** PostgreSQL schema holding our tables (created when missing). Default `public`. */
  schema?: string;
  /** Monotonic and wall clock: cache-entry times are translated with it. */
  clock?: Clock;
  retention?: StoreRetention;
  /** The SQLite process lock, released on close. */
  lock?: SqliteLock;
  /** PostgreSQL pool size. Default 4. */
  poolMax?: number;
  /** How this process names itself in the journal rows it writes. Default `<hostname>:<pid>`. */
  replica?: string;
  /** The service's conversation turns: batches of card-entry writes wait for a moment with none (see {@link TurnsInFlight}). */
  turns?: TurnsInFlight;
}

/** Rows per INSERT (SQLite allows 999 bound variables per statement). */
const BATCH = 100;
/** Card-entry writes per transaction, at most. */
const MAX_BATCH = 2_000;
/**
 * Whole card entries per transaction, at most (a whole entry is its card's JSON, about 2.6 KB:
 * 2,000 of them held SQLite's write lock 300–560 ms, and a turn's history waited that long).
 */
const WHOLE_PER_BATCH = 250;
/** Journal events per transaction, at most: a first selection's 10,000 alerts were one of 2.5 s. */
const JOURNAL_EVENTS_PER_WRITE = 250;
/** Values bound to one statement of {@link insertRows}, at most: within SQLite's 32,766 and PostgreSQL's 65,535. */
const BOUND_VALUES = 1_500;
const FRESHNESS_COLUMNS = ['key', 'freshness', 'at'] as const;
const CARD_COLUMNS = ['raw_sha256', 'canonical_sha256', 'protocol_version', 'body', 'card'] as const;
const LINK_COLUMNS = ['digest', 'raw_sha256'] as const;
/** How long freshness writes (nobody waits for them) gather before they are written, at most. */
const FLUSH_DELAY_MS = 100;

/** A pending deletion of a cache entry. */
const DELETE = 'delete';
/** A pending write of a cache entry: deleted, whole, or its freshness only. */
type EntryWrite<E> = typeof DELETE | { readonly entry: E; readonly whole: boolean };

interface PendingEntryWrite<E> {
  readonly write: EntryWrite<E>;
  readonly waiters: Array<{ resolve: () => void; reject: (err: unknown) => void }>;
}

/** One cache's entries: in memory, in the engine, and the writes between. */
interface EntryTable<E> {
  readonly table: string;
  readonly freshnessTable: string;
  readonly entries: Map<string, E>;
  /** Writes not taken by a batch yet, by key, in the order their keys were first written. */
  readonly pending: Map<string, PendingEntryWrite<E>>;
  /** Keys whose whole entry is in the engine (loaded, or written by a committed batch). */
  readonly persisted: Set<string>;
  scheduled: boolean;
  timer: NodeJS.Timeout | undefined;
  readonly store: CardStore<E> & { touch(key: string, entry: E): void };
}
/** Journal rows read to find where retention cuts, per type and pass, at most. */
const CUT_STEP = 10_000;

const num = (v: unknown): number => (typeof v === 'number' ? v : Number(v));

/** A pin, inserted or replaced (SQLite ≥ 3.24 and PostgreSQL share the upsert's syntax). */
const UPSERT_PIN = `INSERT INTO a2ad_pins (session_id, digest, last_used_at, user_id, owner_client, owner_secret) VALUES (?, ?, ?, ?, ?, ?)
  ON CONFLICT (session_id) DO UPDATE SET digest = excluded.digest, last_used_at = excluded.last_used_at, user_id = excluded.user_id, owner_client = excluded.owner_client, owner_secret = excluded.owner_secret`;
/** The journal's last sequence number, raised to `?` when below it (or missing). */
const RAISE_LAST_SEQ = `INSERT INTO a2ad_state ("key", "value") VALUES ('lastSeq', ?)
  ON CONFLICT ("key") DO UPDATE SET "value" = excluded."value" WHERE CAST(a2ad_state."value" AS BIGINT) < CAST(excluded."value" AS BIGINT)`;
/** `n` counters added to (created at their value when missing). */
const addCountersSql = (n: number): string =>
  `INSERT INTO a2ad_counters (name, value) VALUES ${Array.from({ length: n }, () => '(?, ?)').join(', ')} ON CONFLICT (name) DO UPDATE SET value = a2ad_counters.value + excluded.value`;

/**
 * Opens the store: connects, runs the migrations and loads the card entries.
 * @throws DiscoveryError `ERR_STORE_UNAVAILABLE` when the engine cannot be reached or migrated.
 */
export async function openSqlStateStore(o: SqlStateStoreOptions): Promise<SqlStateStore> {
  const sqlite = o.kind === 'sqlite';
  const db = knexFactory({
    client: sqlite ? 'sqlite3' : 'pg',
    connection: o.connection,
    useNullAsDefault: sqlite,
    ...(o.schema !== undefined && { searchPath: [o.schema] }),
    pool: sqlite
      ? {
          // One connection: SQLite serializes writers anyway, and WAL lets readers (ADK's session
          // service on the same file) proceed while we write.
          min: 1,
          max: 1,
          idleTimeoutMillis: 2_147_483_647,
          afterCreate: (conn: SqliteConnection, done: (err: Error | null, conn: unknown) => void) => {
            conn.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000;', (err) => done(err, conn));
          },
        }
      : { min: 0, max: o.poolMax ?? 4 },
    acquireConnectionTimeout: 10_000,
    // The library never writes to the console: a lost connection shows in status() at the next
    // read or write, with its message.
    log: { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined },
  });
  try {
    if (o.schema !== undefined && !sqlite) await db.raw('CREATE SCHEMA IF NOT EXISTS ??', [o.schema]);
    // Expand only; a schema a newer release migrated is left as it is: replicas on PostgreSQL serve
    // and refuse to lead on it (newerSchema()); one process on a SQLite file does not run on it.
    const newer = await migrate(db, o.schema);
    if (sqlite && newer.length > 0) {
      throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `a newer release migrated it (migration${newer.length === 1 ? '' : 's'} ${newer.join(', ')}, which this build does not have): run that release, or restore a backup taken before the upgrade`, { stage: 'store' });
    }
    const store = new SqlStateStore(db, o);
    await store.load();
    return store;
  } catch (err) {
    await db.destroy().catch(() => undefined);
    await o.lock?.release();
    throw new DiscoveryError('ERR_STORE_UNAVAILABLE', `cannot open the ${o.kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'} store at ${o.location}: ${(err as Error).message}`, {
      cause: err,
      stage: 'store',
    });
  }
}

interface SqliteConnection {
  exec(sql: string, cb: (err: Error | null) => void): void;
}

export class SqlStateStore implements StateStore {
  readonly kind: Exclude<StoreKind, 'memory'>;
  readonly replica: string;
  readonly cards: CardStore;
  readonly catalogs: CardStore<CatalogEntry>;
  readonly #cardTable: EntryTable<CacheEntry>;
  readonly #catalogTable: EntryTable<CatalogEntry>;
  /** Both entry tables, for close(). */
  readonly #tables: Array<EntryTable<CacheEntry>> = [];
  readonly #db: Knex;
  readonly #o: SqlStateStoreOptions;
  readonly #clock: Clock;
  readonly #retention: Required<StoreRetention>;
  /** Card entries and catalog entries, read from memory; the engine is written through. */
  readonly #entries = new Map<string, CacheEntry>();
  readonly #catalogEntries = new Map<string, CatalogEntry>();
  /**
   * Writes run one after another, so two writes of one key never land out of order; `exclusive`
   * work (a conversation's history on the same SQLite file) runs next after the write in progress.
   */
  readonly #writeQueue = new WriteQueue();
  #ok = true;
  #lastError: string | undefined;
  #lastErrorAt: number | undefined;
  #failedWrites = 0;
  #writes = 0;
  #closed = false;
  /** The fencing epoch every leader write checks (PostgreSQL replicas); undefined: unfenced. */
  #epoch: number | undefined;
  #onFenced: ((err: DiscoveryError) => void) | undefined;
  /** A replica that does not lead: cache entries are not written through (see {@link follow}). */
  #following = false;
  #fencedWrites = 0;
  /** Journal rows deleted by a type's quota or the cap, by type (this process's). */
  readonly #pruned = new Map<string, number>();
  /** The last snapshot this store published: the next publication writes only what it lacks. */
  #lastPublished: StoredSnapshotCards | undefined;

  constructor(db: Knex, o: SqlStateStoreOptions) {
    this.kind = o.kind;
    this.replica = o.replica ?? `${hostname()}:${process.pid}`;
    this.#db = db;
    this.#o = o;
    this.#clock = o.clock ?? systemClock;
    this.#retention = { ...DEFAULT_RETENTION, ...o.retention };
    this.#cardTable = this.#entryStore('a2ad_card_entries', 'a2ad_card_freshness', this.#entries);
    this.#catalogTable = this.#entryStore('a2ad_catalog_entries', 'a2ad_catalog_freshness', this.#catalogEntries);
    this.cards = this.#cardTable.store;
    this.catalogs = this.#catalogTable.store;
  }

  /** Loads the card and catalog entries into memory (called once by the opener). */
  async load(): Promise<void> {
    // Agent cards held as the card cache holds those it accepts (the text packed, the model weakly).
    await this.#loadEntries(this.#cardTable, heldCardEntry);
    await this.#loadEntries(this.#catalogTable);
  }

  // ---- cache entries ----------------------------------------------------------------------

  /**
   * A cache's store over `table`: reads from `entries` (memory), writes behind to the engine.
   * Writes wait in `pending` (the last write of a key wins; a key with a pending write reads as
   * that write, since memory is written at once) and are flushed together in one transaction per
   * batch, at most {@link MAX_BATCH} keys ({@link WHOLE_PER_BATCH} whole entries): after the write
   * in flight when someone waits for one of them, else within {@link FLUSH_DELAY_MS}. `set` and
   * `delete` resolve when their batch commits, or reject with its failure (recorded in the status
   * as every failed write). `touch` (freshness only, issue 29: a 304, a failure) writes a small row
   * to `freshnessTable` instead of the whole entry, and returns at once: the refresh that made it
   * does not wait for the engine (a revalidation sweep runs at memory speed while its writes follow
   * in a few large transactions); its failure is recorded in the status. A key whose row is not
   * known to be in the engine (never loaded or written, deleted, or its last write failed) is
   * written whole.
   */
  #entryStore<C, V extends string>(table: string, freshnessTable: string, entries: Map<string, CacheEntry<C, V>>): EntryTable<CacheEntry<C, V>> {
    const t: EntryTable<CacheEntry<C, V>> = {
      table,
      freshnessTable,
      entries,
      pending: new Map(),
      persisted: new Set(),
      scheduled: false,
      timer: undefined,
      store: {
        get: (key) => entries.get(key),
        set: (key, entry) => {
          entries.set(key, entry);
          return this.#queue(t, key, entry.noStore ? DELETE : { entry, whole: true });
        },
        // Not awaited by anyone: a failure is recorded in the status (and the key's next write is whole).
        touch: (key, entry) => {
          entries.set(key, entry);
          void this.#queue(t, key, entry.noStore ? DELETE : { entry, whole: false }, false);
        },
        delete: (key) => {
          entries.delete(key);
          return this.#queue(t, key, DELETE);
        },
        keys: () => [...entries.keys()],
        close: () => undefined,
      },
    };
    this.#tables.push(t as unknown as EntryTable<CacheEntry>);
    return t;
  }

  /** Notes a write of `key` for the next batch; resolves when that batch is written. */
  #queue<E extends CacheEntry<unknown, string>>(t: EntryTable<E>, key: string, w: EntryWrite<E>, awaited = true): Promise<void> {
    if (this.#following) return Promise.resolve();
    if (this.#closed) return awaited ? Promise.reject(this.#closedError()) : Promise.resolve();
    const before = t.pending.get(key);
    // A freshness write over a pending whole write or deletion (or a row not known to be there) is whole.
    const write = w !== DELETE && !w.whole && (before !== undefined ? before.write === DELETE || before.write.whole : !t.persisted.has(key)) ? { entry: w.entry, whole: true } : w;
    return new Promise<void>((resolve, reject) => {
      const waiters = before?.waiters ?? [];
      if (awaited) waiters.push({ resolve, reject });
      else resolve();
      t.pending.set(key, { write, waiters });
      this.#schedule(t, waiters.length > 0);
    });
  }

  /**
   * Flushes `t` soon (a write someone awaits, or a full batch: after the write in flight) or within
   * {@link FLUSH_DELAY_MS} (freshness writes only, so that a sweep's gather in few transactions).
   */
  #schedule<E extends CacheEntry<unknown, string>>(t: EntryTable<E>, soon: boolean): void {
    const flush = (): void => {
      if (t.pending.size > 0 && !this.#closed) void this.#flush(t).catch(() => undefined);
    };
    // While a turn is in flight the batch waits (its JSON and statements, and SQLite's write lock,
    // stay out of the turn); the flag or timer stays set meanwhile, so one wait per table at a time.
    const whenIdle = (work: () => void): void => whenNoTurn(this.#o.turns, work);
    if (soon || t.pending.size >= MAX_BATCH) {
      if (t.scheduled) return;
      t.scheduled = true;
      setImmediate(() =>
        whenIdle(() => {
          t.scheduled = false;
          flush();
        }),
      );
    } else if (t.timer === undefined) {
      t.timer = setTimeout(
        () =>
          whenIdle(() => {
            t.timer = undefined;
            flush();
          }),
        FLUSH_DELAY_MS,
      );
    }
  }

  /**
   * Writes the pending writes of `t` (taken when the write queue reaches this batch, at most
   * {@link MAX_BATCH}, {@link WHOLE_PER_BATCH} of them whole) in one transaction, checked against
   * the fencing epoch.
   */
  #flush<E extends CacheEntry<unknown, string>>(t: EntryTable<E>): Promise<void> {
    let batch: Array<[string, PendingEntryWrite<E>]> = [];
    const p = this.#write(() => {
      batch = [];
      let whole = 0;
      for (const item of t.pending) {
        if (batch.length === MAX_BATCH || whole === WHOLE_PER_BATCH) break;
        batch.push(item);
        if (item[1].write !== DELETE && item[1].write.whole) whole++;
      }
      for (const [key] of batch) t.pending.delete(key);
      if (t.pending.size > 0) this.#schedule(t, [...t.pending.values()].some((w) => w.waiters.length > 0));
      if (batch.length === 0) return Promise.resolve();
      // Not in the engine until this batch commits (a freshness write meanwhile is whole).
      for (const [key] of batch) t.persisted.delete(key);
      return this.#db.transaction(async (trx) => {
        await this.#checkFence(trx);
        await this.#writeBatch(trx, t, batch);
      });
    });
    return p.then(
      () => {
        for (const [key, { write, waiters }] of batch) {
          if (write !== DELETE) t.persisted.add(key);
          for (const w of waiters) w.resolve();
        }
      },
      (err: unknown) => {
        for (const [, { waiters }] of batch) for (const w of waiters) w.reject(err);
        throw err;
      },
    );
  }

  async #writeBatch<E extends CacheEntry<unknown, string>>(trx: Knex.Transaction, t: EntryTable<E>, batch: ReadonlyArray<[string, PendingEntryWrite<E>]>): Promise<void> {
    const at = Math.round(this.#clock.wallNow());
    const gone: string[] = [];
    const whole: Array<{ key: string; entry: string; updated_at: number }> = [];
    const fresh: Array<{ key: string; freshness: string; at: number }> = [];
    for (const [key, { write }] of batch) {
      if (write === DELETE) gone.push(key);
      else if (write.whole) whole.push({ key, entry: entryToJson(write.entry, this.#clock), updated_at: at });
      else fresh.push({ key, freshness: freshnessToJson(write.entry, this.#clock, at), at });
    }
    // RFC 9111 §5.2.2.5: a no-store response is not kept in non-volatile storage (deleted).
    for (const part of chunks(gone)) await trx(t.table).whereIn('key', part).delete();
    for (const part of chunks(whole)) await trx(t.table).insert(part).onConflict('key').merge();
    // A whole entry (or none) supersedes the freshness written before it.
    const replaced = [...gone, ...whole.map((r) => r.key)];
    for (const part of chunks(replaced)) await trx(t.freshnessTable).whereIn('key', part).delete();
    // Raw SQL: this is the statement of every 304, and knex's builder costs more than the engine.
    await insertRows(trx, t.freshnessTable, FRESHNESS_COLUMNS, fresh.map((r) => [r.key, r.freshness, r.at]), 'ON CONFLICT ("key") DO UPDATE SET "freshness" = excluded."freshness", "at" = excluded."at"');
  }

  #closedError(): DiscoveryError {
    return new DiscoveryError('ERR_STORE_UNAVAILABLE', `the ${this.kind} store at ${this.#o.location} is closed`, { stage: 'store' });
  }

  async #loadEntries<C, V extends string>(t: EntryTable<CacheEntry<C, V>>, hold: (e: CacheEntry<C, V>) => CacheEntry<C, V> = (e) => e): Promise<void> {
    const rows = (await this.#db(`${t.table} as e`)
      .leftJoin(`${t.freshnessTable} as f`, 'f.key', 'e.key')
      .select('e.key', 'e.entry', 'e.updated_at', 'f.freshness')) as Array<{ key: string; entry: string; updated_at: unknown; freshness: string | null }>;
    t.entries.clear();
    t.persisted.clear();
    for (const r of rows) {
      t.entries.set(r.key, hold(entryFromRow<C, V>(r.entry, num(r.updated_at), r.freshness, this.#clock)));
      t.persisted.add(r.key);
    }
  }

  /**
   * `UPDATE a2ad_leader … WHERE epoch = mine`: refused (`ERR_STORE_FENCED`) once another replica
   * took over. The row lock it takes orders this transaction before any later takeover, which
   * waits for it: a write either commits before the new epoch exists or is refused.
   */
  async #checkFence(trx: Knex.Transaction): Promise<void> {
    const epoch = this.#epoch;
    if (epoch === undefined) return;
    const updated = await trx('a2ad_leader').where({ id: 1, epoch }).update({ epoch });
    if (num(updated) === 0) {
      throw new DiscoveryError('ERR_STORE_FENCED', `write refused: this replica led under epoch ${epoch}, and another replica has taken over since`, { stage: 'store' });
    }
  }

  // ---- replicas ---------------------------------------------------------------------------

  /**
   * Fences every leader write (publications, card entries, pruning) with `epoch`, or lifts the
   * fence (`undefined`, a follower). `onFenced` is called with each refused write.
   */
  fence(epoch: number | undefined, onFenced?: (err: DiscoveryError) => void): void {
    this.#epoch = epoch;
    this.#onFenced = onFenced;
    if (epoch !== undefined) this.#following = false;
  }

  /**
   * This replica follows (until the next {@link fence} with an epoch): its card and catalog
   * entries change in its memory only. A follower runs no source and fetches nothing, but reading
   * its cache (a metrics scrape, the endpoints API) ages entries; written through, its old copies
   * would overwrite the rows the leader keeps current, and the next leader would continue from them.
   */
  follow(): void {
    this.#following = true;
  }

  /** The epoch this store's writes are fenced with, if any. */
  get epoch(): number | undefined {
    return this.#epoch;
  }

  /**
   * Takes the leadership: increments the fencing epoch and records the holder; returns the new
   * epoch. Call it only while holding the leader lock.
   */
  async takeLeadership(holder: string): Promise<number> {
    return this.#read(async () => {
      const rows = (await this.#db('a2ad_leader')
        .where({ id: 1 })
        .update({ epoch: this.#db.raw('epoch + 1'), holder, since: Math.round(this.#clock.wallNow()) }, ['epoch'])) as Array<{ epoch: unknown }>;
      return num(rows[0]!.epoch);
    });
  }

  /** The current fencing epoch and its holder. */
  async leader(): Promise<{ epoch: number; holder: string | null }> {
    return this.#read(async () => {
      const row = (await this.#db('a2ad_leader').where({ id: 1 }).first('epoch', 'holder')) as { epoch: unknown; holder: string | null };
      return { epoch: num(row.epoch), holder: row.holder };
    });
  }

  /**
   * Rolling upgrades: why this build must not lead on this database — it records migrations this
   * build does not have (a newer release ran them) — or undefined when the schema is this build's
   * or older. Read from the database each time (a newer replica can migrate while this one runs).
   * `accepted`: newer migrations the operator lets this build lead over (a rollback).
   */
  async newerSchema(accepted: readonly string[] = []): Promise<string | undefined> {
    return this.#read(async () => {
      const unknown = (await unknownMigrations(this.#db, this.#o.schema)).filter((name) => !accepted.includes(name));
      return unknown.length === 0 ? undefined : `the database's schema is newer than this build: it has migration${unknown.length === 1 ? '' : 's'} ${unknown.join(', ')}, which a newer release ran; upgrade this replica to let it lead (or list them in replica.acceptNewerMigrations to roll back)`;
    });
  }

  /** The current version/digest pointer, as the database has it now. */
  async currentPointer(): Promise<{ version: number; digest: string } | undefined> {
    return this.#read(async () => {
      const row = (await this.#db('a2ad_state').where({ key: 'current' }).first('value')) as { value: string } | undefined;
      return row === undefined ? undefined : (JSON.parse(row.value) as { version: number; digest: string });
    });
  }

  /** Reloads the card and catalog entries from the engine (a new leader continues from its predecessor's caches). */
  async reloadEntries(): Promise<void> {
    await this.#read(() => this.load());
  }

  /** The PostgreSQL channel publications are announced on (payload: the digest). */
  get publishChannel(): string {
    return `a2ad_published:${this.#o.schema ?? 'public'}`;
  }

  /** Where the store connects, for a dedicated connection beside its pool (the leader lock, LISTEN). */
  get target(): { connection: Knex.StaticConnectionConfig | string; schema: string | undefined } {
    return { connection: this.#o.connection, schema: this.#o.schema };
  }

  // ---- snapshots --------------------------------------------------------------------------

  publishSnapshot(snapshot: Snapshot): Promise<void> {
    // Split in slices from now on, beside the writes queued before it (at 100,000 agents a second
    // of work): its place in the queue waits for it, a turn's history does not.
    const base = this.#lastPublished;
    const splitting = this.#split(snapshot, base);
    return this.#write(async () => {
      const split = (await splitting)!;
      const names = JSON.stringify(snapshot.agents.map((a) => a.localName));
      await this.#db.transaction(async (trx) => {
        await this.#checkFence(trx);
        await this.#storeSnapshot(trx, snapshot, split, base);
        await trx('a2ad_history').insert({ version: snapshot.version, digest: snapshot.digest, created_at: snapshot.createdAt, agents: names }).onConflict('version').merge();
        const cut = (await trx('a2ad_history').select('version').orderBy('version', 'desc').offset(this.#retention.history).limit(1)) as Array<{ version: unknown }>;
        if (cut[0] !== undefined) await trx('a2ad_history').where('version', '<=', num(cut[0].version)).delete();
        await trx('a2ad_state')
          .insert({ key: 'current', value: JSON.stringify({ version: snapshot.version, digest: snapshot.digest }) })
          .onConflict('key')
          .merge();
        // Delivered to every listening replica when (and only if) this transaction commits.
        if (this.kind === 'postgres') await trx.raw('SELECT pg_notify(?, ?)', [this.publishChannel, snapshot.digest]);
      });
      this.#lastPublished = { digest: snapshot.digest, version: snapshot.version, createdAt: snapshot.createdAt, hashes: split.hashes };
    }, splitting);
  }

  /**
   * A snapshot's rows, split in slices (`undefined` for none), without the cards `base` stored; a
   * failure is seen by the write that awaits it.
   */
  #split(snapshot: Snapshot | undefined, base: StoredSnapshotCards | undefined): Promise<SplitSnapshot | undefined> {
    const splitting = snapshot === undefined ? Promise.resolve(undefined) : runPaced(splitSnapshotSteps(snapshot, base?.hashes), new Pacer());
    splitting.catch(() => undefined);
    return splitting;
  }

  /**
   * Stores `snapshot` by digest with its cards (the row merged: a digest published again takes its
   * new version). Split against `base` (the last snapshot this store published), it writes only
   * what `base` lacks: the new cards, and the card links as `base`'s copied in the database, less
   * those it no longer holds, plus the new. A fleet where one agent changed writes one card where
   * it wrote every card and every link again (at 100,000 agents, 5 of 6 seconds of CPU). When
   * `base`'s row is no longer the one this store wrote (pruned, published again elsewhere, a
   * restore), the snapshot is split again whole and written as before.
   */
  async #storeSnapshot(trx: Knex.Transaction, snapshot: Snapshot, split: SplitSnapshot, base: StoredSnapshotCards | undefined): Promise<void> {
    const row = base === undefined ? undefined : ((await trx('a2ad_snapshots').where({ digest: base.digest }).first('version', 'created_at')) as { version: unknown; created_at: unknown } | undefined);
    const from = base !== undefined && row !== undefined && num(row.version) === base.version && num(row.created_at) === base.createdAt ? base : undefined;
    if (base !== undefined && from === undefined) split = await runPaced(splitSnapshotSteps(snapshot), new Pacer());
    const { agents, cards, hashes } = split;
    await insertRows(trx, 'a2ad_cards', CARD_COLUMNS, cards.map((c) => [c.rawSha256, c.canonicalSha256, c.protocolVersion, c.body, c.card]), 'ON CONFLICT ("raw_sha256") DO NOTHING');
    await trx('a2ad_snapshots').insert({ digest: snapshot.digest, version: snapshot.version, created_at: snapshot.createdAt, agents }).onConflict('digest').merge();
    let linked: Iterable<string> = hashes;
    if (from !== undefined) {
      if (from.digest !== snapshot.digest) await trx.raw(COPY_CARD_LINKS, [snapshot.digest, from.digest]);
      const gone = [...from.hashes].filter((h) => !hashes.has(h));
      for (const part of chunks(gone)) await trx('a2ad_snapshot_cards').where({ digest: snapshot.digest }).whereIn('raw_sha256', part).delete();
      linked = cards.map((c) => c.rawSha256);
    }
    const links: Array<[string, string]> = [];
    for (const h of linked) links.push([snapshot.digest, h]);
    await insertRows(trx, 'a2ad_snapshot_cards', LINK_COLUMNS, links, 'ON CONFLICT ("digest", "raw_sha256") DO NOTHING');
  }

  // ---- the staged rollout -----------------------------------------------------------------

  putRollout(state: RolloutState | undefined, candidate?: Snapshot): Promise<void> {
    const base = this.#lastPublished;
    const splitting = this.#split(candidate, base);
    return this.#write(async () => {
      const split = await splitting;
      await this.#db.transaction(async (trx) => {
        await this.#checkFence(trx);
        const before = parseRolloutState(((await trx('a2ad_state').where({ key: ROLLOUT_KEY }).first('value')) as { value: string } | undefined)?.value);
        // The figures of another rollout, or of one that ended, are of no use to anyone.
        if (state === undefined || state.id !== before?.id || !rolloutRuns(state)) await trx('a2ad_state').where('key', 'like', `${FIGURES_PREFIX}%`).delete();
        // Stored once: a later decision of the same candidate writes its state only.
        if (candidate !== undefined && split !== undefined && (await trx('a2ad_snapshots').where({ digest: candidate.digest }).first('digest')) === undefined) {
          await this.#storeSnapshot(trx, candidate, split, base);
        }
        if (state === undefined) await trx('a2ad_state').where({ key: ROLLOUT_KEY }).delete();
        else await trx('a2ad_state').insert({ key: ROLLOUT_KEY, value: JSON.stringify(state) }).onConflict('key').merge();
        // The followers take it at once (at their next poll when the notification is lost).
        if (this.kind === 'postgres') await trx.raw('SELECT pg_notify(?, ?)', [this.publishChannel, ROLLOUT_CHANGED]);
      });
    }, splitting);
  }

  async rollout(known?: (digest: string) => Snapshot | undefined): Promise<StoredRollout | undefined> {
    const row = await this.#read(async () => (await this.#db('a2ad_state').where({ key: ROLLOUT_KEY }).first('value')) as { value: string } | undefined);
    const state = parseRolloutState(row?.value);
    if (state === undefined) return undefined;
    const candidate = rolloutRuns(state) ? (known?.(state.candidate) ?? (await this.getSnapshot(state.candidate))) : undefined;
    return { state, ...(candidate !== undefined && { candidate }) };
  }

  putRolloutFigures(figures: RolloutFiguresRecord): Promise<void> {
    const row = { key: figuresKey(figures.replica), value: JSON.stringify(figures) };
    return this.#write(() => this.#db('a2ad_state').insert(row).onConflict('key').merge());
  }

  async rolloutFigures(): Promise<RolloutFiguresRecord[]> {
    const rows = await this.#read(async () => (await this.#db('a2ad_state').where('key', 'like', `${FIGURES_PREFIX}%`).select('value')) as Array<{ value: string }>);
    return rows.map((r) => parseFigures(r.value)).filter((f): f is RolloutFiguresRecord => f !== undefined);
  }

  async loadSnapshots(): Promise<StoredSnapshots> {
    return this.#read(async () => {
      const rows = (await this.#db('a2ad_snapshots').select('digest', 'version', 'created_at', 'agents').orderBy('version', 'desc')) as SnapshotRow[];
      const cards = await this.#cardsOf(undefined);
      const snapshots = rows.map((r) => this.#join(r, cards)).filter((s): s is Snapshot => s !== undefined);
      const pointer = await this.#db('a2ad_state').where({ key: 'current' }).first('value');
      const currentDigest = pointer === undefined ? undefined : (JSON.parse((pointer as { value: string }).value) as { digest: string }).digest;
      const history = ((await this.#db('a2ad_history').select('version', 'digest', 'created_at', 'agents').orderBy('version', 'asc')) as SnapshotRow[]).map(
        (r): SnapshotSummary => ({ version: num(r.version), digest: r.digest, createdAt: num(r.created_at), agents: JSON.parse(r.agents) as string[] }),
      );
      return { current: snapshots.find((s) => s.digest === currentDigest), snapshots, history };
    });
  }

  async getSnapshot(digest: string): Promise<Snapshot | undefined> {
    return this.#read(async () => {
      const row = (await this.#db('a2ad_snapshots').where({ digest }).first('digest', 'version', 'created_at', 'agents')) as SnapshotRow | undefined;
      if (row === undefined) return undefined;
      return this.#join(row, await this.#cardsOf(digest));
    });
  }

  async #cardsOf(digest: string | undefined): Promise<Map<string, StoredCard>> {
    const q = this.#db('a2ad_cards').select('a2ad_cards.raw_sha256', 'canonical_sha256', 'protocol_version', 'body', 'card');
    if (digest !== undefined) q.join('a2ad_snapshot_cards', 'a2ad_snapshot_cards.raw_sha256', 'a2ad_cards.raw_sha256').where('a2ad_snapshot_cards.digest', digest);
    const rows = (await q) as Array<{ raw_sha256: string; canonical_sha256: string; protocol_version: StoredCard['protocolVersion']; body: string | null; card: string }>;
    return new Map(rows.map((r) => [r.raw_sha256, { rawSha256: r.raw_sha256, canonicalSha256: r.canonical_sha256, protocolVersion: r.protocol_version, body: r.body, card: r.card }]));
  }

  #join(row: SnapshotRow, cards: Map<string, StoredCard>): Snapshot | undefined {
    const parse = cardParser();
    return joinSnapshot({ digest: row.digest, version: num(row.version), createdAt: num(row.created_at), agents: row.agents }, (hash) => {
      const c = cards.get(hash);
      return c === undefined ? undefined : parse(c);
    });
  }

  async pruneSnapshots(): Promise<string[]> {
    let deleted: string[] = [];
    await this.#write(() =>
      this.#db.transaction(async (trx) => {
        await this.#checkFence(trx);
        const pointer = (await trx('a2ad_state').where({ key: 'current' }).first('value')) as { value: string } | undefined;
        const keep = new Set<string>();
        if (pointer) keep.add((JSON.parse(pointer.value) as { digest: string }).digest);
        const rollout = parseRolloutState(((await trx('a2ad_state').where({ key: ROLLOUT_KEY }).first('value')) as { value: string } | undefined)?.value);
        if (rollout !== undefined && rolloutRuns(rollout)) keep.add(rollout.candidate);
        for (const r of (await trx('a2ad_pins').distinct('digest')) as Array<{ digest: string }>) keep.add(r.digest);
        for (const r of (await trx('a2ad_snapshots').select('digest').orderBy('version', 'desc').limit(this.#retention.snapshots)) as Array<{ digest: string }>) keep.add(r.digest);
        const all = (await trx('a2ad_snapshots').select('digest')) as Array<{ digest: string }>;
        deleted = all.map((r) => r.digest).filter((d) => !keep.has(d));
        for (const part of chunks(deleted)) {
          await trx('a2ad_snapshot_cards').whereIn('digest', part).delete();
          await trx('a2ad_snapshots').whereIn('digest', part).delete();
        }
        if (deleted.length > 0) await trx('a2ad_cards').whereNotIn('raw_sha256', trx('a2ad_snapshot_cards').select('raw_sha256')).delete();
      }),
    );
    return deleted;
  }

  // ---- pins -------------------------------------------------------------------------------

  putPin(pin: PinRecord): Promise<void> {
    // One statement, its text fixed: a pin is written at each turn of its session (knex's query
    // builder cost more than the statement itself).
    const values = [pin.sessionId, pin.digest, Math.round(pin.lastUsedAtWall), pin.userId, pin.ownerClient ?? null, pin.ownerSecret ?? null];
    return this.#write(() => this.#db.raw(UPSERT_PIN, values));
  }

  async pin(sessionId: string): Promise<PinRecord | undefined> {
    return this.#read(async () => (await this.#pinRows(this.#db('a2ad_pins').where({ session_id: sessionId })))[0]);
  }

  deletePin(sessionId: string): Promise<void> {
    return this.#write(() => this.#db('a2ad_pins').where({ session_id: sessionId }).delete());
  }

  async pins(sessionIds?: readonly string[]): Promise<PinRecord[]> {
    if (sessionIds === undefined) return this.#read(() => this.#pinRows(this.#db('a2ad_pins')));
    return this.#read(async () => {
      const out: PinRecord[] = [];
      for (const part of chunks(sessionIds)) out.push(...(await this.#pinRows(this.#db('a2ad_pins').whereIn('session_id', part))));
      return out;
    });
  }

  async #pinRows(q: Knex.QueryBuilder): Promise<PinRecord[]> {
    {
      const rows = (await q.select('*')) as Array<{
        session_id: string;
        digest: string;
        last_used_at: unknown;
        user_id: string;
        owner_client: string | null;
        owner_secret: string | null;
      }>;
      return rows.map((r) => ({
        sessionId: r.session_id,
        digest: r.digest,
        lastUsedAtWall: num(r.last_used_at),
        userId: r.user_id,
        ...(r.owner_client !== null && { ownerClient: r.owner_client }),
        ...(r.owner_secret !== null && { ownerSecret: r.owner_secret }),
      }));
    }
  }

  // ---- journal and counters ---------------------------------------------------------------

  appendEvents(events: readonly DiscoveryEvent[]): Promise<void> {
    if (events.length === 0) return Promise.resolve();
    // In several transactions when many (a turn's history goes between them); a part written
    // before another failed is ignored when the events are given again (by replica and seq).
    if (events.length > JOURNAL_EVENTS_PER_WRITE) {
      const parts: Array<Promise<void>> = [];
      for (let i = 0; i < events.length; i += JOURNAL_EVENTS_PER_WRITE) parts.push(this.appendEvents(events.slice(i, i + JOURNAL_EVENTS_PER_WRITE)));
      return Promise.all(parts).then(() => undefined);
    }
    const oldest = Math.round(journalCuts([], this.#retention, this.#clock.wallNow()).horizon);
    const replica = this.replica;
    const pruned = new Map<string, number>();
    return this.#write(async () => {
      pruned.clear();
      await this.#db.transaction(async (trx) => {
        // Rows per type, kept in `a2ad_journal_counts` by every write in its own transaction.
        const delta = new Map<string, number>();
        const tally = (rows: ReadonlyArray<{ type: string }>, sign: 1 | -1): void => {
          for (const { type } of rows) delta.set(type, (delta.get(type) ?? 0) + sign);
        };
        for (const part of chunks(events)) {
          const added = (await trx('a2ad_journal')
            .insert(part.map((e) => ({ replica, seq: e.seq, at: Math.round(e.at), type: e.type, event: eventToJson(e) })))
            .onConflict(['replica', 'seq'])
            .ignore()
            .returning('type')) as Array<{ type: string }>;
          tally(added, 1);
        }
        tally(await deleteReturningType(trx, trx('a2ad_journal').where('at', '<', oldest)), -1);
        await this.#retainJournal(trx, delta, pruned);
        // In one order (by name) in every replica's transactions: two never wait on each other's rows.
        for (const [type, n] of [...delta].sort(([a], [b]) => compareCodeUnits(a, b))) {
          if (n === 0) continue;
          await trx('a2ad_journal_counts')
            .insert({ type, n })
            .onConflict('type')
            .merge({ n: trx.raw('?? + ?', ['a2ad_journal_counts.n', n]) });
        }
        for (const [type, n] of [...pruned].sort(([a], [b]) => compareCodeUnits(a, b))) {
          await trx('a2ad_counters')
            .insert({ name: prunedCounter(type), value: n })
            .onConflict('name')
            .merge({ value: trx.raw('?? + ?', ['a2ad_counters.value', n]) });
        }
      });
      for (const [type, n] of pruned) this.#pruned.set(type, (this.#pruned.get(type) ?? 0) + n);
    });
  }

  /**
   * journal.ts's `journalCuts` (after the age bound) as queries that stay cheap on a full
   * journal: the rows per type are read from `a2ad_journal_counts` (plus this write's `delta`), so
   * nothing is counted or scanned unless a bound is exceeded, and then only the excess is read, on
   * the (type, id) index: a type over its quota loses its oldest rows; over the total cap, the
   * oldest rows of the unprotected kinds go first (the oldest `excess` ids of each such type,
   * merged), the protected kinds' only when none is left. Deleted rows are counted per type into
   * `pruned` and taken off `delta`.
   */
  async #retainJournal(trx: Knex.Transaction, delta: Map<string, number>, pruned: Map<string, number>): Promise<void> {
    const counts = new Map<string, number>();
    for (const r of (await trx('a2ad_journal_counts').select('type', 'n')) as Array<{ type: string; n: unknown }>) counts.set(r.type, num(r.n));
    for (const [type, n] of delta) counts.set(type, (counts.get(type) ?? 0) + n);
    // Deletes the rows of `type` up to and including position `upTo`, counted.
    const cut = async (type: string, upTo: number): Promise<void> => {
      const n = num(await trx('a2ad_journal').where({ type }).andWhere('id', '<=', upTo).delete());
      if (n === 0) return;
      pruned.set(type, (pruned.get(type) ?? 0) + n);
      delta.set(type, (delta.get(type) ?? 0) - n);
      counts.set(type, counts.get(type)! - n);
    };
    const oldestIds = async (type: string, limit: number): Promise<number[]> =>
      ((await trx('a2ad_journal').select('id').where({ type }).orderBy('id', 'asc').limit(limit)) as Array<{ id: unknown }>).map((r) => num(r.id));
    // The rule's numbers (journal.ts's journalCuts), asked again after each cut.
    const cuts = () => journalCuts(counts, this.#retention, 0);
    const quotaOver = (type: string): number => cuts().quota.get(type) ?? 0;
    for (const type of [...counts.keys()]) {
      for (let over = quotaOver(type); over > 0; over = quotaOver(type)) {
        const ids = await oldestIds(type, Math.min(over, CUT_STEP));
        if (ids.length === 0) break;
        await cut(type, ids.at(-1)!);
        if (quotaOver(type) === over) break;
      }
    }
    // The oldest `excess` rows of `types` in journal order (at most CUT_STEP at a time): the
    // oldest of each type, merged; each type cut at the last position taken.
    const cutOldest = async (types: readonly string[], excess: number): Promise<void> => {
      const step = Math.min(excess, CUT_STEP);
      const ids: number[] = [];
      for (const type of types) ids.push(...(await oldestIds(type, step)));
      if (ids.length === 0) return;
      ids.sort((a, b) => a - b);
      const upTo = ids[Math.min(step, ids.length) - 1]!;
      for (const type of types) await cut(type, upTo);
    };
    const over = (): number => cuts().cap;
    const present = (keep: (type: string) => boolean): string[] => [...counts].filter(([t, n]) => n > 0 && keep(t)).map(([t]) => t);
    const protectedTypes = new Set(PROTECTED_JOURNAL_TYPES);
    for (const kinds of [(t: string) => !protectedTypes.has(t), () => true]) {
      for (let excess = over(), types = present(kinds); excess > 0 && types.length > 0; excess = over(), types = present(kinds)) {
        const before = excess;
        await cutOldest(types, excess);
        if (over() === before) break;
      }
    }
  }

  async journal(options: JournalQuery = {}): Promise<JournalEntry[]> {
    return this.#read(async () => {
      const q = this.#db('a2ad_journal').select('id', 'replica', 'event').where('id', '>', options.after ?? 0).orderBy('id', 'desc');
      if (options.before !== undefined) q.where('id', '<', options.before);
      if (options.types !== undefined) q.whereIn('type', [...options.types]);
      if (options.limit !== undefined) q.limit(options.limit);
      const rows = (await q) as Array<{ id: unknown; replica: string; event: string }>;
      return rows.reverse().map((r) => ({ id: num(r.id), replica: r.replica, event: eventFromJson(r.event) }));
    });
  }

  async events(options: JournalQuery = {}): Promise<DiscoveryEvent[]> {
    return (await this.journal(options)).map((e) => e.event);
  }

  async lastSeq(): Promise<number> {
    return this.#read(async () => {
      const max = (await this.#db('a2ad_journal').max({ seq: 'seq' }).first()) as { seq: unknown } | undefined;
      const stored = (await this.#db('a2ad_state').where({ key: 'lastSeq' }).first('value')) as { value: string } | undefined;
      return Math.max(max?.seq == null ? 0 : num(max.seq), stored === undefined ? 0 : Number(stored.value));
    });
  }

  setLastSeq(seq: number): Promise<void> {
    // Raised, never lowered, in one statement.
    return this.#write(() => this.#db.raw(RAISE_LAST_SEQ, [String(seq)]));
  }

  addCounters(deltas: CounterDeltas): Promise<void> {
    const rows = Object.entries(deltas)
      .filter(([, n]) => n !== 0)
      .map(([name, value]) => ({ name, value }));
    if (rows.length === 0) return Promise.resolve();
    // One statement for them all (atomic as a transaction was), its rows in one order by name.
    rows.sort((a, b) => compareCodeUnits(a.name, b.name));
    return this.#write(() => this.#db.raw(addCountersSql(rows.length), rows.flatMap((r) => [r.name, r.value])));
  }

  async counters(): Promise<Record<string, number>> {
    return this.#read(async () => {
      const rows = (await this.#db('a2ad_counters').select('name', 'value')) as Array<{ name: string; value: unknown }>;
      return Object.fromEntries(rows.map((r) => [r.name, num(r.value)]));
    });
  }

  // ---- state ------------------------------------------------------------------------------

  status(): StoreStatus {
    return {
      kind: this.kind,
      location: this.#o.location,
      ok: this.#ok,
      ...(this.#lastError !== undefined && { lastError: this.#lastError }),
      ...(this.#lastErrorAt !== undefined && { lastErrorAt: this.#lastErrorAt }),
      failedWrites: this.#failedWrites,
      writes: this.#writes,
      ...(this.#fencedWrites > 0 && { fencedWrites: this.#fencedWrites }),
      ...(this.#pruned.size > 0 && { journalPruned: Object.fromEntries(this.#pruned) }),
    };
  }

  /** See {@link StateStore.exclusive}. PostgreSQL's row locks need no gate, SQLite's file lock does. */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    if (this.kind !== 'sqlite') return work();
    // A user waits on it (a turn's history): after the write in progress, ahead of queued batches.
    return this.#writeQueue.run(work, { urgent: true });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // The entries written so far are flushed first (their failure is recorded like any other).
    for (const t of this.#tables) {
      clearTimeout(t.timer);
      for (let n = 0; n < t.pending.size; n += WHOLE_PER_BATCH) void this.#flush(t).catch(() => undefined);
    }
    this.#closed = true;
    await this.#writeQueue.idle();
    await this.#db.destroy();
    await this.#o.lock?.release();
  }

  /** Queues a write after the previous ones; a failure is recorded and rethrown. */
  #write(op: () => Promise<unknown>, ready?: Promise<unknown>): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closedError());
    const p = this.#writeQueue.run(op, ready === undefined ? {} : { ready }).then(
      () => {
        this.#writes++;
        this.#ok = true;
      },
      (err: unknown) => {
        if (isDiscoveryError(err) && err.code === 'ERR_STORE_FENCED') {
          // Not a failure of the store: this replica is no longer the leader.
          this.#fencedWrites++;
          this.#onFenced?.(err);
          throw err;
        }
        this.#failedWrites++;
        throw this.#failed(err, 'write');
      },
    );
    return p;
  }

  async #read<T>(op: () => Promise<T>): Promise<T> {
    try {
      const value = await op();
      // The store answered: up again, as status() and `a2a_discovery_store_up` say ("its last read
      // or write"). A follower only reads; waiting for a write kept it degraded after an outage.
      this.#ok = true;
      return value;
    } catch (err) {
      throw this.#failed(err, 'read');
    }
  }

  #failed(err: unknown, what: string): DiscoveryError {
    this.#ok = false;
    this.#lastError = (err as Error).message;
    this.#lastErrorAt = this.#clock.wallNow();
    return new DiscoveryError('ERR_STORE_UNAVAILABLE', `the ${this.kind} store at ${this.#o.location} failed to ${what}: ${(err as Error).message}`, { cause: err, stage: 'store' });
  }
}

/** A snapshot this store wrote, as its row holds it: the cards it links (raw hashes). */
interface StoredSnapshotCards {
  readonly digest: string;
  readonly version: number;
  readonly createdAt: number;
  readonly hashes: ReadonlySet<string>;
}

/** A snapshot's card links copied to another digest (`?` the new digest, then the one copied). */
const COPY_CARD_LINKS =
  'INSERT INTO a2ad_snapshot_cards (digest, raw_sha256) SELECT CAST(? AS varchar(64)), raw_sha256 FROM a2ad_snapshot_cards WHERE digest = ? ON CONFLICT (digest, raw_sha256) DO NOTHING';

interface SnapshotRow {
  digest: string;
  version: unknown;
  created_at: unknown;
  agents: string;
}

/**
 * Runs a delete and returns the deleted rows' types (RETURNING: SQLite 3.35+ and PostgreSQL; knex
 * gives only a count for a SQLite delete).
 */
async function deleteReturningType(trx: Knex.Transaction, q: Knex.QueryBuilder): Promise<Array<{ type: string }>> {
  const { sql, bindings } = q.delete().toSQL();
  const result = (await trx.raw(`${sql} RETURNING ??`, [...bindings, 'type'])) as Array<{ type: string }> | { rows: Array<{ type: string }> };
  return Array.isArray(result) ? result : result.rows;
}

/**
 * `rows` inserted into `table` by raw SQL, as many to a statement as {@link BOUND_VALUES} allows,
 * each statement ended by `conflict` (its ON CONFLICT clause): for the writes of many small rows,
 * where knex's builder costs more than the engine (100,000 card links took 3 s through it).
 */
async function insertRows(trx: Knex.Transaction, table: string, columns: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number | null>>, conflict: string): Promise<void> {
  const per = Math.max(1, Math.floor(BOUND_VALUES / columns.length));
  const head = `INSERT INTO ?? (${columns.map(() => '??').join(', ')}) VALUES `;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  for (let i = 0; i < rows.length; i += per) {
    const part = rows.slice(i, i + per);
    const bindings: Array<string | number | null> = [table, ...columns];
    for (const r of part) bindings.push(...r);
    await trx.raw(`${head}${part.map(() => tuple).join(', ')} ${conflict}`, bindings);
  }
}

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += BATCH) out.push(items.slice(i, i + BATCH));
  return out;
}
