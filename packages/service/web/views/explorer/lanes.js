// @ts-check
/**
 * The five lanes of a discovery attempt, in the order the library runs them
 * (packages/core/src/explorer/types.ts, TIMELINE_STAGES), and the colour of each step kind with its legend.
 */

/** @typedef {import('../../lib/types.js').TimelineStage} TimelineStage */
/** @typedef {import('../../lib/types.js').TraceEvent} TraceEvent */

/** @type {TimelineStage[]} */
export const LANES = ['lookup', 'request', 'validation', 'store', 'selection'];

/** @type {Record<TimelineStage, string>} */
export const LANE_NAME = { lookup: 'Cache lookup', request: 'Request', validation: 'Validation', store: 'Cache store', selection: 'Selection' };

/**
 * The colour class of a playback step.
 * @param {TraceEvent} e
 */
export function kindClass(e) {
  switch (e.kind) {
    case 'request.sent':
    case 'request.received':
      return 'o-request';
    case 'response.received': {
      const s = Number(e.detail?.status);
      return s === 304 ? 'o-revalidated' : s >= 200 && s < 300 ? 'o-request' : 'o-failed';
    }
    case 'cache.hit':
      return 'o-hit';
    case 'cache.stored':
      return 'o-changed';
    case 'cache.revalidated':
      return 'o-revalidated';
    case 'cache.unchanged':
    case 'validation.skipped':
      return 'o-unchanged';
    case 'cache.not-stored':
    case 'validation.failed':
      return 'o-invalid';
    case 'cache.stale':
    case 'cache.backoff':
    case 'cache.backing-off':
      return 'o-stale';
    case 'cache.failed':
    case 'selection.rejected':
      return 'o-failed';
    case 'validation.passed':
    case 'selection.accepted':
      return 'o-good';
    default:
      return 'o-info';
  }
}

/**
 * The shape that tells the three kinds of trouble apart without colour (for colour-blind
 * readers, and in print): a failure counted (or a stale card, or backing off) is an amber dot
 * with a bar, an invalid card a near-black dot struck through, an error status or a rejected
 * selection a red dot with a cross. Every other step is a plain dot (the attempt's start a ring).
 * @type {Readonly<Record<string, 'bar' | 'slash' | 'cross'>>}
 */
export const SHAPES = Object.freeze({ 'o-stale': 'bar', 'o-invalid': 'slash', 'o-failed': 'cross' });

/**
 * The path of a mark's glyph (white, over the dot) centred on x, y, or undefined for a plain dot.
 * @param {string} tone
 * @param {number} x
 * @param {number} y
 */
export function glyphPath(tone, x, y) {
  const shape = SHAPES[tone];
  if (shape === 'cross') return `M${x - 2.5} ${y - 2.5}L${x + 2.5} ${y + 2.5}M${x + 2.5} ${y - 2.5}L${x - 2.5} ${y + 2.5}`;
  if (shape === 'slash') return `M${x - 3} ${y + 3}L${x + 3} ${y - 3}`;
  if (shape === 'bar') return `M${x - 3} ${y}L${x + 3} ${y}`;
  return undefined;
}

/** What each colour (and shape) means, in the legend's order. */
export const LEGEND = /** @type {const} */ ([
  ['o-info', 'attempt starts (cache lookup)'],
  ['o-request', 'request: sent, received, answered'],
  ['o-hit', 'cache hit: a fresh card, no request'],
  ['o-good', 'validation passed / card selected'],
  ['o-changed', 'new card stored'],
  ['o-revalidated', '304 Not Modified: stored card refreshed'],
  ['o-unchanged', 'step skipped or nothing new'],
  ['o-stale', 'failure counted, stale or backing off (amber dot with a bar)'],
  ['o-invalid', 'invalid card: refused, not stored (dark dot, struck through)'],
  ['o-failed', 'error status / selection rejected (red dot with a cross)'],
]);
