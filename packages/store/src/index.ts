/**
 * Durable state: one store interface, three engines — memory (the library's default), SQLite
 * (the service's embedded default) and PostgreSQL. Card entries, snapshots (content-addressed,
 * with their cards' bytes), pins and the event journal. A package of its own
 * (`@a2a-discovery/store`): the library never loads knex or a database driver, and this package
 * loads them only when a SQL engine is opened. Helpers only the service shares with this package
 * are the `@a2a-discovery/store/internal` entry (not public: no semver promise).
 *
 * @module
 */
export { openStateStore, parseStoreSpec, storeLocation, DEFAULT_SQLITE_FILE, STORE_KINDS } from './open-state-store.js';
export type { OpenStateStoreOptions, StoreSpec } from './open-state-store.js';
export { MemoryStateStore } from './memory-state-store.js';
export type { MemoryStateStoreOptions } from './memory-state-store.js';
export { DEFAULT_RETENTION } from './state-store.js';
export type { CatalogEntry, StateStore, TurnsInFlight, StoreKind, StoreRetention, StoreStatus, PinRecord, StoredSnapshots, CounterDeltas, JournalQuery, JournalEntry, StoredRollout, RolloutFiguresRecord, SharedTurn } from './state-store.js';
export { StoreWriter } from './store-writer.js';
export { backupSqliteStore, restoreSqliteStore } from './backup.js';
export type { BackupReport, BackupTable, IgnoredObject, RestoreOptions, RestoreReport } from './backup.js';
export { backupPostgresStore, restorePostgresStore } from './backup-postgres.js';
export type { PostgresStoreTarget } from './backup-postgres.js';
export type { StoreWriterOptions } from './store-writer.js';
// Types only: the engines behind them (knex, the drivers) load when a SQL store is opened; the
// coordinator itself is the `@a2a-discovery/store/replicas` entry. ADK's session service on a
// store's database is the `@a2a-discovery/store/adk-sessions` entry (it needs `@google/adk`).
export type { ReplicaCoordinator, ReplicaOptions, ReplicaRole, ReplicaStatus, ReplicaTarget } from './replica-coordinator.js';
export type { SqlStateStore, SqlStateStoreOptions } from './sql-state-store.js';
