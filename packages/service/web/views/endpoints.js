// @ts-check
/**
 * Endpoints: one row per endpoint with its sources, admission, cache state, health (from card
 * fetches and from real calls), match verdict and the reason for any refusal; filterable and
 * sortable.
 */
import { html, useEffect, useMemo, useState } from '../lib/vendor.js';
import { OUTCOME_LABEL, ago, duration, endpointLabel, num, outcomeClass, percent, securityBadge } from '../lib/format.js';
import { cardHref, inspectHref } from '../lib/routes.js';
import { Badge, CriticalChip, EmptyRow, Explained, SortHeader, TableWrap, Tile, ViewHeader, useNow } from './common.js';
import { causeWords, meaningOf } from '../lib/vocabulary.js';
import { ProposedBy } from './provenance.js';

/** @typedef {import('../lib/types.js').EndpointStatus} EndpointStatus */
/** @typedef {import('../lib/store.js').LiveStore} LiveStore */

const HEALTH_ORDER = ['healthy', 'pending', 'degraded', 'removed'];
/** Verdicts from the worst (what an operator must look at first) to the best. */
export const SEVERITY = ['removed', 'held', 'degraded', 'refused', 'pending', 'unsuitable', 'excluded', 'gone', 'selected'];

/** @param {EndpointStatus} e */
function healthState(e) {
  return e.admitted ? (e.health?.state ?? 'pending') : 'refused';
}

/** The one verdict the service gives the endpoint (refused, gone, pending, removed, unsuitable, excluded, held, degraded, selected). @param {EndpointStatus} e */
function verdictOf(e) {
  return e.state?.verdict ?? (e.admitted ? 'pending' : 'refused');
}

/** @param {EndpointStatus} e */
function lastOutcome(e) {
  if (e.cache?.lastOutcome) return e.cache.lastOutcome;
  if (e.lastFailure) return 'failed';
  return 'none';
}

/**
 * @param {EndpointStatus} e
 * @param {number} now
 * @returns {{ text: string, title: string }}
 */
function expiry(e, now) {
  const c = e.cache;
  if (!c) return { text: '—', title: 'no card cached' };
  const at = c.expiresAtWall ?? (c.expiresInMs !== undefined ? now + c.expiresInMs : undefined);
  if (at !== undefined) {
    const left = at - now;
    return left > 0 ? { text: `expires in ${duration(left)}`, title: new Date(at).toISOString() } : { text: `expired ${duration(-left)} ago`, title: new Date(at).toISOString() };
  }
  if (c.stale) return { text: 'past expiry (stale)', title: 'served stale after a failed refresh' };
  if (!c.usable) return { text: 'unusable', title: 'past its staleness bound' };
  return { text: 'expiry not reported', title: 'the API reports expiry on the server’s monotonic clock only (no expiresAtWall)' };
}

/**
 * Where the card came from, short: the path under the endpoint's origin (`/.well-known/agent.json`
 * for a 0.2 peer), else the whole URL.
 * @param {string} cardUrl @param {string} baseUrl
 */
function cardPath(cardUrl, baseUrl) {
  try {
    const u = new URL(cardUrl);
    return u.origin === new URL(baseUrl).origin ? u.pathname : cardUrl;
  } catch {
    return cardUrl;
  }
}

/**
 * @param {{ store: LiveStore }} props
 */
