/**
 * Internal: the schema of our own tables, as knex migrations kept in code (so the built package
 * needs no migration folder). Every table is prefixed `a2ad_`, so the store can share a database
 * with ADK's `DatabaseSessionService` tables (`sessions`, `events`, `app_states`, `user_states`,
 * `adk_internal_metadata`). Never edit a released migration; add the next one.
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
};

/** The knex migration source over {@link MIGRATIONS}. */
export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: () => Promise.resolve(Object.keys(MIGRATIONS).sort()),
  getMigrationName: (name) => name,
  getMigration: (name) => Promise.resolve(MIGRATIONS[name]!),
};

/** Table names of knex's own bookkeeping. */
export const MIGRATIONS_TABLE = 'a2ad_migrations';
