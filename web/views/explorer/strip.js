// @ts-check
/**
 * The timeline strip: the whole run on model time, one lane per stage, one dot per step. The
 * steps of one attempt happen within a round trip, so they are spread at least {@link STEP_GAP}
 * pixels apart (in their order) and the scale is chosen so an attempt's steps end before the
 * next attempt starts. The publication of v2 is a marker of its own.
 */
import { html, useEffect, useLayoutEffect, useRef, useState } from '../../lib/vendor.js';
import { modelSeconds } from '../../lib/format.js';
import { LANE_NAME, LANES, kindClass } from './lanes.js';

/** @typedef {import('../../lib/types.js').TraceResult} TraceResult */
/** @typedef {import('../../lib/types.js').TraceEvent} TraceEvent */
/** @typedef {import('../../lib/types.js').TimelineStage} TimelineStage */

/** Least horizontal distance between two steps, in pixels. */
export const STEP_GAP = 13;
const PAD = 18;
const LANE = 30;
const TOP = 44;
const LABEL = 104;

/**
 * Where each step goes: its model time on the scale, pushed right to keep {@link STEP_GAP}
 * from the step before.
 * @param {TraceResult} result
 * @param {number} boxWidth
 */
export function layoutStrip(result, boxWidth) {
  const events = result.events;
  const v2 = result.inputs.publishV2AtSeconds;
  const endS = Math.max(1, (events.at(-1)?.atMs ?? 0) / 1000, v2 !== null && v2 <= (events.at(-1)?.atMs ?? 0) / 1000 + 5 ? v2 : 0);
  // Enough pixels per second for each attempt's steps to end before the next attempt starts.
  let need = 0;
  for (let i = 0; i + 1 < result.attempts.length; i++) {
    const a = /** @type {import('../../lib/types.js').TraceAttempt} */ (result.attempts[i]);
    const next = /** @type {import('../../lib/types.js').TraceAttempt} */ (result.attempts[i + 1]);
    const steps = events.filter((e) => e.attempt === a.index).length;
    const span = Math.max(0.001, next.at - a.at);
    need = Math.max(need, (steps * STEP_GAP + 6) / span);
  }
  // The last attempt's steps spread right of its start: leave room for them.
  const lastAttempt = result.attempts.at(-1)?.index;
  const tail = events.filter((e) => e.attempt === lastAttempt).length * STEP_GAP;
  const fit = (boxWidth - 2 * PAD - 10 - tail) / endS;
  const pxPerS = Math.min(600, Math.max(4, fit, need));
  const timeX = (/** @type {number} */ ms) => PAD + (ms / 1000) * pxPerS;
  /** @type {number[]} */
  const xs = [];
  let prev = -Infinity;
  for (const e of events) {
    prev = Math.max(timeX(e.atMs), prev + STEP_GAP);
    xs.push(prev);
  }
  const width = Math.max(timeX(endS * 1000) + 20, (xs.at(-1) ?? 0) + 10) + PAD;
  return { xs, timeX, pxPerS, endS, width, height: TOP + LANES.length * LANE + 16 };
}

/** @param {TimelineStage} s */
const laneY = (s) => TOP + LANES.indexOf(s) * LANE + LANE / 2;

/**
 * @param {{ result: TraceResult, cursor: number, t: number, current: TraceEvent | undefined, onInspect: (i: number) => void }} props
 */
