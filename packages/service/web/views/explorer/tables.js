// @ts-check
/** The run as text: summary tiles, the attempts (with why each went to the network) and the statistics. */
import { html } from '../../lib/vendor.js';
import { modelSeconds, num } from '../../lib/format.js';
import { Badge, TableWrap, Tile } from '../common.js';
import { LANE_NAME } from './lanes.js';

/** @typedef {import('../../lib/types.js').TraceResult} TraceResult */
/** @typedef {import('../../lib/types.js').TraceEvent} TraceEvent */
/** @typedef {import('../../lib/types.js').TraceStats} TraceStats */

/**
 * What a conditional request's validator did (`revalidation`, set by the library for a 200 or a
 * 304 to a conditional request): why it got 200 rather than 304, or 304.
 * @param {TraceResult['attempts'][number]} a
 * @returns {string | undefined}
 */
export function revalidationOf(a) {
  return /** @type {{ revalidation?: string }} */ (a).revalidation;
}

/** @type {[keyof TraceStats, string][]} */
export const STATS = [
  ['networkFetches', 'Network fetches'],
  ['cacheHits', 'Cache hits'],
  ['notModified', '304 Not Modified'],
  ['bytesTransferred', 'Bytes transferred'],
  ['accepted', 'Accepted selections'],
  ['rejected', 'Rejected selections'],
  ['backoffSkips', 'Skipped by backoff'],
  ['staleSelections', 'Accepted stale'],
];

/** @param {{ result: TraceResult, pending: boolean }} props */
export function Summary({ result, pending }) {
  const s = result.stats;
  return html`<div class="summary">
    <div class="tiles" role="group" aria-label="Run summary">
      <${Tile} label="network fetches" value=${s.networkFetches} />
      <${Tile} label="cache hits" value=${s.cacheHits} />
      <${Tile} label="304 Not Modified" value=${s.notModified} />
      <${Tile} label="bytes transferred" value=${num(s.bytesTransferred)} />
      <${Tile} label="accepted" value=${s.accepted} tone=${s.accepted > 0 ? 't-good' : ''} />
      <${Tile} label="rejected" value=${s.rejected} tone=${s.rejected > 0 ? 't-bad' : ''} />
    </div>
    <p class="summary-line" id="trace-summary" role="status">${pending ? 'Recomputing… ' : ''}${result.summary}.</p>
  </div>`;
}

/** @param {{ result: TraceResult, current: TraceEvent | undefined }} props */
export function AttemptsTable({ result, current }) {
  return html`<${TableWrap} class="attempts-wrap" label="Attempts">
    <table class="data attempts" id="trace-attempts">
      <caption>Attempts</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Start</th><th scope="col">Action</th><th scope="col">Why</th><th scope="col">Status</th><th scope="col">Card</th><th scope="col">Outcome</th></tr></thead>
      <tbody>
        ${result.attempts.map(
          (a) => html`<tr key=${a.index} data-attempt=${a.index} class=${current?.attempt === a.index ? 'row-selected' : ''}>
            <th scope="row">${a.index}</th>
            <td class="num">${modelSeconds(a.at)}</td>
            <td>${a.action}${a.ifNoneMatch ? html`<div class="small ink-2 nowrap">If-None-Match ${a.ifNoneMatch}</div>` : null}${revalidationOf(a) ? html`<div class="small ink-2 revalidation" data-revalidation>${a.status === 304 ? '304: ' : '200, not 304: '}${revalidationOf(a)}.</div>` : null}</td>
            <td class="why-cell" data-why>${a.why}</td>
            <td class="num" data-status>${a.status ?? '—'}</td>
            <td data-card>${a.cardVersion ?? '—'}${a.stale ? ' (stale)' : ''}</td>
            <td>
              <${Badge} text=${a.outcome} />
              ${a.outcome === 'rejected' ? html` <span class="reject-stage" data-lane=${a.lane}>at ${LANE_NAME[a.lane ?? 'request']}${a.stage && a.stage !== 'fetch' && a.stage !== 'match' ? ` (${a.stage})` : ''}</span><div class="reason">${a.reason}</div>` : null}
              ${a.note ? html`<div class="reason">${a.note}</div>` : null}
              ${a.hiddenNewer ? html`<div class="reason hidden-newer">${a.hiddenNewer}.</div>` : null}
            </td>
          </tr>`,
        )}
      </tbody>
    </table>
  <//>`;
}

/** @param {{ stats: TraceStats, baseline: TraceStats | undefined }} props */
export function StatsTable({ stats, baseline }) {
  return html`<${TableWrap} label="Statistics">
    <table class="data stats" id="trace-stats">
      <caption>Statistics</caption>
      <thead><tr><th scope="col">Statistic</th><th scope="col">Value</th>${baseline ? html`<th scope="col">Baseline</th>` : null}</tr></thead>
      <tbody>
        ${STATS.map(
          ([k, label]) => html`<tr>
            <th scope="row">${label}</th>
            <td class="num" data-stat=${k}>${num(stats[k])}</td>
            ${baseline ? html`<td class=${`num ${baseline[k] !== stats[k] ? 'changed' : 'muted'}`}>${num(baseline[k])}</td>` : null}
          </tr>`,
        )}
      </tbody>
    </table>
  <//>`;
}
