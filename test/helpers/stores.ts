/**
 * The three state-store engines, for suites that run one body against each
 * (`for (const engine of storeEngines())`): memory, SQLite (a file per store in a temporary
 * directory) and a real PostgreSQL (one server per test file, a schema per store). Each
 * `open()` gives an empty store; `teardown()` closes every store opened and stops the server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CacheEntry, CardStore } from '../../packages/core/src/cache/index.js';
import type { Clock } from '../../packages/core/src/clock/index.js';
import type { OpenStateStoreOptions, StateStore } from '../../packages/store/src/index.js';
import { openStateStore } from '../../packages/store/src/index.js';
import type { TestPostgres } from './postgres.js';
import { POSTGRES_SKIP, startPostgres } from './postgres.js';

export interface StoreEngine {
  readonly name: string;
  /** Set when the engine cannot run here (PostgreSQL binaries missing). */
  readonly skip: string | undefined;
  setup(): Promise<void>;
  /** A new, empty store. `reopen` names a store opened before, to open it again (after closing it). */
  open(options?: Omit<OpenStateStoreOptions, 'dataDir' | 'schema'> & { reopen?: StateStore }): Promise<StateStore>;
  /** A card store backed by a new, empty state store, usable at once (it opens in the background). */
  cards(clock?: Clock): CardStore;
  /** The PostgreSQL server, for tests that stop and start it. */
  readonly postgres?: TestPostgres;
  teardown(): Promise<void>;
}

/** A card store whose state store opens in the background: every call waits for it. */
function lazyCardStore(opening: Promise<StateStore>): CardStore {
  // A store made but never used (an overridden default) must not become an unhandled rejection.
  opening.catch(() => undefined);
  return {
    get: async (key: string) => (await opening).cards.get(key),
    set: async (key: string, entry: CacheEntry) => (await opening).cards.set(key, entry),
    touch: async (key: string, entry: CacheEntry) => {
      const { cards } = await opening;
      await (cards.touch ? cards.touch(key, entry) : cards.set(key, entry));
    },
    delete: async (key: string) => (await opening).cards.delete(key),
    keys: async () => (await opening).cards.keys(),
  };
}

export function storeEngines(): StoreEngine[] {
  return [memoryEngine(), sqliteEngine(), postgresEngine()];
}

function tracked(open: (o: OpenStateStoreOptions, reopen?: StateStore) => Promise<StateStore>, name: string, skip?: string, extra?: Partial<StoreEngine>): StoreEngine {
  const opened: StateStore[] = [];
  const opening = new Set<Promise<StateStore>>();
  const engine: StoreEngine = {
    name,
    skip,
    setup: () => Promise.resolve(),
    async open(options = {}) {
      const { reopen, ...rest } = options;
      const p = open(rest, reopen);
      opening.add(p);
      try {
        const s = await p;
        opened.push(s);
        return s;
      } finally {
        opening.delete(p);
      }
    },
    cards(clock) {
      return lazyCardStore(engine.open(clock ? { clock } : {}));
    },
    async teardown() {
      // Stores still opening (made in the background) finish first, then everything closes.
      await Promise.allSettled([...opening]);
      await Promise.allSettled(opened.splice(0).map((s) => s.close()));
    },
    ...extra,
  };
  return engine;
}

function memoryEngine(): StoreEngine {
  // A memory store cannot be reopened: `reopen` gives the same object back.
  return tracked((o, reopen) => (reopen ? Promise.resolve(reopen) : openStateStore('memory', o)), 'memory');
}

function sqliteEngine(): StoreEngine {
  let dir = '';
  let n = 0;
  const files = new WeakMap<StateStore, string>();
  const engine = tracked(
    async (o, reopen) => {
      const file = (reopen && files.get(reopen)) ?? join(dir, `store-${++n}.sqlite`);
      const s = await openStateStore(`sqlite:${file}`, o);
      files.set(s, file);
      return s;
    },
    'sqlite',
  );
  const teardown = engine.teardown;
  return {
    ...engine,
    async setup() {
      dir = await mkdtemp(join(tmpdir(), 'a2ad-sqlite-'));
    },
    async teardown() {
      await teardown();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

function postgresEngine(): StoreEngine {
  let pg: TestPostgres | undefined;
  const schemas = new WeakMap<StateStore, string>();
  const engine = tracked(
    async (o, reopen) => {
      if (!pg) throw new Error('PostgreSQL is not started');
      const schema = (reopen && schemas.get(reopen)) ?? pg.schema();
      const s = await openStateStore(pg.url, { ...o, schema });
      schemas.set(s, schema);
      return s;
    },
    'postgres',
    POSTGRES_SKIP,
  );
  const teardown = engine.teardown;
  return {
    ...engine,
    get postgres() {
      return pg;
    },
    async setup() {
      pg = await startPostgres();
    },
    async teardown() {
      await teardown();
      await pg?.close();
    },
  };
}
