// @ts-check
/** The event list: every step of the run as text, the inspected one marked. */
import { html, useEffect, useRef } from '../../lib/vendor.js';
import { modelSeconds } from '../../lib/format.js';
import { Badge } from '../common.js';
import { LANE_NAME, kindClass } from './lanes.js';

/** @typedef {import('../../lib/types.js').TraceEvent} TraceEvent */

/** @param {{ events: TraceEvent[], cursor: number }} props */
export function EventList({ events, cursor }) {
  const boxRef = useRef(/** @type {HTMLDivElement | null} */ (null));
  useEffect(() => {
    const box = boxRef.current;
    const row = box?.querySelector('tr.current');
    if (!box || !(row instanceof HTMLElement)) return;
    box.scrollTop = Math.max(0, row.offsetTop - box.clientHeight / 2);
  }, [cursor]);
  return html`<section aria-labelledby="events-h">
    <h2 id="events-h">Event list</h2>
    <div class="table-wrap scroll-y" ref=${boxRef} tabindex="0" role="region" aria-label="Every step of the run (scrolls)">
      <table class="data trace-events" id="trace-events">
        <caption>Every step of the run in order; the inspected step is marked, steps not yet played are in italics</caption>
        <thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Attempt</th><th scope="col">Stage</th><th scope="col">Step</th><th scope="col">What happened</th></tr></thead>
        <tbody>
          ${events.map(
            (e, i) => html`<tr key=${e.seq} class=${i === cursor ? 'current' : i > cursor ? 'future' : ''} aria-current=${i === cursor ? 'step' : undefined} data-seq=${e.seq}>
              <td class="num">${e.seq}</td>
              <td class="num">${modelSeconds(e.atMs / 1000)}</td>
              <td class="num">${e.attempt}</td>
              <td>${LANE_NAME[e.stage]}</td>
              <td><${Badge} tone=${kindClass(e)} text=${e.kind} /></td>
              <td class="wrap">${e.message}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}
