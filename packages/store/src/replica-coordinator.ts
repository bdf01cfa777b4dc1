/**
 * Several replicas on one PostgreSQL: one leader refreshes, every replica serves.
 *
 * - **Leader election**: a session-level advisory lock (`pg_try_advisory_lock`) held on a
 *   dedicated connection, beside the store's pool. It is released by PostgreSQL when that
 *   session ends: the process dies (its socket closes), the connection is lost, or the session
 *   stays idle past `leaseMs` (`idle_session_timeout`: a stalled leader stops heartbeating).
 * - **Fencing**: each new leader increments the epoch row (`a2ad_leader`) and fences the store's
 *   leader writes with it (`UPDATE … WHERE epoch = mine` in each write's transaction), so a paused
 *   former leader's late write is refused (`ERR_STORE_FENCED`) instead of overwriting newer state.
 * - **Publication**: the leader's publication transaction ends with `pg_notify(channel, digest)`;
 *   followers LISTEN on the same dedicated connection and, on a notification or every `pollMs`
 *   (a lost notification), read the current pointer and adopt the stored snapshot (its cards'
 *   bytes included), with no request to any peer.
 *
 * - **Staged rollouts** (docs/deployment.md "Rollouts across replicas"): the leader's store writes
 *   the rollout and notifies the channel; at each sync a follower takes it
 *   ({@link ReplicaTarget.rollout}) and writes its turn figures, which the leader reads at each heartbeat.
 *
 * Followers retry the lock every `leaderRetryMs`; a leader heartbeats on its connection as often.
 *
 * - **Stepping down** (a draining replica, {@link ReplicaCoordinator.stepDown}): the leader stops
 *   discovery, releases the lock and notifies the channel; followers try the lock on that
 *   notification, so one takes over at once instead of at its next try or after the lease.
 *
 * - **The leader's address**: a new leader writes its `advertiseUrl` in the epoch row (`url`), and
 *   writes the row again (holder and url, `WHERE epoch = mine`) at each heartbeat, so a row planted
 *   by someone with write access to the database lasts at most `leaderRetryMs`; followers read it with each poll ({@link ReplicaStatus.leaderUrl}) and answer the leader's lists
 *   from it (the service's follower proxy).
 * - **Rolling upgrades**: before each try for the lock, a follower reads the schema's migrations; when
 *   the database has one this build does not (a newer release ran it), it does not try: it keeps
 *   following and serving, and says why ({@link ReplicaStatus.refusesToLead}). A leader keeps
 *   leading when a newer replica migrates under it (migrations only add: migrations.ts).
 */
import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import type { Knex } from 'knex';
import type { Snapshot } from 'a2a-discovery';
import { REPLICA_DEFAULTS } from 'a2a-discovery/config';
import type { SqlStateStore } from './sql-state-store.js';

/** What the coordinator drives: the service's discovery loop, in effect. */
export interface ReplicaTarget {
  /** The snapshot served now. */
  current(): Snapshot | undefined;
  /** Makes a stored snapshot current (a follower). */
  adopt(snapshot: Snapshot): Promise<unknown>;
  /** This replica leads now: start (or resume) discovery. Awaited by {@link ReplicaCoordinator.start} only. */
  lead(epoch: number): Promise<void>;
  /** This replica no longer leads: stop refreshing (keep serving). */
  follow(reason: string): Promise<void>;
  /**
   * Staged rollouts across replicas (optional): called after each sync of a follower (a poll or a
   * notification: it takes the leader's rollout and writes its own turn figures) and after each
   * heartbeat of the leader (it reads the followers' figures). A failure is logged; coordination
   * goes on.
   */
  rollout?(role: ReplicaRole): Promise<void>;
}

