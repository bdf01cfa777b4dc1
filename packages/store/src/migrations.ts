/**
 * Internal: the schema of our own tables, as knex migrations kept in code (so the built package
 * needs no migration folder). Every table is prefixed `a2ad_`, so the store can share a database
 * with ADK's `DatabaseSessionService` tables (`sessions`, `events`, `app_states`, `user_states`,
 * `adk_internal_metadata`). Never edit a released migration; add the next one.
 *
 * Expand/contract (rolling upgrades, docs/operations.md): replicas of release N and N+1 run on one
 * PostgreSQL together, so
 * - a release's migrations only ADD: tables, nullable columns (or columns with a default),
 *   indexes, rows. N keeps working on N+1's schema: it never sees what N+1 added.
 * - a removal or a rename (a column, a table, a NOT NULL on an existing column) happens in a later
 *   release, once no release still running reads the old shape (N+1 stops reading it, N+2 drops it).
 * - every release tolerates columns and rows it does not know: name the columns read (no
 *   `SELECT *` turned into objects that are written back), ignore unknown keys and event types.
 * - a replica that finds a migration it does not have (a newer release ran it) does not migrate:
 *   it serves and follows, and refuses to lead ({@link migrate}, replica-coordinator.ts).
 * (0003 dropped `a2ad_events` in the release that replaced it: from before replicas existed.)
 */
import type { Knex } from 'knex';

interface Migration {
  up(knex: Knex): Promise<void>;
  down(knex: Knex): Promise<void>;
}

const MIGRATIONS: Record<string, Migration> = {
  '0001_state_store': {
    async up(knex) {
      await knex.schema.createTable('a2ad_card_entries', (t) => {
        t.text('key').primary();
        t.text('entry').notNullable();
        t.bigInteger('updated_at').notNullable();
      });
      await knex.schema.createTable('a2ad_cards', (t) => {
        t.string('raw_sha256', 64).primary();
        t.string('canonical_sha256', 64).notNullable();
        t.string('protocol_version', 16).notNullable();
        t.text('body');
        t.text('card').notNullable();
      });
      await knex.schema.createTable('a2ad_snapshots', (t) => {
        t.string('digest', 64).primary();
        t.integer('version').notNullable().index();
        t.bigInteger('created_at').notNullable();
        t.text('agents').notNullable();
      });
      await knex.schema.createTable('a2ad_snapshot_cards', (t) => {
        t.string('digest', 64).notNullable();
        t.string('raw_sha256', 64).notNullable().index();
        t.primary(['digest', 'raw_sha256']);
      });
      await knex.schema.createTable('a2ad_history', (t) => {
        t.integer('version').primary();
        t.string('digest', 64).notNullable();
        t.bigInteger('created_at').notNullable();
        t.text('agents').notNullable();
      });
      await knex.schema.createTable('a2ad_pins', (t) => {
        t.string('session_id', 128).primary();
        t.string('digest', 64).notNullable().index();
        t.bigInteger('last_used_at').notNullable();
        t.text('user_id').notNullable();
        t.string('owner_client', 64);
        t.string('owner_secret', 64);
      });
      await knex.schema.createTable('a2ad_events', (t) => {
        t.bigInteger('seq').primary();
        t.bigInteger('at').notNullable().index();
        t.string('type', 64).notNullable();
        t.text('event').notNullable();
      });
      await knex.schema.createTable('a2ad_counters', (t) => {
        t.string('name', 128).primary();
        t.bigInteger('value').notNullable();
      });
      await knex.schema.createTable('a2ad_state', (t) => {
        t.string('key', 64).primary();
        t.text('value').notNullable();
      });
    },
    async down(knex) {
      for (const table of ['a2ad_state', 'a2ad_counters', 'a2ad_events', 'a2ad_pins', 'a2ad_history', 'a2ad_snapshot_cards', 'a2ad_snapshots', 'a2ad_cards', 'a2ad_card_entries']) {
        await knex.schema.dropTableIfExists(table);
      }
    },
  },
  // Several replicas: the fencing epoch, one row, incremented by each new leader (docs/deployment.md).
  '0002_leader_epoch': {
    async up(knex) {
      await knex.schema.createTable('a2ad_leader', (t) => {
        t.integer('id').primary();
        t.bigInteger('epoch').notNullable();
        t.text('holder');
        t.bigInteger('since');
      });
      await knex('a2ad_leader').insert({ id: 1, epoch: 0, holder: null, since: null });
    },
    async down(knex) {
      await knex.schema.dropTableIfExists('a2ad_leader');
    },
  },
  // Several replicas write the journal: a row is keyed by the replica and its process's seq, and
  // placed by a position the store assigns (one order for every replica, the journal API's cursor).
  '0003_journal_positions': {
    async up(knex) {
      await knex.schema.createTable('a2ad_journal', (t) => {
        t.bigIncrements('id');
        t.string('replica', 128).notNullable();
        t.bigInteger('seq').notNullable();
        t.bigInteger('at').notNullable().index();
        t.string('type', 64).notNullable();
        t.text('event').notNullable();
        t.unique(['replica', 'seq']);
      });
      // Rows of one process before this: kept in their order, under an empty replica name.
      await knex.raw("INSERT INTO ?? (replica, seq, at, type, event) SELECT '', seq, at, type, event FROM ?? ORDER BY seq", ['a2ad_journal', 'a2ad_events']);
      await knex.schema.dropTable('a2ad_events');
    },
    async down(knex) {
      await knex.schema.createTable('a2ad_events', (t) => {
        t.bigInteger('seq').primary();
        t.bigInteger('at').notNullable().index();
        t.string('type', 64).notNullable();
        t.text('event').notNullable();
      });
      await knex.raw('INSERT INTO ?? (seq, at, type, event) SELECT seq, MIN(at), MIN(type), MIN(event) FROM ?? GROUP BY seq', ['a2ad_events', 'a2ad_journal']);
      await knex.schema.dropTable('a2ad_journal');
    },
  },
  // The AI Catalog documents the catalog sources cache, kept apart from the card entries (a card
  // cache never sees them), keyed by `<source namespace> <catalog URL>`.
  '0004_catalog_entries': {
    async up(knex) {
      await knex.schema.createTable('a2ad_catalog_entries', (t) => {
        t.text('key').primary();
        t.text('entry').notNullable();
        t.bigInteger('updated_at').notNullable();
      });
    },
    async down(knex) {
      await knex.schema.dropTableIfExists('a2ad_catalog_entries');
    },
  },
  // Journal retention per event type (journal.ts): the rows of each type, kept by every journal
  // write in its transaction (so no write counts the table), and the (type, id) index a type's
  // oldest rows are found on.
  '0005_journal_types': {
    async up(knex) {
      await knex.schema.alterTable('a2ad_journal', (t) => {
        t.index(['type', 'id'], 'a2ad_journal_type_id_index');
      });
      await knex.schema.createTable('a2ad_journal_counts', (t) => {
        t.string('type', 64).primary();
        t.bigInteger('n').notNullable();
      });
      await knex.raw('INSERT INTO ?? (type, n) SELECT type, COUNT(*) FROM ?? GROUP BY type', ['a2ad_journal_counts', 'a2ad_journal']);
    },
    async down(knex) {
      await knex.schema.dropTableIfExists('a2ad_journal_counts');
      await knex.schema.alterTable('a2ad_journal', (t) => {
        t.dropIndex(['type', 'id'], 'a2ad_journal_type_id_index');
      });
    },
  },
  // Several replicas: the leader's reachable URL, written when it takes the lead, so a follower
  // answers the leader's lists (`/api/endpoints`, `/api/sources`, `/api/activity`) from it.
  '0006_leader_url': {
    async up(knex) {
      await knex.schema.alterTable('a2ad_leader', (t) => {
        t.text('url');
      });
    },
    async down(knex) {
      await knex.schema.alterTable('a2ad_leader', (t) => {
        t.dropColumn('url');
      });
    },
  },
  // The durable write path (issue 29): what a refresh that kept the card changes (a 304, a
  // failure), written apart from the entry, so such a write carries no card and rewrites no row
  // holding one. Read over the entry's row when it names the same bytes and is newer.
  '0007_entry_freshness': {
    async up(knex) {
      for (const table of ['a2ad_card_freshness', 'a2ad_catalog_freshness']) {
        await knex.schema.createTable(table, (t) => {
          t.text('key').primary();
          t.text('freshness').notNullable();
          t.bigInteger('at').notNullable();
        });
      }
    },
    async down(knex) {
      await knex.schema.dropTableIfExists('a2ad_catalog_freshness');
      await knex.schema.dropTableIfExists('a2ad_card_freshness');
    },
  },
};

