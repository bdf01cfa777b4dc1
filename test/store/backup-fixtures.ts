/**
 * What the backup and restore suites share (test/store/backup-restore*.test.ts,
 * test/cli/backup.test.ts): raw SQL on a SQLite file with the real sqlite3 package, and a store's
 * worth of rows (a snapshot of one billing agent, journal events).
 */
import sqlite3 from 'sqlite3';
import type { DiscoveryEvent } from '../../packages/core/src/events/index.js';
import { buildSnapshot } from '../../packages/core/src/snapshot/index.js';
import type { SnapshotAgent } from '../../packages/core/src/snapshot/index.js';
import { entryFor, rawCard } from '../match/fixtures.js';

/** The rows of `statement` on the SQLite file `file` (read-only unless `mode` says otherwise). */
export function sqliteAll<T>(file: string, statement: string, mode = sqlite3.OPEN_READONLY): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, mode, (err) => {
      if (err) return reject(err);
      db.all(statement, [], (e, rows) => {
        db.close();
        if (e) reject(e);
        else resolve(rows as T[]);
      });
    });
  });
}

/** Runs `statements` (several, `;`-separated) on the SQLite file `file`. */
export function sqliteExec(file: string, statements: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(file, sqlite3.OPEN_READWRITE, (err) => {
      if (err) return reject(err);
      db.exec(statements, (e) => {
        db.close();
        if (e) reject(e);
        else resolve();
      });
    });
  });
}

const billing = entryFor('https://billing.example.com/', rawCard('https://billing.example.com', { skills: [{ id: 'invoices', tags: ['billing'] }] }));

/** One selected agent, as a snapshot holds it. */
export const billingAgent: SnapshotAgent = Object.freeze({
  localName: 'billing_agent',
  description: 'Answers invoice questions.',
  tags: ['billing'],
  critical: true,
  baseUrl: billing.baseUrl,
  sources: ['static'],
  card: billing.card,
  body: billing.body,
  canonicalSha256: billing.canonicalSha256,
  rawSha256: billing.rawSha256,
  protocolVersion: billing.protocolVersion,
  degraded: false,
  stale: false,
});

/** Snapshot v1 of {@link billingAgent}. */
export const billingSnapshot = buildSnapshot([billingAgent], 1, 1_767_225_600_000);

/** A journal event numbered `seq`. */
export const journalEvent = (seq: number): DiscoveryEvent => ({ seq, at: Date.now() + seq, type: 'alert', kind: 'test', message: `event ${seq}` }) as DiscoveryEvent;
