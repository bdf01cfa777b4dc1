// @ts-check
/**
 * The inspected moment: the step, why its attempt went to the network (or not), the step's
 * detail (headers, If-None-Match, status, the library's error code) and the cache entry around it.
 */
import { html } from '../../lib/vendor.js';
import { modelSeconds } from '../../lib/format.js';
import { Badge } from '../common.js';
import { LANE_NAME, kindClass } from './lanes.js';
import { revalidationOf } from './tables.js';

/** @typedef {import('../../lib/types.js').TraceResult} TraceResult */
/** @typedef {import('../../lib/types.js').TraceEvent} TraceEvent */
/** @typedef {import('../../lib/types.js').TraceCacheState} TraceCacheState */

/** @param {unknown} v @returns {string} */
function showValue(v) {
  if (v === undefined) return '—';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  if (typeof v === 'object' && !Array.isArray(v) && Object.values(v).every((x) => typeof x !== 'object' || x === null)) {
    return Object.entries(v)
      .map(([k, x]) => `${k}: ${String(x)}`)
      .join('\n');
  }
  return JSON.stringify(v, null, 1);
}

/** @type {[string, (s: TraceCacheState | undefined) => string][]} */
const ENTRY_ROWS = [
  ['card', (s) => (s?.present ? (s.cardVersion ?? '?') : 'none')],
  ['ETag', (s) => s?.etag ?? '—'],
  ['fresh until', (s) => (s?.expiresAt !== undefined ? modelSeconds(s.expiresAt) : '—')],
  ['usable', (s) => (s ? (s.usable ? 'yes' : 'no') : '—')],
  ['stale', (s) => (s ? (s.stale ? 'yes' : 'no') : '—')],
  ['failures', (s) => String(s?.failures ?? 0)],
  ['last outcome', (s) => s?.lastOutcome ?? '—'],
];

/** @param {{ result: TraceResult, current: TraceEvent | undefined, cursor: number, playing: boolean }} props */
export function Moment({ result, current, cursor, playing }) {
  if (!current) {
    return html`<section class="moment panel" id="moment" aria-labelledby="moment-h">
      <h2 id="moment-h">Inspect a moment</h2>
      <p class="muted">Before the first attempt. Press Play or Next event, or move the timeline.</p>
    </section>`;
  }
  const attempt = result.attempts[current.attempt - 1];
  const before = result.cacheStates[current.attempt - 2];
  const after = result.cacheStates[current.attempt - 1];
  const attemptDone = result.events.slice(0, cursor + 1).some((e) => e.attempt === current.attempt && e.stage === 'selection');
  // Why a conditional request got 200 (or 304) is said once its answer is in, not before.
  const answered = result.events.slice(0, cursor + 1).some((e) => e.attempt === current.attempt && e.kind === 'response.received');
  const detail = Object.entries(current.detail ?? {}).filter(([k]) => k !== 'entryBefore' && k !== 'why' && k !== 'revalidation');
  return html`<section class="moment panel" id="moment" aria-labelledby="moment-h">
    <h2 id="moment-h">Moment: attempt ${current.attempt} at ${modelSeconds(current.atMs / 1000)}, ${LANE_NAME[current.stage]}</h2>
    <p aria-live=${playing ? 'off' : 'polite'}><${Badge} tone=${kindClass(current)} text=${current.kind} /> <span id="moment-message">${current.message}</span></p>
    ${attempt
      ? html`<p class="why" id="moment-why"><strong>Why ${attempt.action === 'fetch' ? 'it went to the network' : 'no request'}:</strong> ${attempt.why}.</p>`
      : null}
    ${attempt && revalidationOf(attempt) && answered ? html`<p class="revalidation" id="moment-revalidation"><strong>${attempt.status === 304 ? 'Why 304:' : 'Why 200, not 304:'}</strong> ${revalidationOf(attempt)}.</p>` : null}
    ${attempt?.hiddenNewer ? html`<p class="hidden-newer" id="moment-hidden">${attempt.hiddenNewer}.</p>` : null}
    <div class="grid-2 tight">
      <div>
        ${detail.length > 0
          ? html`<dl class="detail">${detail.map(([k, v]) => html`<div><dt>${k}</dt><dd><pre>${showValue(v)}</pre></dd></div>`)}</dl>`
          : html`<p class="muted">No further detail for this step.</p>`}
      </div>
      <div class="entry-wrap">
        <table class="data compact">
          <caption>Cache entry around attempt ${current.attempt}</caption>
          <thead><tr><th scope="col">Field</th><th scope="col">Before</th><th scope="col">${attemptDone ? 'After' : 'After (when the attempt ends)'}</th></tr></thead>
          <tbody>
            ${ENTRY_ROWS.map(([label, f]) => html`<tr><th scope="row">${label}</th><td>${f(before)}</td><td>${f(after)}</td></tr>`)}
          </tbody>
        </table>
      </div>
    </div>
  </section>`;
}
