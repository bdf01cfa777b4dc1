// @ts-check
/**
 * Timeline: the story from the service's journal — snapshots, alerts and their resolutions,
 * admissions and refusals, health and verdict changes, card changes — one lane per endpoint, a
 * mark per event. Every mark is a focusable button (keyboard and touch) whose details show in the
 * page. Cache chatter is never drawn as events: each endpoint's lane says its rate of hits, 304s,
 * stale serving and requests. The same events are a text table below.
 */
import { html, useEffect, useMemo, useState } from '../lib/vendor.js';
import { clockTime, decidingStage, describeEvent, duration, endpointLabel, eventClass, eventOutcome, shortDigest } from '../lib/format.js';
import { cardHref, inspectHref } from '../lib/routes.js';
import { activityText } from './endpoints.js';
import { readActivity } from '../lib/store.js';
import { Badge, EmptyRow, TableWrap, TraceRef, ViewHeader, useMedia, useNow } from './common.js';

/** @typedef {import('../lib/types.js').DiscoveryEvent} DiscoveryEvent */
/** @typedef {import('../lib/store.js').LiveStore} LiveStore */

const WINDOWS = [
  { id: 'all', label: 'the whole journal', ms: Infinity },
  { id: '5m', label: 'last 5 minutes', ms: 300_000 },
  { id: '15m', label: 'last 15 minutes', ms: 900_000 },
  { id: '1h', label: 'last hour', ms: 3_600_000 },
  { id: '6h', label: 'last 6 hours', ms: 6 * 3_600_000 },
  { id: '24h', label: 'last 24 hours', ms: 24 * 3_600_000 },
];
const TICKS = [1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000];
const W = 1000;
const LABEL_W = 200;
const LANE_H = 40;
const TOP = 26;
/** Widths of the rate strip's buckets: the smallest that keeps the window within 60 buckets. */
const BUCKETS = [60_000, 120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000];
const STRIP_H = 13;
/** The rate strip's kinds, in the order their bars stand in a bucket. */
const STRIP_KINDS = /** @type {const} */ ([
  { key: 'hits', label: 'hits' },
  { key: 'revalidated', label: '304s' },
  { key: 'fetches', label: 'requests' },
  { key: 'failures', label: 'failures' },
]);
const SERVICE = '(snapshots)';
const ALERTS = '(alerts)';

/** A restart, a takeover and a configuration reload (applied or refused): marks across every lane, labelled in the service lane. */
const SERVICE_MARKS = new Set(['service.started', 'replica.leader', 'config.reloaded', 'config.refused']);

/** What a rollout decision's mark reads (`rollout.<action>`); a step shows its share. */
const ROLLOUT_MARK = /** @type {Record<string, string>} */ ({ held: 'held', resumed: 'resumed', promoted: 'promoted', 'rolled-back': 'rollback', superseded: 'replaced', withdrawn: 'withdrawn' });

/** What the filter shows, by kind of event. The story kinds are on by default. */
const KINDS = [
  {
    id: 'story',
    label: 'snapshots, rollouts, alerts and resolutions, restarts, takeovers and reloads',
    on: true,
    test: (/** @type {DiscoveryEvent} */ e) => e.type.startsWith('snapshot.') || e.type.startsWith('rollout.') || e.type.startsWith('alert') || e.type === 'routing.evaluated' || SERVICE_MARKS.has(e.type),
  },
  { id: 'admission', label: 'admissions and refusals', on: true, test: (/** @type {DiscoveryEvent} */ e) => e.type.startsWith('endpoint.') },
  { id: 'state', label: 'health and match verdicts', on: true, test: (/** @type {DiscoveryEvent} */ e) => e.type === 'health.changed' || e.type === 'match.verdict' },
  { id: 'card', label: 'card changes (new or rejected cards)', on: true, test: (/** @type {DiscoveryEvent} */ e) => e.type.startsWith('card.') },
  { id: 'catalogs', label: 'AI Catalog reads', on: false, test: (/** @type {DiscoveryEvent} */ e) => e.type === 'catalog.read' },
  { id: 'actions', label: 'who did what (refresh, confirm, inspect, session ends and upgrades)', on: true, test: (/** @type {DiscoveryEvent} */ e) => e.type === 'api.action' },
  { id: 'sessions', label: 'sessions and agent trees', on: false, test: (/** @type {DiscoveryEvent} */ e) => e.type.startsWith('session.') || e.type.startsWith('tree.') },
];