export function EndpointsView({ store }) {
  const now = useNow(1000);
  const [query, setQuery] = useState('');
  const [health, setHealth] = useState('all');
  const [verdict, setVerdict] = useState('all');
  const [outcome, setOutcome] = useState('all');
  const [sort, setSort] = useState(/** @type {import('./common.js').Sort} */ ({ col: 'verdict', dir: 'ascending' }));
  const all = store.endpoints;
  // Call health moves with every turn, and no event says so: read it when the view opens.
  useEffect(() => void store.refresh('calls'), []);

  const rows = useMemo(() => {
    const q = query.trim().toLowerCase();
    const list = (all ?? []).filter((e) => {
      if (q !== '' && ![e.baseUrl, ...e.names, ...e.sources, store.nameOf(e.baseUrl)].some((s) => s.toLowerCase().includes(q))) return false;
      if (health !== 'all' && healthState(e) !== health) return false;
      if (verdict !== 'all' && verdictOf(e) !== verdict) return false;
      if (outcome !== 'all' && lastOutcome(e) !== outcome) return false;
      return true;
    });
    /** @type {(e: EndpointStatus) => string | number} */
    const key = {
      endpoint: (/** @type {EndpointStatus} */ e) => `${store.nameOf(e.baseUrl)} ${e.baseUrl}`,
      health: (/** @type {EndpointStatus} */ e) => HEALTH_ORDER.indexOf(healthState(e)) + 10,
      outcome: (/** @type {EndpointStatus} */ e) => lastOutcome(e),
      // Severity first: removed, held, degraded, refused, pending, … selected.
      verdict: (/** @type {EndpointStatus} */ e) => SEVERITY.indexOf(verdictOf(e)) + 10,
      validated: (/** @type {EndpointStatus} */ e) => -(e.cache?.validatedAtWall ?? 0),
      sources: (/** @type {EndpointStatus} */ e) => e.sources.join(','),
    }[sort.col] ?? ((/** @type {EndpointStatus} */ e) => e.baseUrl);
    const dir = sort.dir === 'ascending' ? 1 : -1;
    return [...list].sort((a, b) => {
      const x = key(a);
      const y = key(b);
      const an = `${store.nameOf(a.baseUrl)} ${a.baseUrl}`;
      const bn = `${store.nameOf(b.baseUrl)} ${b.baseUrl}`;
      return (x < y ? -1 : x > y ? 1 : an < bn ? -1 : 1) * dir;
    });
  }, [all, query, health, verdict, outcome, sort]);

  // Tiles count verdicts, so each endpoint is counted once, under the word its row shows.
  const counts = useMemo(() => {
    const list = all ?? [];
    const of = (/** @type {string[]} */ vs) => list.filter((e) => vs.includes(verdictOf(e))).length;
    return {
      total: list.length,
      selected: of(['selected']),
      degraded: of(['degraded']),
      removed: of(['removed', 'held']),
      refused: of(['refused']),
      other: of(['pending', 'unsuitable', 'excluded', 'gone']),
    };
  }, [all]);
  const activity = new Map((store.activity?.endpoints ?? []).map((a) => [a.endpoint, a]));
  const calls = new Map((store.calls?.agents ?? []).map((a) => [a.baseUrl, a]));

  const sortProps = { sort, setSort };
  return html`<section aria-labelledby="view-title">
    <${ViewHeader} title="Endpoints">Every endpoint the sources propose: whether the host policy admits it, what the card cache holds, its health and the matcher’s verdict.<//>
    <div class="tiles" role="group" aria-label="Endpoint summary">
      <${Tile} label="endpoints" value=${counts.total} />
      <${Tile} label="selected" value=${counts.selected} tone=${counts.selected > 0 ? 't-good' : ''} />
      <${Tile} label="degraded, serving a stale card" value=${counts.degraded} tone=${counts.degraded > 0 ? 't-warn' : ''} />
      <${Tile} label="removed or held" value=${counts.removed} tone=${counts.removed > 0 ? 't-bad' : ''} />
      <${Tile} label="refused" value=${counts.refused} tone=${counts.refused > 0 ? 't-bad' : ''} />
      <${Tile} label="pending, unsuitable, excluded or gone" value=${counts.other} />
    </div>
    <form class="filters" role="search" aria-label="Filter endpoints" onSubmit=${(/** @type {Event} */ ev) => ev.preventDefault()}>
      <label>Filter <input type="search" id="endpoint-filter" value=${query} placeholder="URL, name or source" onInput=${(/** @type {any} */ ev) => setQuery(ev.currentTarget.value)} /></label>
      <label>Health
        <select id="endpoint-health" value=${health} onChange=${(/** @type {any} */ ev) => setHealth(ev.currentTarget.value)}>
          ${['all', 'healthy', 'pending', 'degraded', 'removed', 'refused'].map((v) => html`<option value=${v}>${v}</option>`)}
        </select>
      </label>
      <label>Verdict
        <select id="endpoint-verdict" value=${verdict} onChange=${(/** @type {any} */ ev) => setVerdict(ev.currentTarget.value)}>
          ${['all', 'selected', 'degraded', 'held', 'pending', 'unsuitable', 'excluded', 'removed', 'gone', 'refused'].map((v) => html`<option value=${v}>${v}</option>`)}
        </select>
      </label>
      <label>Last outcome
        <select id="endpoint-outcome" value=${outcome} onChange=${(/** @type {any} */ ev) => setOutcome(ev.currentTarget.value)}>
          ${['all', 'hit', 'revalidated', 'changed', 'unchanged', 'stale', 'invalid', 'failed', 'none'].map((v) => html`<option value=${v}>${v}</option>`)}
        </select>
      </label>
      <span class="muted" aria-live="polite">${all ? `${rows.length} of ${all.length} shown` : ''}</span>
    </form>
    <${TableWrap}>
      <table class="data endpoints">
        <caption>Endpoints, sorted by ${sort.col === 'verdict' ? 'severity of the verdict' : sort.col} (${sort.dir})</caption>
        <thead><tr>
          <${SortHeader} label="Endpoint" col="endpoint" ...${sortProps} />
          <${SortHeader} label="Sources, admission" col="sources" ...${sortProps} />
          <${SortHeader} label="Last outcome" col="outcome" ...${sortProps} />
          <${SortHeader} label="Cache: age, expiry, ETag" col="validated" ...${sortProps} />
          <${SortHeader} label="Health: fetches, calls" col="health" ...${sortProps} />
          <${SortHeader} label="Verdict" col="verdict" ...${sortProps} />
        </tr></thead>
        <tbody>
          ${all === undefined ? html`<${EmptyRow} cols=${6} text="Loading…" />` : rows.length === 0 ? html`<${EmptyRow} cols=${6} text=${all.length === 0 ? 'No endpoints yet.' : 'No endpoint matches the filter.'} />` : null}
          ${rows.map((e) => html`<${EndpointRow} key=${e.baseUrl} e=${e} now=${now} name=${store.nameOf(e.baseUrl)} activity=${activity.get(e.baseUrl)} windowMs=${store.activity?.windowMs ?? 300_000} calls=${calls.get(e.baseUrl)} />`)}
        </tbody>
      </table>
    <//>
  </section>`;
}

