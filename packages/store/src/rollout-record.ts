/**
 * Internal: how the engines keep the staged rollout — the keys of `a2ad_state` it lives under, when
 * its candidate must be kept, and the replicas' figures read back defensively (another release, or
 * a damaged row, may have written them).
 */
import { createHash } from 'node:crypto';
import type { RolloutState } from 'a2a-discovery';
import type { RolloutFiguresRecord, SharedTurn } from './state-store.js';

/** The `a2ad_state` key of the rollout's state. */
export const ROLLOUT_KEY = 'rollout';
/** The prefix of each replica's figures key. */
export const FIGURES_PREFIX = 'rollout-figures:';
/** The payload of the notification the leader sends on the publish channel when the rollout changes. */
export const ROLLOUT_CHANGED = 'a2ad:rollout';

/** A replica's turn calls in one figures record, at most (the oldest go first). */
export const MAX_SHARED_TURNS = 2_000;
/** Digests in one figures record, at most. */
const MAX_SHARED_DIGESTS = 256;

/** Whether the rollout is in progress (its candidate is kept, and followers assign sessions to it). */
export function rolloutRuns(state: RolloutState | undefined): boolean {
  return state !== undefined && (state.status === 'running' || state.status === 'held');
}

/** The replica's figures key (`a2ad_state.key` holds 64 characters: the replica id is hashed). */
export function figuresKey(replica: string): string {
  return `${FIGURES_PREFIX}${createHash('sha256').update(replica).digest('hex').slice(0, 40)}`;
}

/** A stored figures record, or undefined when it is not one (a row this build cannot read is skipped). */
export function parseFigures(json: string): RolloutFiguresRecord | undefined {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (typeof r.rollout !== 'string' || typeof r.replica !== 'string' || typeof r.since !== 'number' || typeof r.next !== 'number') return undefined;
  if (!Array.isArray(r.digests) || !r.digests.every((d) => typeof d === 'string') || !Array.isArray(r.calls)) return undefined;
  if (r.calls.length > MAX_SHARED_TURNS || r.digests.length > MAX_SHARED_DIGESTS) return undefined;
  const digests = r.digests as string[];
  const calls = (r.calls as unknown[]).filter(
    (c): c is SharedTurn =>
      Array.isArray(c) &&
      c.length === 5 &&
      typeof c[0] === 'string' &&
      Number.isInteger(c[1]) &&
      (c[1] as number) >= 0 &&
      (c[1] as number) < digests.length &&
      (c[2] === 0 || c[2] === 1) &&
      (c[3] === null || typeof c[3] === 'string') &&
      typeof c[4] === 'number',
  );
  if (calls.length !== r.calls.length) return undefined;
  return { rollout: r.rollout, replica: r.replica, since: r.since, next: r.next, digests, calls };
}

/**
 * The stored rollout state, or undefined when the row is not one. Checked for what the store and
 * the replicas rely on (its id, candidate, baseline, step, share, times and status); the rest is
 * the leader's record, passed on as written.
 */
export function parseRolloutState(json: string | undefined): RolloutState | undefined {
  if (json === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  const strings = ['id', 'candidate', 'baseline', 'status'].every((k) => typeof r[k] === 'string');
  const numbers = ['candidateVersion', 'step', 'share', 'startedAt', 'stepStartedAt'].every((k) => typeof r[k] === 'number');
  return strings && numbers && Array.isArray(r.changes) && Array.isArray(r.decisions) ? (v as RolloutState) : undefined;
}
