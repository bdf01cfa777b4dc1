/**
 * Immutable, versioned snapshots identified by a digest; diffs; retention by reference count.
 *
 * @module
 */
export { snapshotDigest, buildSnapshot, toSnapshotAgents, diffSnapshots } from './snapshot.js';
export type { Snapshot, SnapshotAgent, SnapshotDiff, AgentImpact } from './snapshot.js';
export { classifyAgentChange } from './change-impact.js';
export type { ClassifiedAgent, ChangeImpact } from './change-impact.js';
export { SnapshotStore } from './snapshot-store.js';
export type { SnapshotSummary,  } from './snapshot-store.js';