/**
 * Cache chatter of one endpoint in words: requests and results in the rate window.
 * @param {import('../lib/types.js').EndpointActivity | undefined} a
 * @param {number} windowMs
 */
export function activityText(a, windowMs) {
  if (!a) return 'no cache activity yet';
  const r = a.recent;
  const minutes = windowMs / 60_000;
  const parts = [
    ['card.result.hit', 'hits'],
    ['card.result.revalidated', '304'],
    ['card.result.unchanged', '200 same'],
    ['card.result.stale', 'stale'],
    ['card.result.failed', 'failed'],
    ['card.backoff', 'backoff'],
  ]
    .filter(([k]) => (r[/** @type {string} */ (k)] ?? 0) > 0)
    .map(([k, label]) => `${num(r[/** @type {string} */ (k)] ?? 0)} ${label}`);
  const requests = (r['card.fetch.conditional'] ?? 0) + (r['card.fetch.unconditional'] ?? 0);
  return `${parts.join(' · ') || 'none'} in ${minutes} min · ${Math.round((requests / minutes) * 10) / 10} requests/min`;
}

/**
 * A verdict's cause in the vocabulary's words (docs/vocabulary.md), explained on hover, focus or
 * tap; a cause this page does not know shows its code.
 * @param {{ cause: string }} props
 */
export function CauseBadge({ cause }) {
  const w = causeWords(cause);
  const tone = w?.verdict === 'refused' ? 'o-failed' : w?.verdict === 'pending' ? 'o-stale' : 'o-muted';
  return html`<span class="cause" data-cause=${cause}><${Explained} tone=${tone} text=${w?.label ?? cause} explain=${w?.meaning ?? ''} /></span>`;
}

/**
 * The last card outcome's badge (`304`, `200 changed`, `stale`, …), explained on hover, focus or tap.
 * @param {{ out: string }} props
 */
function OutcomeBadge({ out }) {
  const text = out in OUTCOME_LABEL ? OUTCOME_LABEL[/** @type {import('../lib/types.js').CardOutcome} */ (out)] : out;
  return html`<${Explained} tone=${outcomeClass(out)} text=${text} explain=${meaningOf('badge', text) ?? ''} />`;
}

