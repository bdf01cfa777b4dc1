/**
 * STUB (replaced by the classification work merged from h-classify): breaking when a skill is
 * removed or the agent left, compatible otherwise.
 */
import type { SnapshotAgent } from './snapshot.js';

export type ClassifiedAgent = Pick<SnapshotAgent, 'card'> & Partial<Pick<SnapshotAgent, 'tags' | 'transport' | 'localName'>>;

export interface ChangeImpact {
  readonly impact: 'breaking' | 'compatible';
  readonly reasons: string[];
}

export function classifyAgentChange(before: ClassifiedAgent | undefined, after: ClassifiedAgent | undefined): ChangeImpact {
  if (before === undefined) return { impact: 'compatible', reasons: ['agent added'] };
  if (after === undefined) return { impact: 'breaking', reasons: ['agent left the snapshot'] };
  const ids = new Set(after.card.skills.map((s) => s.id));
  const removed = before.card.skills.filter((s) => !ids.has(s.id)).map((s) => `skill "${s.id}" removed`);
  return removed.length > 0 ? { impact: 'breaking', reasons: removed } : { impact: 'compatible', reasons: [] };
}
