// @ts-check
/**
 * Timeline: the discovery events over time, one lane per endpoint, a mark per event coloured by
 * outcome, with the stage that decided each; the same events as a text table below.
 */
import { html, useMemo, useState } from '../lib/vendor.js';
import { clockTime, decidingStage, describeEvent, endpointLabel, eventClass, eventOutcome } from '../lib/format.js';
import { Badge, EmptyRow, ViewHeader, useNow } from './common.js';

/** @typedef {import('../lib/types.js').DiscoveryEvent} DiscoveryEvent */
/** @typedef {import('../lib/store.js').LiveStore} LiveStore */

const WINDOWS = [
  { id: 'fit', label: 'since the first event, up to 5 minutes', ms: -1 },
  { id: '30s', label: 'last 30 seconds', ms: 30_000 },
  { id: '1m', label: 'last minute', ms: 60_000 },
  { id: '5m', label: 'last 5 minutes', ms: 300_000 },
  { id: '15m', label: 'last 15 minutes', ms: 900_000 },
  { id: 'all', label: 'everything received', ms: Infinity },
];
const TICKS = [1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000];
const W = 1000;
const LABEL_W = 190;
const LANE_H = 36;
const TOP = 26;
const SERVICE = '(snapshots)';
const ALERTS = '(alerts)';

const KINDS = [
  { id: 'all', label: 'all events' },
  { id: 'card', label: 'card fetches and results' },
  { id: 'state', label: 'admission, health and verdicts' },
  { id: 'publish', label: 'snapshots and alerts' },
];

/** @param {DiscoveryEvent} e @param {string} kind */
function ofKind(e, kind) {
  if (kind === 'all') return true;
  if (kind === 'card') return e.type.startsWith('card.');
  if (kind === 'state') return e.type.startsWith('endpoint.') || e.type === 'health.changed' || e.type === 'match.verdict';
  return e.type.startsWith('snapshot.') || e.type === 'alert';
}

/** @param {DiscoveryEvent} e */
function laneOf(e) {
  if (e.type === 'alert') return ALERTS;
  return e.type.startsWith('snapshot.') ? SERVICE : (e.endpoint ?? SERVICE);
}

/** @param {string} lane @param {Map<string, string>} names */
function laneTitle(lane, names) {
  if (lane === SERVICE) return 'snapshots';
  if (lane === ALERTS) return 'alerts';
  return names.get(lane) || endpointLabel(lane);
}