export interface ReplicaOptions {
  store: SqlStateStore;
  target: ReplicaTarget;
  /** How this replica is named in `a2ad_leader.holder`. Default `<hostname>:<pid>`. */
  id?: string;
  /** Followers try the lock this often; the leader heartbeats as often. Default 2,000. */
  leaderRetryMs?: number;
  /** Followers read the current pointer this often, in case a notification was lost. Default 5,000. */
  pollMs?: number;
  /**
   * A leader's connection idle this long is closed by PostgreSQL (`idle_session_timeout`), which
   * releases its lock: the bound on a stalled leader. At least `2 × leaderRetryMs + 1,000`. Default 10,000.
   */
  leaseMs?: number;
  /** Where the other replicas reach this one's HTTP API: read when it takes the lead and at each heartbeat, and written in `a2ad_leader.url`. */
  advertiseUrl?: () => string | undefined;
  /**
   * Rolling back an upgrade: migrations of a newer release this replica may lead over (it
   * refuses to lead over any other migration it does not have). Default none.
   */
  acceptNewerMigrations?: readonly string[];
  /** Log lines: leadership taken and lost, connection lost and back. */
  log?: (level: 'info' | 'warn', message: string, detail?: Record<string, unknown>) => void;
}

export type ReplicaRole = 'leader' | 'follower';

/** What `/readyz` and `/metrics` say about this replica. */
export interface ReplicaStatus {
  readonly id: string;
  readonly role: ReplicaRole;
  /** This replica's epoch when it leads, else the last epoch read from the database. */
  readonly epoch: number;
  /** Whether the dedicated connection (lock, LISTEN) is up. */
  readonly connected: boolean;
  /** The digest served here. */
  readonly digest: string | undefined;
  /** The database's current digest, as last read. */
  readonly storeDigest: string | undefined;
  /** True when the two digests agree. */
  readonly inSync: boolean;
  /** How long this replica has served another digest than the database's (0 in sync), ms. */
  readonly lagMs: number;
  /** Publications adopted from the database. */
  readonly adopted: number;
  /** Times this replica took the leadership. */
  readonly takeovers: number;
  /** The leader's id (`a2ad_leader.holder`): this replica's when it leads, else as last read; null before any leader. */
  readonly leader: string | null;
  /** The leader's advertised URL (`a2ad_leader.url`), as last read; null when it advertised none. */
  readonly leaderUrl: string | null;
  /** Why this replica does not try to lead (the database's schema is newer than this build's), or null. */
  readonly refusesToLead: string | null;
}

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
  on(event: 'notification', listener: (n: { channel: string; payload?: string }) => void): void;
  on(event: 'error' | 'end', listener: (err?: Error) => void): void;
}

type PgClientConstructor = new (config: Record<string, unknown>) => PgClient;

const require = createRequire(import.meta.url);

/** The payload of the notification a leader sends on the publish channel as it steps down. */
const STEP_DOWN = 'a2ad:step-down';

export class ReplicaCoordinator {
  readonly id: string;
  readonly #o: ReplicaOptions;
  readonly #store: SqlStateStore;
  readonly #retryMs: number;
  readonly #pollMs: number;
  readonly #leaseMs: number;
  #client: PgClient | undefined;
  #role: ReplicaRole = 'follower';
  #epoch = 0;
  #storeDigest: string | undefined;
  #behindSince: number | undefined;
  #lastPollAt = Number.NEGATIVE_INFINITY;
  #adopted = 0;
  #takeovers = 0;
  #leader: { holder: string | null; url: string | null } = { holder: null, url: null };
  #refusesToLead: string | undefined;
  #leading: Promise<void> | undefined;
  #chain: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #syncQueued = false;
  #closed = false;

  constructor(o: ReplicaOptions) {
    this.#o = o;
    this.#store = o.store;
    this.id = o.id ?? `${hostname()}:${process.pid}`;
    this.#retryMs = Math.max(10, o.leaderRetryMs ?? REPLICA_DEFAULTS.leaderRetryMs);
    this.#pollMs = Math.max(10, o.pollMs ?? REPLICA_DEFAULTS.pollMs);
    this.#leaseMs = Math.max(o.leaseMs ?? REPLICA_DEFAULTS.leaseMs, 2 * this.#retryMs + 1_000);
  }