/** The knex migration source over {@link MIGRATIONS}. */
export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: () => Promise.resolve(Object.keys(MIGRATIONS).sort()),
  getMigrationName: (name) => name,
  getMigration: (name) => Promise.resolve(MIGRATIONS[name]!),
};

/** Table names of knex's own bookkeeping. */
export const MIGRATIONS_TABLE = 'a2ad_migrations';

/**
 * Brings the schema up to this build's (expand only: {@link MIGRATIONS} only add), unless the
 * database records migrations this build does not have: a newer release ran them, and this build
 * neither runs its own older ones over that schema nor fails (knex would throw "the migration
 * directory is corrupt"). Returns those names, sorted; empty when the schema is this build's.
 */
export async function migrate(db: Knex, schemaName?: string): Promise<string[]> {
  const unknown = await unknownMigrations(db, schemaName);
  if (unknown.length > 0) return unknown;
  try {
    await db.migrate.latest({ migrationSource, tableName: MIGRATIONS_TABLE, ...(schemaName !== undefined && { schemaName }) });
  } catch (err) {
    // A newer replica migrated between the check and knex's own (under its lock): the same case.
    const now = await unknownMigrations(db, schemaName).catch(() => []);
    if (now.length > 0) return now;
    throw err;
  }
  return [];
}

/** The migrations recorded in the database that this build does not have (sorted); empty before any migration. */
export async function unknownMigrations(db: Knex, schemaName?: string): Promise<string[]> {
  const schema = schemaName === undefined ? db.schema : db.schema.withSchema(schemaName);
  if (!(await schema.hasTable(MIGRATIONS_TABLE))) return [];
  const from = schemaName === undefined ? db : db.withSchema(schemaName);
  const rows = (await from.select('name').from(MIGRATIONS_TABLE)) as Array<{ name: string }>;
  return rows
    .map((r) => r.name)
    .filter((name) => !Object.hasOwn(MIGRATIONS, name))
    .sort();
}
