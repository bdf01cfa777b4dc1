/**
 * Which part of a selection may be published at once and which must roll out by stages: the
 * agents whose change is breaking (or, with `trigger: any`, every changed agent) are staged; the
 * rest goes out as today. A change that was rolled back (quarantined) is not staged again: the
 * current version of that agent is kept until its card changes again.
 */
import { createHash } from 'node:crypto';
import type { Snapshot, SnapshotAgent } from '../snapshot/index.js';
import { classifyAgentChange } from '../snapshot/change-impact.js';
import { transportKey } from '../sources/transport-options.js';
import { compareLocalNames } from '../local-name.js';

/** One staged agent change, as the rollout view shows it. */
export interface RolloutChange {
  readonly localName: string;
  readonly impact: 'breaking' | 'compatible';
  /** What the change breaks (or changes), in words. */
  readonly reasons: readonly string[];
  /** The card hash it rolls out. */
  readonly version: string;
}

/** What to publish now, and what to stage. */
export interface RolloutPlan {
  /** The selection with every staged change reverted to the current snapshot's version. */
  readonly base: SnapshotAgent[];
  /** The whole selection and its staged changes, when any change must roll out by stages. */
  readonly staged?: { readonly agents: SnapshotAgent[]; readonly changes: readonly RolloutChange[]; readonly id: string };
}

/** Which changes roll out by stages. */
export type RolloutTrigger = 'breaking' | 'any' | 'off';

/**
 * Splits `selected` against `current`. `quarantined`: local name → the version (card hash, or
 * `removed`) that was rolled back; such a change is reverted, not staged (an entry whose agent
 * moved on to another version is deleted from the map).
 */
export function planRollout(current: Snapshot | undefined, selected: readonly SnapshotAgent[], trigger: RolloutTrigger, quarantined: Map<string, string>): RolloutPlan {
  if (current === undefined || trigger === 'off') return { base: [...selected] };
  const before = new Map(current.agents.map((a) => [a.localName, a]));
  const chosen = new Map(selected.map((a) => [a.localName, a]));
  const changes: RolloutChange[] = [];
  const base: SnapshotAgent[] = [];
  const staged: SnapshotAgent[] = [];
  // `inBase`: the agent as published now (undefined: not at all); `inStaged`: in the candidate.
  const keep = (inBase: SnapshotAgent | undefined, inStaged: SnapshotAgent | undefined): void => {
    if (inBase !== undefined) base.push(inBase);
    if (inStaged !== undefined) staged.push(inStaged);
  };
  // A quarantined agent that left, or moved on to another version, is free again.
  for (const [name, version] of quarantined) if (chosen.get(name)?.canonicalSha256 !== version) quarantined.delete(name);
  // An agent that leaves is not staged: it left because it is unhealthy, refused or no longer
  // proposed, and keeping new sessions on it helps no one (the removal guard holds mass removals).
  for (const [name, now] of chosen) {
    const was = before.get(name);
    if (was !== undefined && !changedAgent(was, now)) keep(now, now);
    else if (quarantined.has(name)) keep(was, was);
    else {
      const impact = classifyAgentChange(was, now);
      if (trigger === 'breaking' && impact.impact !== 'breaking') keep(now, now);
      else {
        changes.push({ localName: name, impact: impact.impact, reasons: impact.reasons, version: now.canonicalSha256 });
        keep(was, now);
      }
    }
  }
  if (changes.length === 0) return { base };
  changes.sort((a, b) => compareLocalNames(a.localName, b.localName));
  return { base, staged: { agents: staged, changes, id: rolloutId(changes) } };
}

/** Whether an agent differs between two selections in anything a snapshot's digest reads. */
function changedAgent(a: SnapshotAgent, b: SnapshotAgent): boolean {
  return (
    a.canonicalSha256 !== b.canonicalSha256 ||
    a.domain !== b.domain ||
    (a.transport === undefined ? '' : transportKey(a.transport)) !== (b.transport === undefined ? '' : transportKey(b.transport)) ||
    a.tags.join(',') !== b.tags.join(',')
  );
}

/** The rollout's id: the staged changes (names and versions), so the same change keeps its rollout while other agents move. */
function rolloutId(changes: readonly RolloutChange[]): string {
  return createHash('sha256')
    .update(changes.map((c) => `${c.localName}\u0000${c.version}`).join('\n'))
    .digest('hex')
    .slice(0, 16);
}

/**
 * Where a new session lands during a rollout: its bucket in [0, 1), from the rollout id and the
 * session id only, so the same session always lands on the same side, on every replica, and a
 * session on the candidate at 5 % is on it at 25 % too.
 */
export function rolloutBucket(rolloutId: string, sessionId: string): number {
  const h = createHash('sha256').update(`${rolloutId}\u0000${sessionId}`).digest();
  return h.readUInt32BE(0) / 0x1_0000_0000;
}