  /** Connects, tries the lock once (leading at once when it is free) and keeps trying. */
  async start(): Promise<void> {
    // A follower until the lock is ours: its cache entries stay in its memory.
    this.#store.follow();
    await this.#enqueue(() => this.#tick());
    // Heartbeats run during the first cycle too: a slow one must not let the lease run out.
    this.#arm();
    await this.#leading;
  }

  get role(): ReplicaRole {
    return this.#role;
  }

  status(): ReplicaStatus {
    const digest = this.#o.target.current()?.digest;
    const inSync = this.#storeDigest === undefined || digest === this.#storeDigest;
    return {
      id: this.id,
      role: this.#role,
      epoch: this.#role === 'leader' ? (this.#store.epoch ?? this.#epoch) : this.#epoch,
      connected: this.#client !== undefined,
      digest,
      storeDigest: this.#storeDigest,
      inSync,
      lagMs: inSync || this.#behindSince === undefined ? 0 : Math.max(0, Date.now() - this.#behindSince),
      adopted: this.#adopted,
      takeovers: this.#takeovers,
      leader: this.#role === 'leader' ? this.id : this.#leader.holder,
      leaderUrl: this.#leader.url,
      refusesToLead: this.#refusesToLead ?? null,
    };
  }

  /** Reads the database's current pointer now and adopts it (tests, and a notification). */
  sync(): Promise<void> {
    return this.#enqueue(() => this.#sync());
  }