/** @param {{ store: LiveStore }} props */
export function TimelineView({ store }) {
  const now = useNow(1000);
  const [windowId, setWindowId] = useState('fit');
  const [hits, setHits] = useState(true);
  const [fetches, setFetches] = useState(false);
  const [lane, setLane] = useState('all');
  const [kind, setKind] = useState('all');
  const [limit, setLimit] = useState(150);
  const events = store.events;
  const win = WINDOWS.find((w) => w.id === windowId) ?? WINDOWS[0];

  const shown = useMemo(
    () => events.filter((e) => (hits || !(e.type === 'card.result' && e.outcome === 'hit')) && (fetches || e.type !== 'card.fetch')),
    [events, events.length, hits, fetches],
  );
  const names = new Map((store.endpoints ?? []).map((e) => [e.baseUrl, e.verdict?.localName ?? e.names[0] ?? '']));
  const lanes = useMemo(() => {
    const set = new Set((store.endpoints ?? []).map((e) => e.baseUrl));
    for (const e of events) if (e.endpoint !== undefined && laneOf(e) === e.endpoint) set.add(e.endpoint);
    return [SERVICE, ALERTS, ...[...set].sort()];
  }, [store.endpoints, events.length]);

  const end = Math.max(now, events.at(-1)?.at ?? 0);
  // "fit": from just before the first event (at least 5 s, at most 5 min of history).
  const first = (events[0]?.at ?? end - 5_000) - 300;
  const start = win.ms === Infinity ? Math.min(first, end - 5_000) : win.ms < 0 ? Math.max(end - 300_000, Math.min(first, end - 5_000)) : end - win.ms;
  const span = Math.max(1, end - start);
  const x = (/** @type {number} */ t) => LABEL_W + ((t - start) / span) * (W - LABEL_W - 12);
  const inWindow = shown.filter((e) => e.at >= start);
  const step = TICKS.find((t) => span / t <= 8) ?? 3_600_000;
  const ticks = [];
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) ticks.push(t);
  const height = TOP + lanes.length * LANE_H + 8;
  const laneY = (/** @type {string} */ l) => TOP + lanes.indexOf(l) * LANE_H + LANE_H / 2;
  const counts = new Map();
  for (const e of inWindow) counts.set(e.type, (counts.get(e.type) ?? 0) + 1);

  const listed = useMemo(() => {
    const out = [];
    for (let i = shown.length - 1; i >= 0 && out.length < limit; i--) {
      const e = /** @type {DiscoveryEvent} */ (shown[i]);
      if (lane !== 'all' && laneOf(e) !== lane) continue;
      if (!ofKind(e, kind)) continue;
      out.push(e);
    }
    return out;
  }, [shown, lane, kind, limit]);

  return html`<section aria-labelledby="view-title">
    <${ViewHeader} title="Timeline">Discovery events as they happen: one lane per endpoint, a mark per event coloured by its outcome. The table below lists the same events as text.<//>
    <form class="filters" aria-label="Timeline options" onSubmit=${(/** @type {Event} */ ev) => ev.preventDefault()}>
      <label>Window
        <select id="timeline-window" value=${windowId} onChange=${(/** @type {any} */ ev) => setWindowId(ev.currentTarget.value)}>
          ${WINDOWS.map((w) => html`<option value=${w.id}>${w.label}</option>`)}
        </select>
      </label>
      <label class="check"><input type="checkbox" checked=${hits} onChange=${(/** @type {any} */ ev) => setHits(ev.currentTarget.checked)} /> cache hits</label>
      <label class="check"><input type="checkbox" checked=${fetches} onChange=${(/** @type {any} */ ev) => setFetches(ev.currentTarget.checked)} /> requests sent</label>
      <span class="muted">${inWindow.length} events in the window · ${events.length} received</span>
    </form>
    <figure class="timeline-figure">
      <svg class="timeline" viewBox=${`0 0 ${W} ${height}`} role="img" aria-labelledby="timeline-caption" preserveAspectRatio="xMinYMin meet">
        ${ticks.map(
          (t) => html`<g class="tick">
            <line x1=${x(t)} x2=${x(t)} y1=${TOP - 6} y2=${height - 6} />
            <text x=${x(t)} y=${TOP - 10} text-anchor="middle">${clockTime(t).slice(0, 8)}</text>
          </g>`,
        )}
        ${lanes.map(
          (l, i) => html`<g class=${`lane ${i % 2 ? 'lane-odd' : ''}`}>
            <rect x="0" y=${TOP + i * LANE_H} width=${W} height=${LANE_H} />
            ${l === SERVICE || l === ALERTS
              ? html`<text x="8" y=${TOP + i * LANE_H + LANE_H / 2 + 4} class="lane-name">${laneTitle(l, names)}</text>`
              : html`<text x="8" y=${TOP + i * LANE_H + 15} class="lane-name">${laneTitle(l, names)}</text>
                  <text x="8" y=${TOP + i * LANE_H + 29} class="lane-label">${endpointLabel(l)}</text>`}
          </g>`,
        )}
        ${inWindow.map((e) => html`<${Mark} key=${e.seq} e=${e} cx=${x(e.at)} cy=${laneY(laneOf(e))} top=${TOP} bottom=${height - 8} />`)}
      </svg>
      <figcaption id="timeline-caption">
        ${inWindow.length} events (${win.label}) across ${lanes.length - 2} endpoints${counts.get('snapshot.published') ? `, ${counts.get('snapshot.published')} snapshot(s) published` : ''}${counts.get('alert') ? `, ${counts.get('alert')} alert(s)` : ''}. The table below lists them.
      </figcaption>
    </figure>
    <${Legend} />
    <h2 id="timeline-list-h">Events</h2>
    <form class="filters" aria-label="Event list options" onSubmit=${(/** @type {Event} */ ev) => ev.preventDefault()}>
      <label>Endpoint
        <select id="timeline-lane" value=${lane} onChange=${(/** @type {any} */ ev) => setLane(ev.currentTarget.value)}>
          <option value="all">all</option>
          ${lanes.map((l) => html`<option value=${l}>${laneTitle(l, names)}${l === SERVICE || l === ALERTS ? '' : ` (${endpointLabel(l)})`}</option>`)}
        </select>
      </label>
      <label>Kind
        <select id="timeline-kind" value=${kind} onChange=${(/** @type {any} */ ev) => setKind(ev.currentTarget.value)}>
          ${KINDS.map((k) => html`<option value=${k.id}>${k.label}</option>`)}
        </select>
      </label>
    </form>
    <div class="table-wrap">
      <table class="data events" aria-describedby="timeline-list-h">
        <caption>Newest first; ${listed.length} shown</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Endpoint</th><th scope="col">Outcome</th><th scope="col">Decided by</th><th scope="col">What happened</th></tr></thead>
        <tbody>
          ${listed.length === 0 ? html`<${EmptyRow} cols=${5} text="No events yet." />` : null}
          ${listed.map(
            (e) => html`<tr key=${e.seq} data-seq=${e.seq} data-type=${e.type}>
              <td class="num"><time datetime=${new Date(e.at).toISOString()}>${clockTime(e.at)}</time></td>
              <td>${e.endpoint ? html`${laneTitle(e.endpoint, names)}<span class="muted small"> ${endpointLabel(e.endpoint)}</span>` : html`<span class="muted">service</span>`}</td>
              <td><${Badge} tone=${eventClass(e)} text=${eventOutcome(e)} /></td>
              <td>${decidingStage(e)}</td>
              <td class="wrap">${describeEvent(e)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
    ${listed.length >= limit ? html`<p><button type="button" class="btn" onClick=${() => setLimit(limit + 150)}>Show 150 more</button></p>` : null}
  </section>`;
}

/** @param {{ e: DiscoveryEvent, cx: number, cy: number, top: number, bottom: number }} props */
function Mark({ e, cx, cy, top, bottom }) {
  const cls = `mark ${eventClass(e)}`;
  const title = html`<title>${clockTime(e.at)} · ${e.endpoint ? `${endpointLabel(e.endpoint)} · ` : ''}${describeEvent(e)} (decided by ${decidingStage(e)})</title>`;
  switch (e.type) {
    case 'card.result':
      return html`<circle class=${cls} cx=${cx} cy=${cy} r="5">${title}</circle>`;
    case 'card.fetch':
      return html`<line class=${`${cls} tickmark`} x1=${cx} x2=${cx} y1=${cy - 9} y2=${cy - 3}>${title}</line>`;
    case 'card.backoff':
      return html`<path class=${`${cls} cross`} d=${`M${cx - 4} ${cy - 4}L${cx + 4} ${cy + 4}M${cx - 4} ${cy + 4}L${cx + 4} ${cy - 4}`}>${title}</path>`;
    case 'health.changed':
      return html`<path class=${cls} d=${`M${cx} ${cy - 7}L${cx + 7} ${cy}L${cx} ${cy + 7}L${cx - 7} ${cy}Z`}>${title}</path>`;
    case 'match.verdict':
    case 'endpoint.admitted':
    case 'endpoint.refused':
    case 'endpoint.gone':
      return html`<rect class=${`${cls} square`} x=${cx - 5} y=${cy - 5} width="10" height="10">${title}</rect>`;
    case 'snapshot.published':
    case 'snapshot.held':
      return html`<g class=${cls}>
        <line class="snapline" x1=${cx} x2=${cx} y1=${top} y2=${bottom} />
        <rect x=${cx - 13} y=${cy - 8} width="26" height="16" rx="3">${title}</rect>
        <text x=${cx} y=${cy + 4} text-anchor="middle">${e.type === 'snapshot.held' ? 'held' : `v${e.version}`}</text>
      </g>`;
    case 'alert':
      return html`<path class=${`${cls} alert-mark`} d=${`M${cx} ${cy - 9}L${cx + 9} ${cy + 7}L${cx - 9} ${cy + 7}Z`}>${title}</path>`;
    default:
      return html`<circle class=${cls} cx=${cx} cy=${cy} r="3">${title}</circle>`;
  }
}

function Legend() {
  const items = [
    ['o-hit', 'hit (fresh cache)'],
    ['o-revalidated', '304 revalidated'],
    ['o-changed', '200 changed'],
    ['o-unchanged', '200 same bytes'],
    ['o-stale', 'stale / backoff'],
    ['o-invalid', 'invalid'],
    ['o-failed', 'failed'],
    ['o-good', 'admitted / healthy / selected'],
    ['o-snapshot', 'snapshot'],
    ['o-alert', 'alert'],
  ];
  return html`<ul class="legend" aria-label="Colour legend">
    ${items.map(([cls, label]) => html`<li><span class=${`swatch ${cls}`} aria-hidden="true"></span>${label}</li>`)}
    <li><span class="shape" aria-hidden="true">●</span> card result</li>
    <li><span class="shape" aria-hidden="true">◆</span> health</li>
    <li><span class="shape" aria-hidden="true">■</span> admission / verdict</li>
    <li><span class="shape" aria-hidden="true">▲</span> alert</li>
  </ul>`;
}