/** @param {DiscoveryEvent} e */
function kindOf(e) {
  return KINDS.find((k) => k.test(e))?.id ?? 'sessions';
}

/** @param {DiscoveryEvent} e */
function laneOf(e) {
  if (e.type === 'alert' || e.type === 'alert.resolved') return ALERTS;
  return e.type.startsWith('snapshot.') || e.endpoint === undefined ? SERVICE : e.endpoint;
}

/** @param {{ store: LiveStore }} props */
export function TimelineView({ store }) {
  const now = useNow(1000);
  const [windowId, setWindowId] = useState('all');
  const [kinds, setKinds] = useState(() => new Set(KINDS.filter((k) => k.on).map((k) => k.id)));
  const [lane, setLane] = useState('all');
  const [limit, setLimit] = useState(150);
  const [selected, setSelected] = useState(/** @type {number | undefined} */ (undefined));
  // On a phone a time axis 390 px wide is neither readable nor tappable: the same marks as a
  // vertical list, newest first, each a full-width button.
  const narrow = useMedia(NARROW);
  const [listLimit, setListLimit] = useState(60);
  const events = store.events;
  const win = WINDOWS.find((w) => w.id === windowId) ?? WINDOWS[0];
  const title = (/** @type {string} */ l) => (l === SERVICE ? 'snapshots' : l === ALERTS ? 'alerts' : store.nameOf(l) || endpointLabel(l));

  const shown = useMemo(() => events.filter((e) => kinds.has(kindOf(e))), [events, events.length, kinds]);
  // An alert with a key is open until the resolution with the same key.
  const resolutions = useMemo(() => {
    /** @type {Map<number, DiscoveryEvent>} alert seq → its resolution */
    const out = new Map();
    /** @type {Map<string, DiscoveryEvent>} */
    const open = new Map();
    for (const e of events) {
      if (e.type === 'alert' && e.key) open.set(e.key, e);
      else if (e.type === 'alert.resolved' && e.key && open.has(e.key)) {
        out.set(/** @type {DiscoveryEvent} */ (open.get(e.key)).seq, e);
        open.delete(e.key);
      }
    }
    return out;
  }, [events, events.length]);
  const lanes = useMemo(() => {
    const set = new Set((store.endpoints ?? []).map((e) => e.baseUrl));
    for (const e of shown) if (laneOf(e) === e.endpoint && e.endpoint !== undefined) set.add(e.endpoint);
    return [SERVICE, ALERTS, ...[...set].sort((a, b) => (title(a) + a < title(b) + b ? -1 : 1))];
  }, [store.endpoints, shown]);
  const activity = new Map((store.activity?.endpoints ?? []).map((a) => [a.endpoint, a]));
  const windowMs = store.activity?.windowMs ?? 300_000;
  const [series, setSeries] = useState(/** @type {Map<string, import('../lib/types.js').ActivitySeries>} */ (new Map()));

  const end = Math.max(now, events.at(-1)?.at ?? 0);
  const first = (shown[0]?.at ?? end - 60_000) - 1_000;
  const start = win.ms === Infinity ? Math.min(first, end - 10_000) : end - win.ms;
  const span = Math.max(1, end - start);
  const x = (/** @type {number} */ t) => LABEL_W + ((Math.max(t, start) - start) / span) * (W - LABEL_W - 16);
  const inWindow = shown.filter((e) => e.at >= start);
  const step = TICKS.find((t) => span / t <= 8) ?? 86_400_000;
  const ticks = [];
  for (let t = Math.ceil(start / step) * step; t <= end; t += step) ticks.push(t);
  const height = TOP + lanes.length * LANE_H + 8;
  const laneY = (/** @type {string} */ l) => TOP + lanes.indexOf(l) * LANE_H + LANE_H / 2;
  const published = inWindow.filter((e) => e.type === 'snapshot.published').length;
  const alerts = inWindow.filter((e) => e.type === 'alert').length;
  const chosen = selected === undefined ? undefined : events.find((e) => e.seq === selected);
  const bucketMs = BUCKETS.find((b) => span / b <= 60) ?? (BUCKETS.at(-1) ?? 60_000);
  const seriesFrom = Math.floor(start / bucketMs) * bucketMs;

  // The rate strip's series: read again when the counts change (the store re-reads them,
  // throttled, as chatter arrives) or the window moves to another bucket.
  useEffect(() => {
    let live = true;
    readActivity(`from=${seriesFrom}&bucketMs=${bucketMs}`).then(
      (/** @type {import('../lib/types.js').ActivityJson} */ a) => {
        if (live) setSeries(new Map(a.endpoints.flatMap((x) => (x.series ? [[x.endpoint, x.series]] : []))));
      },
      () => {},
    );
    return () => void (live = false);
  }, [store.activity, seriesFrom, bucketMs]);

  const listed = useMemo(() => {
    const out = [];
    for (let i = shown.length - 1; i >= 0 && out.length < limit; i--) {
      const e = /** @type {DiscoveryEvent} */ (shown[i]);
      if (lane !== 'all' && laneOf(e) !== lane) continue;
      out.push(e);
    }
    return out;
  }, [shown, lane, limit]);

  /** @param {string} id @param {boolean} on */
  const toggle = (id, on) => {
    const next = new Set(kinds);
    if (on) next.add(id);
    else next.delete(id);
    setKinds(next);
  };

  // On a phone the details open under the chosen item, not a screen away below the list.
  const detail = html`<section class="panel mark-detail" id="timeline-detail" aria-live="polite" aria-labelledby="timeline-detail-h">
    <h2 id="timeline-detail-h">Details</h2>
    ${chosen ? html`<${Detail} e=${chosen} lane=${title(laneOf(chosen))} resolution=${resolutions.get(chosen.seq)} raised=${chosen.type === 'alert.resolved' ? [...resolutions].find(([, r]) => r.seq === chosen.seq)?.[0] : undefined} events=${events} traceUrl=${store.whoami?.traceUrl} />` : html`<p class="muted">Choose a mark on the timeline (Tab to it and press Enter, click or tap) to see what happened here.</p>`}
  </section>`;

  return html`<section aria-labelledby="view-title">
    <${ViewHeader} title="Timeline">The story from the service’s journal: snapshots, alerts and their resolutions, admissions and refusals, health and verdicts. Cache hits, 304s and retries are counted per endpoint (in each lane), never drawn as events. Choose a mark (Tab, Enter, or tap) for its details.<//>
    <form class="filters" aria-label="Timeline options" onSubmit=${(/** @type {Event} */ ev) => ev.preventDefault()}>
      <label>Window
        <select id="timeline-window" value=${windowId} onChange=${(/** @type {any} */ ev) => setWindowId(ev.currentTarget.value)}>
          ${WINDOWS.map((w) => html`<option value=${w.id}>${w.label}</option>`)}
        </select>
      </label>
      <fieldset class="kinds">
        <legend>Show</legend>
        ${KINDS.map(
          (k) => html`<label class="check"><input type="checkbox" id=${`tl-kind-${k.id}`} checked=${kinds.has(k.id)} onChange=${(/** @type {any} */ ev) => toggle(k.id, ev.currentTarget.checked)} /> ${k.label}</label>`,
        )}
      </fieldset>
      <span class="muted" id="timeline-count">${inWindow.length} events in the window · ${events.length} in the journal${store.journalComplete ? ' (back to the retention horizon)' : ''}</span>
    </form>
    ${narrow
      ? html`<${PhoneTimeline} events=${inWindow} limit=${listLimit} more=${() => setListLimit(listLimit + 60)} laneOf=${(/** @type {DiscoveryEvent} */ e) => title(laneOf(e))} selected=${selected} onSelect=${setSelected} detail=${detail} />`
      : html`<figure class="timeline-figure">
      <svg class="timeline" viewBox=${`0 0 ${W} ${height}`} role="group" aria-labelledby="timeline-caption" preserveAspectRatio="xMinYMin meet">
        ${ticks.map(
          (t) => html`<g class="tick" aria-hidden="true">
            <line x1=${x(t)} x2=${x(t)} y1=${TOP - 6} y2=${height - 6} />
            <text x=${x(t)} y=${TOP - 10} text-anchor="middle">${clockTime(t).slice(0, step >= 60_000 ? 5 : 8)}</text>
          </g>`,
        )}
        ${lanes.map(
          (l, i) => html`<g class=${`lane ${i % 2 ? 'lane-odd' : ''}`} data-lane=${l}>
            <rect x="0" y=${TOP + i * LANE_H} width=${W} height=${LANE_H} />
            ${l === SERVICE || l === ALERTS
              ? html`<text x="8" y=${TOP + i * LANE_H + LANE_H / 2 + 4} class="lane-name">${title(l)}</text>`
              : html`<text x="8" y=${TOP + i * LANE_H + 13} class="lane-name">${title(l)}</text>
                  <text x="8" y=${TOP + i * LANE_H + 25} class="lane-label">${endpointLabel(l)}</text>
                  <${LaneRate} y=${TOP + i * LANE_H + 36} text=${rateLine(activity.get(l), windowMs)} />
                  <${RateStrip} s=${series.get(l)} lane=${title(l)} x=${x} start=${start} end=${end} bottom=${TOP + (i + 1) * LANE_H - 2} />`}
          </g>`,
        )}
        ${inWindow
          .filter((e) => e.type === 'alert' && e.key)
          .map((e) => {
            const r = resolutions.get(e.seq);
            return html`<line class=${`alert-span ${r ? 'resolved' : 'open'}`} x1=${x(e.at)} x2=${x(r ? r.at : end)} y1=${laneY(ALERTS)} y2=${laneY(ALERTS)} aria-hidden="true" />`;
          })}
        ${inWindow.map(
          (e) => html`<${Mark} key=${e.seq} e=${e} cx=${x(e.at)} cy=${laneY(laneOf(e))} top=${TOP} bottom=${height - 8} lane=${title(laneOf(e))} selected=${e.seq === selected} onSelect=${() => setSelected(e.seq)} />`,
        )}
      </svg>
      <figcaption id="timeline-caption">
        ${inWindow.length} events (${win.label}) across ${lanes.length - 2} endpoints${published ? `, ${published} snapshot(s) published` : ''}${alerts ? `, ${alerts} alert(s)` : ''}. Each mark is a button; the table below lists the same events.
      </figcaption>
    </figure>`}
    ${narrow ? null : detail}
    <${Legend} />
    ${(store.activity?.endpoints.length ?? 0) > 0
      ? html`<h2 id="activity-h">Cache activity per endpoint</h2>
          <${TableWrap}>
            <table class="data activity" aria-describedby="activity-h">
              <caption>Requests and cache results in the last ${Math.round(windowMs / 60_000)} minutes, and since ${clockTime(store.activity?.since ?? 0).slice(0, 8)} (counted, not journaled)</caption>
              <thead><tr><th scope="col">Endpoint</th><th scope="col">Last ${Math.round(windowMs / 60_000)} min</th><th scope="col">Since the service started</th></tr></thead>
              <tbody>
                ${(store.activity?.endpoints ?? []).map(
                  (a) => html`<tr key=${a.endpoint} data-endpoint=${a.endpoint}>
                    <th scope="row">${title(a.endpoint)}<span class="muted small"> ${endpointLabel(a.endpoint)}</span></th>
                    <td>${activityText(a, windowMs)}</td>
                    <td class="wrap">${Object.entries(a.counts).map(([k, v]) => `${k.replace(/^card\.(result\.)?/, '')} ${v}`).join(' · ')}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          <//>`
      : null}
    <h2 id="timeline-list-h">Events</h2>
    <form class="filters" aria-label="Event list options" onSubmit=${(/** @type {Event} */ ev) => ev.preventDefault()}>
      <label>Lane
        <select id="timeline-lane" value=${lane} onChange=${(/** @type {any} */ ev) => setLane(ev.currentTarget.value)}>
          <option value="all">all</option>
          ${lanes.map((l) => html`<option value=${l}>${title(l)}${l === SERVICE || l === ALERTS ? '' : ` (${endpointLabel(l)})`}</option>`)}
        </select>
      </label>
    </form>
    <${TableWrap}>
      <table class="data events" aria-describedby="timeline-list-h">
        <caption>Newest first; ${listed.length} shown</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Endpoint</th><th scope="col">Outcome</th><th scope="col">Decided by</th><th scope="col">What happened</th></tr></thead>
        <tbody>
          ${listed.length === 0 ? html`<${EmptyRow} cols=${5} text="No events yet." />` : null}
          ${listed.map(
            (e) => html`<tr key=${e.seq} data-seq=${e.seq} data-type=${e.type} class=${e.seq === selected ? 'row-selected' : ''}>
              <td class="num"><time datetime=${new Date(e.at).toISOString()}>${clockTime(e.at)}</time></td>
              <td>${e.endpoint ? html`${title(e.endpoint)}<span class="muted small"> ${endpointLabel(e.endpoint)}</span>` : html`<span class="muted">service</span>`}</td>
              <td><${Badge} tone=${eventClass(e)} text=${eventOutcome(e)} /></td>
              <td>${decidingStage(e)}</td>
              <td class="wrap">${describeEvent(e)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>
    ${listed.length >= limit ? html`<p><button type="button" class="btn" onClick=${() => setLimit(limit + 150)}>Show 150 more</button></p>` : null}
  </section>`;
}

/** Below this width the timeline is a vertical list. */
const NARROW = '(max-width: 640px)';

/**
 * The timeline on a phone: the window's marks newest first, one full-width button each (time,
 * lane, outcome, sentence); choosing one fills *Details* as a mark does.
 * @param {{ events: DiscoveryEvent[], limit: number, more: () => void, laneOf: (e: DiscoveryEvent) => string, selected: number | undefined, onSelect: (seq: number) => void, detail: unknown }} props
 */
function PhoneTimeline({ events, limit, more, laneOf, selected, onSelect, detail }) {
  const newest = events.slice(-limit).reverse();
  return html`<section class="timeline-list" aria-labelledby="timeline-list-caption">
    <p id="timeline-list-caption" class="muted small">${events.length} events in the window, newest first. Each is a button: tap it for its details.</p>
    <ol>
      ${newest.map(
        (e) => html`<li key=${e.seq}>
          <button type="button" class=${`tl-item${e.seq === selected ? ' selected' : ''}`} data-seq=${e.seq} aria-pressed=${e.seq === selected ? 'true' : 'false'} onClick=${() => onSelect(e.seq)}>
            <span class="tl-when"><time datetime=${new Date(e.at).toISOString()}>${clockTime(e.at).slice(0, 8)}</time> · ${laneOf(e)}</span>
            <span class="tl-what"><${Badge} tone=${eventClass(e)} text=${eventOutcome(e)} /> ${describeEvent(e)}</span>
          </button>
          ${e.seq === selected ? detail : null}
        </li>`,
      )}
    </ol>
    ${events.length > limit ? html`<p><button type="button" class="btn" onClick=${more}>Show ${Math.min(60, events.length - limit)} older</button></p>` : null}
    ${newest.some((e) => e.seq === selected) ? null : detail}
  </section>`;
}

/** @param {import('../lib/types.js').EndpointActivity | undefined} a @param {number} windowMs */
function rateLine(a, windowMs) {
  if (!a) return 'no cache activity';
  const m = windowMs / 60_000;
  const r = a.recent;
  const per = (/** @type {number} */ n) => Math.round((n / m) * 10) / 10;
  const requests = (r['card.fetch.conditional'] ?? 0) + (r['card.fetch.unconditional'] ?? 0);
  const bad = (r['card.result.stale'] ?? 0) + (r['card.result.failed'] ?? 0);
  return `${per(r['card.result.hit'] ?? 0)} hits · ${per(r['card.result.revalidated'] ?? 0)} 304 · ${per(requests)} req${bad > 0 ? ` · ${per(bad)} stale/failed` : ''} per min`;
}

/**
 * The lane's rate line, squeezed into the label column when it is too long for it (about 5.2 px
 * per character at its size), so it never runs into the chart.
 * @param {{ y: number, text: string }} props
 */
function LaneRate({ y, text }) {
  const room = LABEL_W - 14;
  return text.length * 5.2 > room
    ? html`<text x="8" y=${y} class="lane-rate" textLength=${room} lengthAdjust="spacingAndGlyphs">${text}</text>`
    : html`<text x="8" y=${y} class="lane-rate">${text}</text>`;
}

/**
 * An endpoint's cache chatter as rates: per time bucket, four thin bars (hits, 304s, requests,
 * failures) whose heights are per-minute rates, scaled to the lane's busiest bucket. Its text
 * alternative (`aria-label`) gives each kind's average and peak per minute over the window.
 * @param {{ s: import('../lib/types.js').ActivitySeries | undefined, lane: string, x: (t: number) => number, start: number, end: number, bottom: number }} props
 */
function RateStrip({ s, lane, x, start, end, bottom }) {
  if (!s) return null;
  const perMin = s.bucketMs / 60_000;
  /** @type {number[]} bucket indexes within the window */
  const shown = [];
  for (let i = 0; i < s.hits.length; i++) {
    const at = s.from + i * s.bucketMs;
    if (at + s.bucketMs > start && at <= end) shown.push(i);
  }
  let peak = 0;
  for (const i of shown) for (const k of STRIP_KINDS) peak = Math.max(peak, (s[k.key][i] ?? 0) / perMin);
  const round = (/** @type {number} */ n) => (n >= 10 ? Math.round(n) : Math.round(n * 10) / 10);
  const summary = STRIP_KINDS.map((k) => {
    const rates = shown.map((i) => (s[k.key][i] ?? 0) / perMin);
    const avg = rates.length ? rates.reduce((a, b) => a + b, 0) / rates.length : 0;
    return `${k.label} ${round(avg)} per minute on average, at most ${round(rates.length ? Math.max(...rates) : 0)}`;
  }).join('; ');
  const label = `${lane}: cache activity over the window in buckets of ${perMin >= 60 ? `${perMin / 60} h` : `${perMin} min`}: ${summary}`;
  return html`<g class="rate-strip" role="img" aria-label=${label} data-bucket-ms=${s.bucketMs} data-buckets=${shown.length} data-peak=${round(peak)}>
    ${peak === 0
      ? null
      : shown.map((i) => {
          // The bucket's visible part; its four bars (at most 5 px each) centred in it.
          const x0 = x(s.from + i * s.bucketMs);
          const w = Math.max(2, x(Math.min(end, s.from + (i + 1) * s.bucketMs)) - x0);
          const bar = Math.min(5, Math.max(0.5, (w - 1) / STRIP_KINDS.length));
          const left = x0 + (w - bar * STRIP_KINDS.length) / 2;
          return STRIP_KINDS.map((k, j) => {
            const n = s[k.key][i] ?? 0;
            if (n === 0) return null;
            const h = Math.max(1.5, ((n / perMin) / peak) * STRIP_H);
            return html`<rect class=${`rate rate-${k.key}`} x=${left + j * bar} y=${bottom - h} width=${bar} height=${h} />`;
          });
        })}
  </g>`;
}

/**
 * A mark: a focusable button in the SVG (Tab, Enter / Space, click or tap select it).
 * @param {{ e: DiscoveryEvent, cx: number, cy: number, top: number, bottom: number, lane: string, selected: boolean, onSelect: () => void }} props
 */
function Mark({ e, cx, cy, top, bottom, lane, selected, onSelect }) {
  // A restart or takeover mark shows its outcome word, which its name says first.
  // A rollout mark's name begins with the word its pill shows (its visible text is part of its name).
  const pill = e.type.startsWith('rollout.') ? `${ROLLOUT_MARK[e.type.slice('rollout.'.length)] ?? `▶ ${'share' in e ? (e.share ?? 0) : 0}%`} · ` : '';
  const label = `${pill}${clockTime(e.at)} · ${lane} · ${SERVICE_MARKS.has(e.type) ? `${eventOutcome(e)}: ` : ''}${describeEvent(e)}`;
  const common = {
    class: `mark ${eventClass(e)}${e.type.startsWith('rollout.') ? ' rollout-mark' : ''}${selected ? ' selected' : ''}`,
    tabindex: '0',
    role: 'button',
    'aria-label': label,
    'aria-pressed': selected ? 'true' : 'false',
    'data-seq': e.seq,
    'data-type': e.type,
    onClick: onSelect,
    onFocus: onSelect,
    onKeyDown: (/** @type {KeyboardEvent} */ ev) => {
      if (ev.key === 'Enter' || ev.key === ' ') {
        ev.preventDefault();
        onSelect();
      }
    },
  };
  let shape;
  switch (e.type) {
    case 'card.result':
      shape = html`<circle cx=${cx} cy=${cy} r="6" />`;
      break;
    case 'health.changed':
      shape = html`<path d=${`M${cx} ${cy - 8}L${cx + 8} ${cy}L${cx} ${cy + 8}L${cx - 8} ${cy}Z`} />`;
      break;
    case 'snapshot.published':
    case 'snapshot.held':
      shape = html`<line class="snapline" x1=${cx} x2=${cx} y1=${top} y2=${bottom} />
        <rect x=${cx - 15} y=${cy - 10} width="30" height="20" rx="3" />
        <text x=${cx} y=${cy + 4} text-anchor="middle">${e.type === 'snapshot.held' ? 'held' : `v${e.version}`}</text>`;
      break;
    case 'service.started':
    case 'replica.leader':
    case 'config.reloaded':
    case 'config.refused':
      shape = html`<line class="snapline" x1=${cx} x2=${cx} y1=${top} y2=${bottom} />
        <rect x=${cx - 28} y=${cy - 10} width="56" height="20" rx="10" />
        <text x=${cx} y=${cy + 4} text-anchor="middle">${eventOutcome(e)}</text>`;
      break;
    case 'rollout.started':
    case 'rollout.advanced':
    case 'rollout.held':
    case 'rollout.resumed':
    case 'rollout.promoted':
    case 'rollout.rolled-back':
    case 'rollout.superseded':
    case 'rollout.withdrawn':
      // A rollout decision: a pill on a dotted line across the lanes, reading its share or its word.
      shape = html`<line class="snapline" x1=${cx} x2=${cx} y1=${top} y2=${bottom} />
        <rect x=${cx - 30} y=${cy - 10} width="60" height="20" rx="10" />
        <text x=${cx} y=${cy + 4} text-anchor="middle">${ROLLOUT_MARK[e.type.slice('rollout.'.length)] ?? `▶ ${e.share ?? 0}%`}</text>`;
      break;
    case 'alert':
      shape = html`<path class="alert-mark" d=${`M${cx} ${cy - 11}L${cx + 11} ${cy + 8}L${cx - 11} ${cy + 8}Z`} />`;
      break;
    case 'alert.resolved':
      shape = html`<circle cx=${cx} cy=${cy} r="8" /><path class="check-mark" d=${`M${cx - 4} ${cy}L${cx - 1} ${cy + 3}L${cx + 4} ${cy - 3}`} />`;
      break;
    default:
      shape = html`<rect x=${cx - 6} y=${cy - 6} width="12" height="12" />`;
  }
  return html`<g ...${common}>${shape}</g>`;
}

/**
 * The chosen mark's details, in the page.
 * @param {{ e: DiscoveryEvent, lane: string, resolution: DiscoveryEvent | undefined, raised: number | undefined, events: DiscoveryEvent[], traceUrl: string | null | undefined }} props
 */
function Detail({ e, lane, resolution, raised, events, traceUrl }) {
  const raisedEvent = raised === undefined ? undefined : events.find((x) => x.seq === raised);
  return html`<dl class="kv" data-seq=${e.seq}>
    <dt>When</dt><dd><time datetime=${new Date(e.at).toISOString()}>${new Date(e.at).toLocaleString()}</time></dd>
    <dt>Lane</dt><dd>${lane}${e.endpoint ? html` <span class="muted">${endpointLabel(e.endpoint)}</span>` : null}</dd>
    ${e.endpoint ? html`<dt>Endpoint</dt><dd class="row-links"><a href=${cardHref(e.endpoint)}>Card</a> <a href=${inspectHref(e.endpoint)} id="timeline-inspect">Inspect this endpoint</a></dd>` : null}
    <dt>What</dt><dd><${Badge} tone=${eventClass(e)} text=${eventOutcome(e)} /> ${describeEvent(e)}</dd>
    <dt>Decided by</dt><dd>${decidingStage(e)}</dd>
    ${e.type === 'alert'
      ? html`<dt>Resolution</dt><dd class="resolution">${resolution
          ? `resolved at ${clockTime(resolution.at).slice(0, 8)}, ${duration(resolution.at - e.at)} after it was raised: ${resolution.message ?? ''}`
          : e.key
            ? 'still open'
            : 'a single happening (nothing to resolve)'}</dd>`
      : null}
    ${e.type === 'alert.resolved'
      ? html`<dt>Raised</dt><dd>${raisedEvent ? `${clockTime(raisedEvent.at).slice(0, 8)}: ${raisedEvent.message ?? ''}` : e.raisedAt ? clockTime(e.raisedAt).slice(0, 8) : '—'}</dd>`
      : null}
    ${e.type.startsWith('rollout.')
      ? html`<dt>Rollout</dt><dd>${(e.agents ?? []).join(', ')}: ${e.share ?? 0} % of new sessions on the candidate <code title=${e.candidate}>${shortDigest(e.candidate)}</code> after this decision; <a href="#/rollout">the Rollout view</a></dd>`
      : null}
    ${e.type === 'snapshot.published' || e.type === 'snapshot.held' ? html`<dt>Agents</dt><dd>${(e.agents ?? []).join(', ') || 'none'}</dd><dt>Digest</dt><dd><code>${e.digest}</code></dd>` : null}
    ${e.reason && e.type !== 'snapshot.held' ? html`<dt>Reason</dt><dd>${e.code ? `${e.code}: ` : ''}${e.reason}</dd>` : null}
    ${e.traceId ? html`<dt>Trace</dt><dd class="trace"><${TraceRef} traceId=${e.traceId} template=${traceUrl} /></dd>` : null}
  </dl>`;
}

function Legend() {
  return html`<ul class="legend" aria-label="Legend">
    <li><span class="swatch o-snapshot" aria-hidden="true"></span>snapshot (vN on a dashed line; “held” when a guard held it)</li>
    <li><span class="swatch o-snapshot rollout-swatch" aria-hidden="true"></span>rollout decision (a pill on a dotted line: ▶ 5% for a step, held, resumed, promoted, rollback)</li>
    <li><span class="swatch o-service" aria-hidden="true"></span>restart, start or takeover (a long-dashed line: open alerts are carried over, not raised again)</li>
    <li><span class="shape shape-alert" aria-hidden="true">▲</span>alert (a bar runs to its resolution while open)</li>
    <li><span class="swatch o-good" aria-hidden="true"></span>✓ resolution, admitted, healthy, selected</li>
    <li><span class="shape" aria-hidden="true">■</span>admission, refusal or match verdict</li>
    <li><span class="shape" aria-hidden="true">◆</span>health change</li>
    <li><span class="shape" aria-hidden="true">●</span>card changed (purple) or rejected (orange)</li>
    <li><span class="strip-key" aria-hidden="true"><span class="rate-hits"></span><span class="rate-revalidated"></span><span class="rate-fetches"></span><span class="rate-failures"></span></span>rate strip per endpoint: hits, 304s, requests, failures per time bucket (height: per-minute rate, scaled to the lane’s busiest bucket)</li>
  </ul>`;
}
