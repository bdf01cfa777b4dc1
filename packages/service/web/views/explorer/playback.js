// @ts-check
/**
 * Playback on model time: a hook holding the cursor (the inspected step), the model time and
 * the speed, and the controls that move them. A new run starts at step 0, ready to play.
 */
import { html, useEffect, useState } from '../../lib/vendor.js';
import { modelSeconds } from '../../lib/format.js';

/** @typedef {import('../../lib/types.js').TraceEvent} TraceEvent */
/** @typedef {{ cursor: number, t: number, playing: boolean, speed: number, stepAt: number }} PlaybackState */

const SPEEDS = [0.5, 1, 2, 4, 8];
/** How long a step stays on screen while playing at 1× (real milliseconds). */
const DWELL_MS = 500;

/**
 * The last step at or before model time `t` (ms), or -1.
 * @param {TraceEvent[]} events
 * @param {number} t
 */
function cursorAt(events, t) {
  let c = -1;
  for (let i = 0; i < events.length; i++) if (/** @type {TraceEvent} */ (events[i]).atMs <= t) c = i;
  return c;
}

/**
 * @param {TraceEvent[]} events the run's steps (a new array per run)
 */
export function usePlayback(events) {
  const [pb, setPb] = useState(/** @type {PlaybackState} */ ({ cursor: -1, t: 0, playing: false, speed: 2, stepAt: 0 }));
  const endMs = events.at(-1)?.atMs ?? 0;

  useEffect(() => {
    if (!pb.playing) return;
    let last = Date.now();
    const id = setInterval(() => {
      const now = Date.now();
      const dt = now - last;
      last = now;
      setPb((p) => {
        // A tick already due when Pause was pressed (the interval is cleared only after the next
        // render) must not move on: paused means the step shown stays.
        if (!p.playing) return p;
        const nextAt = events[p.cursor + 1]?.atMs;
        if (nextAt === undefined) return { ...p, t: endMs, playing: false };
        // Model time runs up to the next step; steps at the same moment are shown one by one.
        if (p.t < nextAt) return { ...p, t: Math.min(nextAt, p.t + dt * p.speed) };
        if (now - p.stepAt < DWELL_MS / p.speed) return p;
        return { ...p, cursor: p.cursor + 1, stepAt: now };
      });
    }, 50);
    return () => clearInterval(id);
  }, [pb.playing, events]);

  const controls = {
    /** A new run: back to step 0, playing or not. */
    reset: (/** @type {boolean} */ playing = false) => setPb((p) => ({ ...p, cursor: -1, t: 0, playing })),
    play: () => setPb((p) => (p.cursor >= events.length - 1 ? { ...p, t: 0, cursor: -1, playing: true } : { ...p, playing: true })),
    pause: () => setPb((p) => ({ ...p, playing: false })),
    next: () =>
      setPb((p) => {
        const c = Math.min(events.length - 1, p.cursor + 1);
        return { ...p, playing: false, cursor: c, t: Math.max(p.t, events[c]?.atMs ?? 0) };
      }),
    prev: () =>
      setPb((p) => {
        const c = Math.max(-1, p.cursor - 1);
        return { ...p, playing: false, cursor: c, t: c < 0 ? 0 : (events[c]?.atMs ?? 0) };
      }),
    restart: () => setPb((p) => ({ ...p, t: 0, cursor: -1 })),
    scrub: (/** @type {number} */ t) => setPb((p) => ({ ...p, playing: false, t, cursor: cursorAt(events, t) })),
    inspect: (/** @type {number} */ i) => setPb((p) => ({ ...p, playing: false, cursor: i, t: events[i]?.atMs ?? 0 })),
    speed: (/** @type {number} */ speed) => setPb((p) => ({ ...p, speed })),
  };
  return { pb, endMs, controls };
}

/**
 * @param {{ pb: PlaybackState, endMs: number, events: TraceEvent[], controls: ReturnType<typeof usePlayback>['controls'] }} props
 */
export function Playback({ pb, endMs, events, controls }) {
  const atEnd = pb.cursor >= events.length - 1;
  return html`<div class="playback" role="group" aria-label="Playback">
    ${pb.playing
      ? html`<button type="button" class="btn btn-primary" id="pb-pause" onClick=${controls.pause}>Pause</button>`
      : html`<button type="button" class="btn btn-primary" id="pb-play" onClick=${controls.play}>Play</button>`}
    <button type="button" class="btn" id="pb-prev" onClick=${controls.prev} disabled=${pb.cursor < 0}>Previous event</button>
    <button type="button" class="btn" id="pb-next" onClick=${controls.next} disabled=${atEnd}>Next event</button>
    <button type="button" class="btn" id="pb-restart" onClick=${controls.restart}>Restart</button>
    <label class="inline">Speed
      <select id="pb-speed" value=${String(pb.speed)} onChange=${(/** @type {any} */ ev) => controls.speed(Number(ev.currentTarget.value))}>
        ${SPEEDS.map((s) => html`<option value=${String(s)}>${s}×</option>`)}
      </select>
    </label>
    <label class="scrub">
      <span class="visually-hidden">Inspect moment (model time)</span>
      <input type="range" id="pb-scrub" min="0" max=${endMs} step="50" value=${pb.t}
        aria-valuetext=${`${modelSeconds(pb.t / 1000)}, event ${pb.cursor + 1} of ${events.length}`}
        onInput=${(/** @type {any} */ ev) => controls.scrub(Number(ev.currentTarget.value))} />
    </label>
    <span class="clock" id="pb-clock">${modelSeconds(Math.round(pb.t) / 1000)} / ${modelSeconds(endMs / 1000)} · event <span id="pb-position">${pb.cursor + 1}</span> of ${events.length}</span>
  </div>`;
}
