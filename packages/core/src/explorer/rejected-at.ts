/**
 * Where an attempt was rejected, in the diagram's words: the lane, with the library's stage in
 * brackets where it says more than the lane ("Validation (parse)"; "Request" for a 404).
 */
import type { TraceAttempt } from './types.js';
import { TIMELINE_STAGE_NAMES } from './types.js';

/** @example rejectedAt({ lane: 'validation', stage: 'parse' }) // "Validation (parse)" */
export function rejectedAt(a: Pick<TraceAttempt, 'lane' | 'stage'>): string {
  const detail = a.stage !== undefined && a.stage !== 'fetch' && a.stage !== 'match' ? ` (${a.stage})` : '';
  return `${TIMELINE_STAGE_NAMES[a.lane ?? 'request']}${detail}`;
}