export function Strip({ result, cursor, t, current, onInspect }) {
  const events = result.events;
  const scrollRef = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [boxWidth, setBoxWidth] = useState(800);
  useLayoutEffect(() => {
    const measure = () => setBoxWidth(scrollRef.current?.clientWidth ?? 800);
    measure();
    window.addEventListener('resize', measure);
    return () => window.removeEventListener('resize', measure);
  }, []);
  const { xs, timeX, endS, width, height } = layoutStrip(result, boxWidth);
  const playX = Math.max(timeX(t), cursor >= 0 ? (xs[cursor] ?? 0) : 0);
  const tickStep = [1, 2, 5, 10, 30, 60, 120, 300, 600].find((s) => endS / s <= 12) ?? 600;
  const ticks = [];
  for (let s = 0; s <= endS + 1e-9; s += tickStep) ticks.push(s);
  const v2 = result.inputs.publishV2AtSeconds;
  const attemptEndX = (/** @type {number} */ n) => {
    let x = 0;
    events.forEach((e, i) => {
      if (e.attempt === n) x = /** @type {number} */ (xs[i]);
    });
    return x;
  };

  // Keep the playhead in view while playing or stepping.
  useEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    if (playX < el.scrollLeft + 20 || playX > el.scrollLeft + el.clientWidth - 20) el.scrollLeft = Math.max(0, playX - el.clientWidth / 2);
  }, [playX]);

  return html`<div class="lanes-box">
    <svg class="lanes lane-labels" width=${LABEL} height=${height} aria-hidden="true">
      ${LANES.map((s) => html`<text x="8" y=${laneY(s) + 4} class="lane-label">${LANE_NAME[s]}</text>`)}
    </svg>
    <div class="lanes-scroll" ref=${scrollRef} tabindex="0" role="region" aria-label="Timeline strip over model time (scrolls horizontally); the event list below says the same as text">
      <svg class="lanes" id="trace-strip" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`} role="img"
        aria-label=${`${events.length} steps on five lanes over ${modelSeconds(endS)}${v2 !== null ? `; v2 published at ${modelSeconds(v2)}` : ''}`}>
        ${result.attempts.map((a) => {
          const x0 = timeX(a.at * 1000) - 7;
          return html`<g class=${`band ${a.outcome === 'accepted' ? 'band-ok' : 'band-bad'} ${a.index === current?.attempt ? 'band-current' : ''}`} data-attempt=${a.index}>
            <rect x=${x0} y=${TOP - 4} width=${Math.max(14, attemptEndX(a.index) - x0 + 7)} height=${LANES.length * LANE + 6} rx="4" />
          </g>`;
        })}
        ${v2 !== null && v2 <= endS
          ? html`<g class="v2-marker" data-at=${v2}>
              <line x1=${timeX(v2 * 1000)} x2=${timeX(v2 * 1000)} y1="4" y2=${TOP + LANES.length * LANE} />
              <text x=${timeX(v2 * 1000) + 4} y="14">v2 published (${modelSeconds(v2)})</text>
            </g>`
          : null}
        ${result.attempts.map(
          (a) => html`<text class=${`band-label ${a.outcome === 'accepted' ? '' : 'band-bad'}`} x=${timeX(a.at * 1000) - 5} y=${TOP - 8}>#${a.index} ${a.outcome === 'accepted' ? `✓ ${a.cardVersion ?? ''}` : '✗'}</text>`,
        )}
        ${LANES.map((s) => html`<line class="lane-line" x1="0" x2=${width} y1=${laneY(s)} y2=${laneY(s)} />`)}
        ${ticks.map((s) => html`<text class="tick-label" x=${timeX(s * 1000)} y=${height - 2} text-anchor="middle">${s} s</text>`)}
        ${events.map(
          (e, i) => html`<circle class=${`mark ${kindClass(e)} ${i > cursor ? 'future' : ''}`} data-attempt=${e.attempt} data-seq=${e.seq} cx=${xs[i]} cy=${laneY(e.stage)} r="5" onClick=${() => onInspect(i)}>
            <title>${modelSeconds(e.atMs / 1000)} · attempt ${e.attempt} · ${LANE_NAME[e.stage]} · ${e.kind}: ${e.message}</title>
          </circle>`,
        )}
        <line class="playhead" x1=${playX} x2=${playX} y1=${TOP - 6} y2=${TOP + LANES.length * LANE} />
        ${current ? html`<circle class="request-marker" id="request-marker" cx=${xs[cursor]} cy=${laneY(current.stage)} r="9" />` : null}
      </svg>
    </div>
  </div>`;
}
