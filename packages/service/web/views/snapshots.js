// @ts-check
/**
 * Snapshots: the version history with digests, the diff between any two, the agents of any
 * retained or archived version, and the alerts.
 */
import { html, useEffect, useState } from '../lib/vendor.js';
import { api } from '../lib/api.js';
import { clockTime, duration, endpointLabel, shortDigest } from '../lib/format.js';
import { Badge, CriticalChip, EmptyRow, Explained, TableWrap, TraceRef, ViewHeader } from './common.js';
import { meaningOf } from '../lib/vocabulary.js';

/** @typedef {import('../lib/store.js').LiveStore} LiveStore */
/** @typedef {import('../lib/types.js').SnapshotDiff} SnapshotDiff */
/** @typedef {import('../lib/types.js').SnapshotJson} SnapshotJson */
/** @typedef {import('../lib/types.js').HistoryEntry} HistoryEntry */

/** @param {{ store: LiveStore }} props */
export function SnapshotsView({ store }) {
  const snaps = store.snapshots;
  const history = snaps?.history ?? [];
  const retained = new Map((snaps?.retained ?? []).map((r) => [r.digest, r]));
  // A later version may repeat an earlier one's digest (an agent back as it was): the newest is current.
  const currentVersion = history.filter((h) => h.digest === snaps?.current).at(-1)?.version;
  const latest = history.at(-1);
  const previous = history.at(-2);
  const [pair, setPair] = useState(/** @type {{ from: string, to: string } | undefined} */ (undefined));
  const from = pair?.from ?? previous?.digest ?? '';
  const to = pair?.to ?? latest?.digest ?? '';
  const [diff, setDiff] = useState(/** @type {SnapshotDiff | undefined} */ (undefined));
  const [diffError, setDiffError] = useState('');
  const [inspect, setInspect] = useState(/** @type {string | undefined} */ (undefined));
  const [agents, setAgents] = useState(/** @type {SnapshotJson | undefined} */ (undefined));
  const [agentsError, setAgentsError] = useState('');
  const [confirmStatus, setConfirmStatus] = useState('');
  const [confirming, setConfirming] = useState(false);
  // Confirming a held removal is an admin's (an open loopback service lets anyone).
  const mayConfirm = store.whoami?.can.confirm === true;
  const confirm = async () => {
    setConfirming(true);
    try {
      const r = await api('/api/snapshots/confirm', { method: 'POST', body: {} });
      setConfirmStatus(`Removal confirmed: snapshot v${r.version} ${shortDigest(r.digest)} is published.`);
    } catch (err) {
      setConfirmStatus(`Could not confirm: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setConfirming(false);
      await store.refresh('snapshots');
    }
  };

  useEffect(() => {
    if (to === '') return;
    let live = true;
    const q = from !== '' ? `from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}` : `to=${encodeURIComponent(to)}`;
    api(`/api/diff?${q}`).then(
      (d) => live && (setDiff(d), setDiffError('')),
      (err) => live && (setDiff(undefined), setDiffError(err instanceof Error ? err.message : String(err))),
    );
    return () => void (live = false);
  }, [from, to]);

  const shown = inspect ?? latest?.digest;
  useEffect(() => {
    if (shown === undefined) return;
    let live = true;
    api(`/api/snapshots/${encodeURIComponent(shown)}`).then(
      (s) => live && (setAgents(s), setAgentsError('')),
      (err) => live && (setAgents(undefined), setAgentsError(err instanceof Error ? err.message : String(err))),
    );
    return () => void (live = false);
  }, [shown]);

  const byDigest = new Map(history.map((h) => [h.digest, h]));
  // The trace each version was published in (its journaled event), when traced.
  /** @type {Map<number, string>} */
  const traces = new Map();
  for (const e of store.events) if (e.type === 'snapshot.published' && e.version !== undefined && e.traceId) traces.set(e.version, e.traceId);
  // The column only when the service records traces (some version has one).
  const traced = traces.size > 0;
  const label = (/** @type {string} */ d) => {
    const h = byDigest.get(d);
    return h ? `v${h.version} · ${shortDigest(d)}` : shortDigest(d);
  };
  // Each alert with its resolution (the alert.resolved with the same key that follows it).
  /** @type {Map<number, import('../lib/types.js').DiscoveryEvent>} */
  const resolved = new Map();
  /** @type {Map<string, number>} */
  const open = new Map();
  for (const a of store.alerts) {
    if (a.type === 'alert' && a.key) open.set(a.key, a.seq);
    else if (a.type === 'alert.resolved' && a.key && open.has(a.key)) {
      resolved.set(/** @type {number} */ (open.get(a.key)), a);
      open.delete(a.key);
    }
  }
  const alerts = store.alerts.filter((a) => a.type !== 'alert.resolved').reverse();

  return html`<section aria-labelledby="view-title">
    <${ViewHeader} title="Snapshots">Every published version with its digest, what changed between any two, and the alerts discovery raised.<//>
    ${snaps?.held
      ? html`<div class="panel held-panel" id="held-snapshot">
          <p><strong>A smaller snapshot is held back</strong> (<code title=${snaps.held}>${shortDigest(snaps.held)}</code>): a guard stopped a removal of many agents at once. The current snapshot keeps serving until someone confirms it.</p>
          ${mayConfirm
            ? html`<button type="button" class="btn btn-danger" id="confirm-removal" disabled=${confirming} onClick=${confirm}>${confirming ? 'Confirming…' : 'Confirm removal'}</button>`
            : html`<p class="muted small">Only an admin may confirm it.</p>`}
        </div>`
      : null}
    <p class="status-line" role="status" id="confirm-status">${confirmStatus}</p>
    <div class="grid-2 wide-left">
      <div>
        <h2>History</h2>
        <${TableWrap}>
          <table class="data history">
            <caption>Published versions, newest first; choose a version to list its agents${snaps?.held ? ' · a snapshot is held by a guard' : ''}</caption>
            <thead><tr><th scope="col">Version</th><th scope="col">Digest</th><th scope="col">Published</th><th scope="col">Agents</th><th scope="col">State</th>${traced ? html`<th scope="col">Trace</th>` : null}</tr></thead>
            <tbody>
              ${history.length === 0 ? html`<${EmptyRow} cols=${traced ? 6 : 5} text=${snaps ? 'Nothing published yet.' : 'Loading…'} />` : null}
              ${[...history].reverse().map((h) => {
                const r = retained.get(h.digest);
                const current = h.version === currentVersion;
                return html`<tr key=${h.version} data-version=${h.version} class=${shown === h.digest ? 'row-selected' : ''}>
                  <th scope="row">
                    <button type="button" class="link-btn" aria-pressed=${shown === h.digest ? 'true' : 'false'} onClick=${() => setInspect(h.digest)}>v${h.version}<span class="visually-hidden">: list its agents</span></button>
                  </th>
                  <td><code title=${h.digest}>${shortDigest(h.digest)}</code></td>
                  <td class="num"><time datetime=${h.createdAt} title=${h.createdAt}>${clockTime(Date.parse(h.createdAt)).slice(0, 8)}</time></td>
                  <td class="wrap">${h.agents.join(', ') || html`<span class="muted">none</span>`}</td>
                  <td class="state">
                    ${current ? html`<${Badge} tone="o-good" text="current" />` : null}
                    ${r ? html`<${Badge} tone="o-info" text="retained" title=${`${r.references} reference${r.references === 1 ? '' : 's'}`} />` : current ? null : html`<${Badge} tone="o-muted" text="evicted" />`}
                  </td>
                  ${traced ? html`<td class="trace"><${TraceRef} traceId=${traces.get(h.version)} template=${store.whoami?.traceUrl} short=${true} /></td>` : null}
                </tr>`;
              })}
            </tbody>
          </table>
        <//>
      </div>
      <div>
        <h2>Diff</h2>
        <form class="filters" aria-label="Choose two versions" onSubmit=${(/** @type {Event} */ ev) => ev.preventDefault()}>
          <label>From
            <select id="diff-from" value=${from} onChange=${(/** @type {any} */ ev) => setPair({ from: ev.currentTarget.value, to })}>
              <option value="">(nothing)</option>
              ${history.map((h) => html`<option value=${h.digest}>${label(h.digest)}</option>`)}
            </select>
          </label>
          <label>To
            <select id="diff-to" value=${to} onChange=${(/** @type {any} */ ev) => setPair({ from, to: ev.currentTarget.value })}>
              ${history.map((h) => html`<option value=${h.digest}>${label(h.digest)}</option>`)}
            </select>
          </label>
          ${pair ? html`<button type="button" class="btn btn-small" onClick=${() => setPair(undefined)}>Latest two</button>` : null}
        </form>
        ${diffError ? html`<p class="error" role="alert">${diffError}</p>` : null}
        ${diff ? html`<${DiffView} diff=${diff} />` : null}
      </div>
    </div>
    <h2>Agents of ${shown ? label(shown) : '—'}</h2>
    ${agentsError ? html`<p class="error">${agentsError}</p>` : null}
    ${agents ? html`<${AgentsTable} snap=${agents} />` : null}
    <h2>Alerts</h2>
    <${TableWrap}>
      <table class="data alerts">
        <caption>Alerts and held snapshots from the journal, newest first, each with its resolution</caption>
        <thead><tr><th scope="col">Time</th><th scope="col">Kind</th><th scope="col">Endpoint</th><th scope="col">Message</th><th scope="col">Resolution</th></tr></thead>
        <tbody>
          ${alerts.length === 0 ? html`<${EmptyRow} cols=${5} text=${store.journalComplete ? 'No alerts in the journal.' : 'No alerts.'} />` : null}
          ${alerts.map((a) => {
            const r = resolved.get(a.seq);
            return html`<tr key=${a.seq} data-seq=${a.seq} data-kind=${a.kind ?? a.type}>
              <td class="num"><time datetime=${new Date(a.at).toISOString()}>${clockTime(a.at)}</time></td>
              <td><${Badge} tone="o-alert" text=${a.type === 'snapshot.held' ? 'held' : (a.kind ?? 'alert')} /></td>
              <td>${a.endpoint ? html`${store.nameOf(a.endpoint)} <span class="muted small">${endpointLabel(a.endpoint)}</span>` : html`<span class="muted">—</span>`}</td>
              <td class="wrap">${a.type === 'snapshot.held' ? `v${a.version} held: ${a.reason ?? ''}` : a.message}</td>
              <td class="wrap resolution">${r
                ? html`<${Badge} tone="o-good" text="resolved" /> ${clockTime(r.at).slice(0, 8)}, after ${duration(r.at - a.at)}: ${r.message ?? ''}`
                : a.key
                  ? html`<${Badge} tone="o-alert" text="open" />`
                  : html`<span class="muted">single happening</span>`}</td>
            </tr>`;
          })}
        </tbody>
      </table>
    <//>
  </section>`;
}

/**
 * An agent change's impact, when the service classifies it: `breaking` or `compatible`, with
 * its reasons in words.
 * @param {{ impact: 'breaking' | 'compatible' | undefined, reasons: string[] | undefined }} props
 */
function Impact({ impact, reasons }) {
  if (impact === undefined) return html`<span class="muted">—</span>`;
  return html`<${Badge} tone=${impact === 'breaking' ? 'o-failed' : 'o-good'} text=${impact} />
    ${reasons && reasons.length > 0 ? html`<ul class="impact-reasons">${reasons.map((r) => html`<li>${r}</li>`)}</ul>` : null}`;
}

/** @param {{ diff: SnapshotDiff }} props */
function DiffView({ diff }) {
  const nothing = diff.added.length === 0 && diff.removed.length === 0 && diff.changed.length === 0;
  // Impacts of the agents that came or went (a changed agent's is in its row).
  const changedNames = new Set(diff.changed.map((c) => c.localName));
  const others = (diff.impacts ?? []).filter((i) => !changedNames.has(i.localName));
  const classified = diff.changed.some((c) => c.impact !== undefined);
  return html`<div class="diff" aria-live="polite" tabindex="0" role="region" aria-label="What changed">
    <p class="muted">${diff.from ? `v${diff.from.version}` : 'nothing'} → v${diff.to.version}</p>
    ${nothing ? html`<p>No agent changed.</p>` : null}
    ${diff.breaking !== undefined && !nothing
      ? html`<p class="diff-verdict">${diff.breaking ? html`<${Badge} tone="o-failed" text="breaking" /> This change breaks something an orchestrator relied on.` : html`<${Badge} tone="o-good" text="compatible" /> Nothing an orchestrator relied on is removed or changed.`}</p>`
      : null}
    ${diff.added.length > 0 ? html`<p><strong>Added:</strong> ${diff.added.map((n) => html`<span class="chip chip-added">+ ${n}</span>`)}</p>` : null}
    ${diff.removed.length > 0 ? html`<p><strong>Removed:</strong> ${diff.removed.map((n) => html`<span class="chip chip-removed">− ${n}</span>`)}</p>` : null}
    ${others.length > 0
      ? html`<ul class="diff-impacts">${others.map((i) => html`<li data-agent=${i.localName}><code>${i.localName}</code> <${Impact} impact=${i.impact} reasons=${i.reasons} /></li>`)}</ul>`
      : null}
    ${diff.changed.length > 0
      ? html`<${TableWrap} class="diff-changed"><table class="data">
          <caption>Changed agents</caption>
          <thead><tr><th scope="col">Agent</th>${classified ? html`<th scope="col">Impact</th>` : null}<th scope="col">Skills</th><th scope="col">Endpoint</th><th scope="col">Other</th></tr></thead>
          <tbody>
            ${diff.changed.map(
              (c) => html`<tr key=${c.localName}>
                <th scope="row"><code>${c.localName}</code></th>
                ${classified ? html`<td class="wrap impact" data-impact=${c.impact ?? ''}><${Impact} impact=${c.impact} reasons=${c.reasons} /></td>` : null}
                <td class="wrap">
                  ${c.skillsAdded.map((s) => html`<span class="chip chip-added">+ ${s}</span>`)}
                  ${c.skillsRemoved.map((s) => html`<span class="chip chip-removed">− ${s}</span>`)}
                  ${c.skillsModified.map((s) => html`<span class="chip">~ ${s}</span>`)}
                  ${c.skillsAdded.length + c.skillsRemoved.length + c.skillsModified.length === 0 ? html`<span class="muted">unchanged</span>` : null}
                </td>
                <td class="wrap">${c.endpointChanged ? `${c.endpointChanged.from.join(', ')} → ${c.endpointChanged.to.join(', ')}` : html`<span class="muted">unchanged</span>`}</td>
                <td class="wrap">
                  ${[c.securityChanged ? 'security changed' : '', c.versionChanged ? `version ${c.versionChanged.from} → ${c.versionChanged.to}` : '', c.textChanged ? 'card text changed' : '']
                    .filter(Boolean)
                    .join('; ') || html`<span class="muted">—</span>`}
                </td>
              </tr>`,
            )}
          </tbody>
        </table><//>`
      : null}
  </div>`;
}

/** @param {{ snap: SnapshotJson }} props */
function AgentsTable({ snap }) {
  return html`<${TableWrap}>
    <table class="data">
      <caption>v${snap.version} · ${snap.agents.length} agent${snap.agents.length === 1 ? '' : 's'} · digest <code>${snap.digest}</code>${snap.routing
        ? html` · <span class="routing ${snap.routing.passed ? 't-good' : 't-bad'}" data-accuracy=${snap.routing.accuracy}>routing ${Math.round(snap.routing.accuracy * 1000) / 10}% of ${snap.routing.evaluated} cases (min ${Math.round(snap.routing.minAccuracy * 100)}%)</span>`
        : null}</caption>
      <thead><tr><th scope="col">Local name</th><th scope="col">Tags</th><th scope="col">Endpoint</th><th scope="col">Protocol</th><th scope="col">Flags</th><th scope="col">Card hash</th></tr></thead>
      <tbody>
        ${snap.agents.map(
          (a) => html`<tr key=${a.localName}>
            <th scope="row"><code>${a.localName}</code></th>
            <td>${a.tags.map((t) => html`<span class="chip">${t}</span>`)}</td>
            <td>${endpointLabel(a.baseUrl)}</td>
            <td>${a.protocolVersion}</td>
            <td>${a.critical ? html`<${CriticalChip} degraded=${a.degraded === true} />` : null}${a.degraded ? html`<${Explained} text="degraded" explain=${meaningOf('health', 'degraded') ?? ''} />` : null}${a.stale ? html`<${Explained} text="stale" explain=${meaningOf('badge', 'stale') ?? ''} />` : null}</td>
            <td><code title=${a.canonicalSha256}>${shortDigest(a.canonicalSha256)}</code></td>
          </tr>`,
        )}
      </tbody>
    </table>
  <//>`;
}