/**
 * The row's "Proposed by" disclosure; its block is rendered only while open (a table of thousands
 * of endpoints keeps one summary line per row).
 * @param {{ e: EndpointStatus }} props
 */
function ProposedByDetails({ e }) {
  const [open, setOpen] = useState(false);
  const n = e.proposals?.length ?? 0;
  return html`<details class="proposed-by" onToggle=${(/** @type {any} */ ev) => setOpen(ev.currentTarget.open)}>
    <summary>Proposed by <span class="visually-hidden">${endpointLabel(e.baseUrl)}: </span>${n === 1 ? '1 record' : `${n} records`}</summary>
    ${open ? html`<${ProposedBy} proposals=${e.proposals} />` : null}
  </details>`;
}

/**
 * The chosen interface (with its tenant) and whether the credentials satisfy the card, in one line.
 * @param {{ access: import('../lib/types.js').AccessJson }} props
 */
function AccessLine({ access }) {
  const ci = access.chosenInterface;
  const sec = access.security;
  const badge = sec && sec.status !== 'none' ? securityBadge(sec.status) : undefined;
  return html`<div class="muted small access">
    ${ci ? html`<span class="interface" title=${ci.url}>${ci.binding} · A2A ${ci.protocolVersion}${ci.tenant !== undefined ? html` · tenant <code>${ci.tenant}</code>` : null}</span>` : html`<span>no interface a client here calls</span>`}
    ${badge && sec ? html` <${Badge} tone=${badge.tone} text=${`credentials ${badge.text}`} title=${sec.message} />` : null}
  </div>`;
}

/**
 * Health from real calls, beside the fetch health: the calls the orchestrator made to the agent,
 * the share that failed, the p95 latency and the failures in a row; what it means is said in words
 * on hover, focus or a tap.
 * @param {{ c: import('../lib/types.js').AgentCallHealthJson | undefined, label: string, now: number }} props
 */
function CallHealthLine({ c, label, now }) {
  if (c === undefined || c.all.calls === 0) return html`<div class="muted small call-health">no A2A calls yet</div>`;
  const f = c.all;
  const classes = Object.entries(f.byClass)
    .map(([k, v]) => `${k} ${num(v)}`)
    .join(', ');
  const p95 = f.p95Ms !== undefined ? `${num(Math.round(f.p95Ms))} ms` : undefined;
  const checks = c.checks.calls > 0 ? ` ${num(c.checks.calls)} of them were active checks (a harmless request on a schedule), ${num(c.checks.errors)} failed.` : '';
  const streak =
    c.consecutiveFailures > 0
      ? ` The last ${c.consecutiveFailures === 1 ? 'call' : `${num(c.consecutiveFailures)} calls`} failed in a row: calls failing in a row degrade the agent, then leave it out of new snapshots, with the same hysteresis as failed card fetches; good calls bring it back.`
      : ' Calls failing in a row would degrade the agent, then leave it out of new snapshots, with the same hysteresis as failed card fetches.';
  const words = `Health from real calls: the orchestrator made ${num(f.calls)} A2A call${f.calls === 1 ? '' : 's'} to ${label}, the last ${ago(c.lastCallAt, now)}; ${num(f.errors)} failed (${percent(f.errorRate, true)})${classes ? ` — ${classes}` : ''}.${p95 ? ` 95 % of the recent ones answered within ${p95}.` : ''}${checks}${streak}`;
  return html`<div class="call-health" data-calls=${f.calls} data-failing=${c.consecutiveFailures}>
    <${Explained} className="calls-word" text=${`calls ${num(f.calls)} · ${percent(f.errorRate, true)} failed${p95 ? ` · p95 ${p95}` : ''}`} explain=${words} />
    ${c.consecutiveFailures > 0 ? html`<div class="reason call-failing">${num(c.consecutiveFailures)} failed in a row${c.lastFailure ? `: ${c.lastFailure}` : ''}</div>` : null}
  </div>`;
}

