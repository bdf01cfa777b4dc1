// @ts-check
/**
 * The timeline strip: the whole run on model time, one lane per stage, one dot per step. The
 * steps of one attempt happen within a round trip, so they are spread at least {@link STEP_GAP}
 * pixels apart (in their order) and the scale is chosen so an attempt's steps end before the
 * next attempt starts. The publication of v2 is a marker of its own.
 *
 * Every dot is a button: one tab stop for the strip (the inspected step's dot, or the first), the
 * arrow keys, Home and End move between the steps, Enter or Space (a click, a tap) inspects one;
 * the inspected step is said in words under the strip and in full in the Moment below.
 */
import { html, useEffect, useLayoutEffect, useRef, useState } from '../../lib/vendor.js';
import { modelSeconds } from '../../lib/format.js';
import { LANE_NAME, LANES, SHAPES, glyphPath, kindClass } from './lanes.js';

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

/** One step in words: its dot's name, tooltip and the line under the strip. @param {TraceEvent} e */
export function stepText(e) {
  return `${modelSeconds(e.atMs / 1000)} · attempt ${e.attempt} · ${LANE_NAME[e.stage]} · ${e.kind}: ${e.message}`;
}

/** The keys that move between the strip's dots: the index they lead to from `i` of `n`. */
const MOVES = {
  ArrowRight: (/** @type {number} */ i, /** @type {number} */ n) => Math.min(n - 1, i + 1),
  ArrowDown: (/** @type {number} */ i, /** @type {number} */ n) => Math.min(n - 1, i + 1),
  ArrowLeft: (/** @type {number} */ i) => Math.max(0, i - 1),
  ArrowUp: (/** @type {number} */ i) => Math.max(0, i - 1),
  Home: () => 0,
  End: (/** @type {number} */ _i, /** @type {number} */ n) => n - 1,
};

/**
 * @param {{ result: TraceResult, cursor: number, t: number, current: TraceEvent | undefined, onInspect: (i: number) => void }} props
 */
export function Strip({ result, cursor, t, current, onInspect }) {
  const events = result.events;
  const scrollRef = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [boxWidth, setBoxWidth] = useState(800);
  // The dot that is the strip's one tab stop: the one the arrow keys reached, else the inspected step.
  // It is remembered with the step inspected and the run it was reached on, so inspecting another
  // step (or another run) hands the tab stop back to the inspected one in the same render: an
  // effect that reset it after the render could land after the next key and move the stop away
  // from the focused dot.
  const [reached, setReached] = useState({ at: -1, cursor: -1, result: /** @type {TraceResult | null} */ (null) });
  const tabStop = reached.at >= 0 && reached.cursor === cursor && reached.result === result ? reached.at : Math.max(0, cursor);
  /** @param {KeyboardEvent} ev @param {number} i */
  const onKey = (ev, i) => {
    if (ev.key === 'Enter' || ev.key === ' ') {
      ev.preventDefault();
      onInspect(i);
      return;
    }
    const move = MOVES[/** @type {keyof typeof MOVES} */ (ev.key)];
    if (!move) return;
    ev.preventDefault();
    const j = move(i, events.length);
    setReached({ at: j, cursor, result });
    const dot = scrollRef.current?.querySelector(`[data-step="${j}"]`);
    if (dot instanceof window.SVGElement) dot.focus();
  };
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
    <div class="lanes-scroll" ref=${scrollRef} role="region" aria-label="Timeline strip over model time (scrolls horizontally); the event list below says the same as text">
      <svg class="lanes" id="trace-strip" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`} role="group" aria-describedby="strip-help"
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
        <line class="playhead" x1=${playX} x2=${playX} y1=${TOP - 6} y2=${TOP + LANES.length * LANE} />
        ${current ? html`<circle class="request-marker" id="request-marker" cx=${xs[cursor]} cy=${laneY(current.stage)} r="9" />` : null}
        ${events.map(
          // A finger-sized target (the gap between steps wide, a lane high) that a tap or click takes for the dot.
          (e, i) => html`<rect class="hit" aria-hidden="true" x=${(xs[i] ?? 0) - STEP_GAP / 2} y=${laneY(e.stage) - LANE / 2} width=${STEP_GAP} height=${LANE} onClick=${() => onInspect(i)} />`,
        )}
        ${events.map(
          (e, i) => html`<circle class=${`mark ${kindClass(e)} ${i > cursor ? 'future' : ''} ${i === cursor ? 'selected' : ''}`} data-attempt=${e.attempt} data-seq=${e.seq} data-step=${i}
            cx=${xs[i]} cy=${laneY(e.stage)} r="5" role="button" tabindex=${i === tabStop ? '0' : '-1'} aria-label=${stepText(e)} aria-pressed=${i === cursor ? 'true' : 'false'}
            onClick=${() => onInspect(i)} onKeyDown=${(/** @type {KeyboardEvent} */ ev) => onKey(ev, i)}>
            <title>${stepText(e)}</title>
          </circle>`,
        )}
        ${events.map((e, i) => {
          // The shape that tells failure, invalid and error apart without colour (see SHAPES), drawn over the dot.
          const d = glyphPath(kindClass(e), xs[i] ?? 0, laneY(e.stage));
          return d ? html`<path class=${`glyph ${i > cursor ? 'future' : ''}`} data-glyph=${SHAPES[kindClass(e)]} d=${d} aria-hidden="true" />` : null;
        })}
      </svg>
    </div>
  </div>
  <p class="strip-step" id="strip-step">${current ? html`<strong>Inspected step ${cursor + 1} of ${events.length}</strong> (in full in <em>Moment</em> below): ${stepText(current)}` : 'No step inspected yet.'}</p>
  <p class="muted small" id="strip-help">Each dot is a step: Tab reaches the strip, the arrow keys (Home, End) move from step to step, Enter or Space inspects one; click or tap a dot to inspect it.</p>`;
}
