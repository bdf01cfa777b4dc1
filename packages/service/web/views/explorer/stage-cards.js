// @ts-check
/**
 * The stage cards: the five lanes of the inspected attempt in the order the code runs them —
 * cache lookup, request, validation, cache store, selection — each with its latest step so far.
 */
import { html } from '../../lib/vendor.js';
import { LANE_NAME, LANES, kindClass } from './lanes.js';

/** @typedef {import('../../lib/types.js').TraceEvent} TraceEvent */

/** What each lane is, in the library's terms. */
const LANE_ROLE = {
  lookup: 'CardCache.get: a fresh card is used as is',
  request: 'GET the card, If-None-Match when one is stored',
  validation: 'checkCard on new bytes only',
  store: 'kept only when valid; failures counted',
  selection: 'matchCard: the client’s need',
};

/** @param {{ events: TraceEvent[], cursor: number, current: TraceEvent | undefined }} props */
export function StageCards({ events, cursor, current }) {
  const attempt = current?.attempt ?? 0;
  const done = events.slice(0, cursor + 1).filter((e) => e.attempt === attempt);
  const finished = done.some((e) => e.stage === 'selection');
  return html`<ol class="stages" aria-label=${attempt ? `Stages of attempt ${attempt}, in the order the code runs them` : 'Stages of an attempt, in the order the code runs them'}>
    ${LANES.map((s, i) => {
      const steps = done.filter((e) => e.stage === s);
      const last = steps.at(-1);
      const active = current?.stage === s;
      const idle = attempt === 0 ? 'Not started.' : finished ? 'Not involved in this attempt.' : 'Not reached yet.';
      return html`<li class=${`stage ${last ? kindClass(last) : 'o-idle'} ${active ? 'active' : ''}`} data-stage=${s} aria-current=${active ? 'step' : undefined}>
        <span class="stage-name"><span class="stage-no" aria-hidden="true">${i + 1}</span>${LANE_NAME[s]}${active ? html`<span class="marker" aria-hidden="true"></span>` : null}</span>
        <span class="stage-role">${LANE_ROLE[s]}</span>
        <span class="stage-kind">${steps.length > 0 ? steps.map((e) => e.kind).join(' → ') : '—'}</span>
        ${steps.length > 0 ? steps.map((e) => html`<span class="stage-text">${e.message}</span>`) : html`<span class="stage-text">${idle}</span>`}
      </li>`;
    })}
  </ol>`;
}