  /** Stops trying, and releases the lock (closing the dedicated connection) so another replica takes over at once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#chain.catch(() => undefined);
    await this.#drop();
  }

  /**
   * Leaves the election for good (a draining replica): a leader stops discovery (`target.follow`),
   * releases the lock and notifies the followers, which try the lock at once; then, as {@link close},
   * the dedicated connection closes. Resolves true when this replica was leading.
   */
  async stepDown(reason: string): Promise<boolean> {
    if (this.#closed) return false;
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#chain.catch(() => undefined);
    const leading = this.#role === 'leader';
    if (leading) {
      this.#role = 'follower';
      this.#store.follow();
      await this.#o.target.follow(reason).catch(() => undefined);
      const client = this.#client;
      if (client) {
        try {
          await client.query('SELECT pg_advisory_unlock(hashtext($1))', [this.#lockName()]);
          await client.query('SELECT pg_notify($1, $2)', [this.#store.publishChannel, STEP_DOWN]);
        } catch (err) {
          // Closing the connection below releases the lock all the same; the followers find it at their next try.
          this.#log('warn', 'could not notify the other replicas of the step-down', { err: (err as Error).message });
        }
      }
      this.#log('info', 'this replica stepped down as leader', { reason, epoch: this.#epoch });
    }
    await this.#drop();
    return leading;
  }

  #enqueue<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(work, work);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  #arm(): void {
    if (this.#closed) return;
    const every = this.#role === 'leader' ? this.#retryMs : Math.min(this.#retryMs, this.#pollMs);
    this.#timer = setTimeout(() => {
      void this.#enqueue(() => this.#tick()).finally(() => this.#arm());
    }, every);
    this.#timer.unref();
  }

  async #tick(): Promise<void> {
    if (this.#closed) return;
    const client = await this.#connected();
    if (!client) return;
    try {
      if (this.#role === 'leader') {
        // The heartbeat: keeps the session (and the lock) from idling out, and writes the leader row
        // again (holder and URL, fenced by this leader's epoch), so a row someone else wrote lasts at
        // most one heartbeat. A row whose epoch moved on is another leader's: this one steps back.
        let fenced = false;
        try {
          const url = this.#o.advertiseUrl?.() ?? null;
          const rows = (await client.query('UPDATE a2ad_leader SET holder = $1, url = $2 WHERE id = 1 AND epoch = $3 RETURNING epoch', [this.id, url, this.#epoch])).rows;
          fenced = rows.length === 0;
          if (!fenced) this.#leader = { holder: this.id, url };
        } catch (err) {
          await this.#drop();
          await this.#demote(`the leader's heartbeat failed: ${(err as Error).message}`);
          return;
        }
        if (fenced) await this.#demote(`the leader row's epoch is no longer ${this.#epoch}: another replica leads`);
        else await this.#rollout('leader');
        return;
      }
      if (await this.#refuses()) {
        if (Date.now() - this.#lastPollAt >= this.#pollMs) await this.#sync();
        return;
      }
      const got = await client.query('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [this.#lockName()]);
      if (got.rows[0]?.ok === true) {
        await this.#takeOver(client);
        return;
      }
      if (Date.now() - this.#lastPollAt >= this.#pollMs) await this.#sync();
    } catch (err) {
      this.#log('warn', 'replica coordination failed; retrying', { err: (err as Error).message });
    }
  }

  async #takeOver(client: PgClient): Promise<void> {
    let epoch: number;
    try {
      epoch = await this.#store.takeLeadership(this.id);
    } catch (err) {
      await client.query('SELECT pg_advisory_unlock(hashtext($1))', [this.#lockName()]).catch(() => undefined);
      throw err;
    }
    this.#store.fence(epoch, (err) => void this.#enqueue(() => this.#demote(err.message)));
    this.#epoch = epoch;
    // Where followers reach the leader: written under this epoch only (a later leader's row stays).
    const url = this.#o.advertiseUrl?.() ?? null;
    await client.query('UPDATE a2ad_leader SET url = $1 WHERE id = 1 AND epoch = $2', [url, epoch]);
    this.#leader = { holder: this.id, url };
    // Continue from the predecessor: its last publication and its card and catalog entries (validators).
    await this.#sync();
    await this.#store.reloadEntries();
    this.#role = 'leader';
    this.#takeovers++;
    this.#log('info', 'this replica leads now', { epoch, id: this.id });
    const leading = this.#o.target.lead(epoch).catch((err: unknown) => this.#log('warn', 'starting discovery as the leader failed', { err: (err as Error).message }));
    this.#leading = leading;
  }

  /** Whether this build must not lead on the database's schema now (logged when that changes). */
  async #refuses(): Promise<boolean> {
    const reason = await this.#store.newerSchema(this.#o.acceptNewerMigrations);
    if (reason !== this.#refusesToLead) {
      if (reason !== undefined) this.#log('warn', 'this replica refuses to lead', { reason, id: this.id });
      else this.#log('info', 'this replica may lead again: the database\'s schema is this build\'s', { id: this.id });
    }
    this.#refusesToLead = reason;
    return reason !== undefined;
  }

  async #demote(reason: string): Promise<void> {
    if (this.#role !== 'leader') return;
    this.#role = 'follower';
    // The fence stays: any write still in flight from this replica is checked against the epoch
    // it led under, and refused once another replica has taken over.
    this.#store.follow();
    this.#log('warn', 'this replica no longer leads', { reason, epoch: this.#epoch });
    await this.#o.target.follow(reason).catch(() => undefined);
    // Release the lock, if this session still holds it (a refused write: another replica leads).
    await this.#drop();
  }

  async #sync(): Promise<void> {
    this.#lastPollAt = Date.now();
    const pointer = await this.#store.currentPointer();
    const leader = await this.#store.leader();
    if (this.#role !== 'leader') {
      this.#epoch = leader.epoch;
      // The leader's address (read on the dedicated connection: the store's API predates the column).
      const row = (await this.#client?.query('SELECT holder, url FROM a2ad_leader WHERE id = 1'))?.rows[0];
      this.#leader = { holder: leader.holder, url: typeof row?.url === 'string' ? row.url : null };
    }
    this.#storeDigest = pointer?.digest;
    const served = this.#o.target.current()?.digest;
    if (pointer !== undefined && pointer.digest !== served) {
      this.#behindSince ??= Date.now();
      if (this.#role !== 'leader') {
        const snapshot = await this.#store.getSnapshot(pointer.digest);
        if (snapshot !== undefined && (await this.#o.target.adopt(snapshot)) === true) this.#adopted++;
      }
    }
    if (pointer === undefined || this.#o.target.current()?.digest === pointer.digest) this.#behindSince = undefined;
    if (this.#role !== 'leader') await this.#rollout('follower');
  }

  async #rollout(role: ReplicaRole): Promise<void> {
    try {
      await this.#o.target.rollout?.(role);
    } catch (err) {
      this.#log('warn', role === 'leader' ? "reading the followers' rollout figures failed; the next heartbeat retries" : "following the leader's rollout failed; the next poll retries", { err: (err as Error).message });
    }
  }

  /** The dedicated connection, opened (with LISTEN) when missing; undefined when it cannot be. */
  async #connected(): Promise<PgClient | undefined> {
    if (this.#client) return this.#client;
    const { Client } = require('pg') as { Client: PgClientConstructor };
    const { connection, schema } = this.#store.target;
    const config = typeof connection === 'string' ? { connectionString: connection } : (connection as Knex.PgConnectionConfig as Record<string, unknown>);
    const client = new Client({
      ...config,
      application_name: `a2a-discovery ${this.id}`,
      keepAlive: true,
      connectionTimeoutMillis: this.#retryMs + 1_000,
      // A query that hangs (a silent network partition) fails instead of stalling the coordinator.
      query_timeout: this.#leaseMs,
    });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      if (this.#client !== client) return;
      this.#client = undefined;
      if (!this.#closed) this.#log('warn', 'lost the replica connection to PostgreSQL', { err: err?.message });
      void this.#enqueue(() => this.#demote(`lost the connection to PostgreSQL${err ? `: ${err.message}` : ''}`));
    };
    client.on('error', onLost);
    client.on('end', onLost);
    try {
      await client.connect();
      if (schema !== undefined) await client.query(`SET search_path TO ${quoteIdent(schema)}`);
      await client.query(`SET idle_session_timeout = ${Math.round(this.#leaseMs)}`).catch(() => undefined);
      client.on('notification', (n) => {
        if (n.channel !== this.#store.publishChannel) return;
        // The leader stepped down: try the lock now.
        if (n.payload === STEP_DOWN) void this.#enqueue(() => this.#tick());
        else this.#queueSync();
      });
      await client.query(`LISTEN ${quoteIdent(this.#store.publishChannel)}`);
    } catch (err) {
      lost = true;
      await client.end().catch(() => undefined);
      this.#log('warn', 'cannot reach PostgreSQL for replica coordination; retrying', { err: (err as Error).message });
      return undefined;
    }
    this.#client = client;
    // Caught up on what was published while this connection was down.
    this.#lastPollAt = Number.NEGATIVE_INFINITY;
    return client;
  }

  /** A notification: sync soon, coalescing bursts. */
  #queueSync(): void {
    if (this.#syncQueued || this.#closed) return;
    this.#syncQueued = true;
    void this.#enqueue(async () => {
      this.#syncQueued = false;
      await this.#sync();
    }).catch((err: unknown) => this.#log('warn', 'reading a publication failed; polling will retry', { err: (err as Error).message }));
  }

  async #drop(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }

  #lockName(): string {
    return `a2ad:leader:${this.#store.target.schema ?? 'public'}`;
  }

  #log(level: 'info' | 'warn', message: string, detail?: Record<string, unknown>): void {
    this.#o.log?.(level, message, detail);
  }
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