/** @param {{ e: EndpointStatus, now: number, name: string, activity: import('../lib/types.js').EndpointActivity | undefined, windowMs: number, calls: import('../lib/types.js').AgentCallHealthJson | undefined }} props */
function EndpointRow({ e, now, name, activity, windowMs, calls }) {
  const c = e.cache;
  const out = lastOutcome(e);
  const exp = expiry(e, now);
  const state = healthState(e);
  const error = c?.lastError ?? (e.lastFailure ? { code: e.lastFailure.code, message: e.lastFailure.message } : undefined);
  return html`<tr data-endpoint=${e.baseUrl} class=${state === 'removed' || state === 'refused' ? 'row-dim' : ''}>
    <th scope="row" class="ep">
      <span class="ep-local">${name || endpointLabel(e.baseUrl)}</span>
      <span class="ep-host">${endpointLabel(e.baseUrl)}</span>
      <span class="ep-names">${e.names.filter((n) => n !== name).join(', ')}</span>
      <span class="row-links">
        ${e.admitted ? html`<a href=${cardHref(e.baseUrl)} aria-label=${`Card of ${endpointLabel(e.baseUrl)}`}>Card</a>` : null}
        <a href=${inspectHref(e.baseUrl)} class="inspect-link" aria-label=${`Inspect ${endpointLabel(e.baseUrl)}`}>Inspect</a>
      </span>
    </th>
    <td>
      <div>${e.sources.map((s) => html`<span class="chip">${s}</span>`)}</div>
      ${e.admitted ? html`<${Badge} text="admitted" />` : html`<${Explained} text="refused" explain=${causeWords('allowlist')?.meaning ?? ''} /><div class="reason">${e.refusal?.code}: ${e.refusal?.reason}</div>`}
      ${e.proposals && e.proposals.length > 0 ? html`<${ProposedByDetails} e=${e} />` : null}
    </td>
    <td>
      ${out === 'none' ? html`<span class="muted">—</span>` : html`<${OutcomeBadge} out=${out} />`}
      ${c && c.failures > 0 ? html`<span class="muted"> ${c.failures} failure${c.failures === 1 ? '' : 's'}</span>` : null}
      ${error ? html`<div class="reason">${error.code}: ${error.message}</div>` : null}
      <div class="muted small activity">${activityText(activity, windowMs)}</div>
    </td>
    <td class="cache">
      ${c ? html`<span title=${c.fetchedAtWall ? new Date(c.fetchedAtWall).toISOString() : ''}>fetched ${ago(c.fetchedAtWall, now)}</span><br /><span class="muted">validated ${ago(c.validatedAtWall, now)}</span>` : html`<span class="muted">no card</span>`}
      <div class="expiry" title=${exp.title}>${c ? exp.text : null}</div>
      ${c?.cardUrl ? html`<div class="muted small card-url" title=${c.cardUrl}>from <span class="url">${cardPath(c.cardUrl, e.baseUrl)}</span></div>` : null}
      ${c ? html`<code class="etag" title=${c.etag ?? ''}>${c.etag ?? 'no ETag'}</code>` : null}
    </td>
    <td class="health">
      ${state === 'refused' ? html`<span class="muted">—</span>` : html`<${Explained} text=${state} explain=${meaningOf('health', state) ?? ''} />`}
      ${e.health?.critical ? html` <${CriticalChip} degraded=${e.health.state === 'degraded'} />` : null}
      ${e.health ? html`<div class="muted small">${e.health.successes} good / ${e.health.failures} bad in a row</div>` : null}
      ${e.admitted ? html`<${CallHealthLine} c=${calls} label=${name || endpointLabel(e.baseUrl)} now=${now} />` : null}
    </td>
    <td data-verdict=${verdictOf(e)}>
      <${Explained} text=${verdictOf(e)} explain=${meaningOf('verdict', verdictOf(e)) ?? ''} />${e.verdict?.localName ? html` <code>${e.verdict.localName}</code>` : null}
      ${e.state?.cause ? html` <${CauseBadge} cause=${e.state.cause} />` : null}
      ${e.state ? html`<div class="reason">${e.state.reason}</div><div class="muted small" title=${new Date(e.state.since).toISOString()}>since ${ago(e.state.since, now)}</div>` : null}
      ${e.access ? html`<${AccessLine} access=${e.access} />` : null}
    </td>
  </tr>`;
}
