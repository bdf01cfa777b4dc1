// @ts-check
/**
 * Sessions: the sessions pinned to each digest, upgrade or end one, and which roots are retained
 * (a pinned session or the current snapshot references them) or evicted.
 */
import { html, useState } from '../lib/vendor.js';
import { api } from '../lib/api.js';
import { duration, shortDigest } from '../lib/format.js';
import { Badge, EmptyRow, TableWrap, ViewHeader } from './common.js';

/** @typedef {import('../lib/store.js').LiveStore} LiveStore */

/** @param {{ store: LiveStore }} props */
export function SessionsView({ store }) {
  const s = store.sessions;
  const snaps = store.snapshots;
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState('');
  const sessions = s?.sessions ?? [];
  const retained = new Map((s?.retained ?? snaps?.retained ?? []).map((r) => [r.digest, r]));
  const built = new Set(s?.builtDigests ?? []);
  const history = snaps?.history ?? [];
  /** @type {Map<string, string[]>} */
  const pinnedBy = new Map();
  for (const p of sessions) pinnedBy.set(p.digest, [...(pinnedBy.get(p.digest) ?? []), p.sessionId]);

  /** A digest as its version (`v4`), or short when the history no longer lists it. @param {string} digest */
  const versionOf = (digest) => {
    const h = history.find((x) => x.digest === digest);
    return h ? `v${h.version}` : shortDigest(digest);
  };

  /** @param {string} id @param {'upgrade' | 'force' | 'end'} action */
  const act = async (id, action) => {
    setBusy(`${id}:${action}`);
    try {
      if (action === 'end') {
        await api(`/api/sessions/${encodeURIComponent(id)}`, { method: 'DELETE' });
        setStatus(`Session ${id} ended; its pin is released.`);
      } else {
        const r = await api(`/api/sessions/${encodeURIComponent(id)}/upgrade`, { method: 'POST', body: { force: action === 'force' } });
        setStatus(r.changed ? `Session ${id} upgraded from ${versionOf(r.from)} to ${versionOf(r.to)}.` : `Session ${id} is already on the current snapshot (${versionOf(r.to)}).`);
      }
    } catch (err) {
      setStatus(`Session ${id}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setBusy('');
      await Promise.all([store.refresh('sessions'), store.refresh('snapshots')]);
    }
  };

  return html`<section aria-labelledby="view-title">
    <${ViewHeader} title="Sessions">Each conversation stays on the agent tree of the snapshot it started on. Upgrading moves it to the current snapshot at a turn boundary; it is refused when its history names an agent the new tree lacks (force overrides).<//>
    <p class="status-line" role="status">${status}</p>
    <h2>Pinned sessions</h2>
    <${TableWrap}>
      <table class="data sessions">
        <caption>${sessions.length} session${sessions.length === 1 ? '' : 's'} pinned</caption>
        <thead><tr><th scope="col">Session</th><th scope="col">Snapshot</th><th scope="col">Digest</th><th scope="col">Idle</th><th scope="col">Actions</th></tr></thead>
        <tbody>
          ${s === undefined ? html`<${EmptyRow} cols=${5} text="Loading…" />` : sessions.length === 0 ? html`<${EmptyRow} cols=${5} text="No session is pinned. Start one in Chat." />` : null}
          ${sessions.map(
            (p) => html`<tr key=${p.sessionId} data-session=${p.sessionId}>
              <th scope="row"><code>${p.sessionId}</code></th>
              <td>v${p.version}${snaps?.current === p.digest ? html` <${Badge} tone="o-good" text="current" />` : html` <${Badge} tone="o-stale" text="older" />`}</td>
              <td><code title=${p.digest}>${shortDigest(p.digest)}</code></td>
              <td class="num">${duration(p.idleMs)}</td>
              <td class="actions">
                ${store.whoami?.can.chat === false
                  ? html`<span class="muted small">read only (viewer)</span>`
                  : html`<button type="button" class="btn btn-small" disabled=${busy !== '' || snaps?.current === p.digest} onClick=${() => act(p.sessionId, 'upgrade')}>Upgrade<span class="visually-hidden"> ${p.sessionId}</span></button>
                <button type="button" class="btn btn-small" disabled=${busy !== '' || snaps?.current === p.digest} onClick=${() => act(p.sessionId, 'force')}>Force upgrade<span class="visually-hidden"> ${p.sessionId}</span></button>
                <button type="button" class="btn btn-small btn-danger" disabled=${busy !== ''} onClick=${() => act(p.sessionId, 'end')}>End<span class="visually-hidden"> ${p.sessionId}</span></button>`}
              </td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>
    <h2>Roots per snapshot</h2>
    <${TableWrap}>
      <table class="data roots">
        <caption>A root (agent tree) is kept while its snapshot is current or pinned, and evicted after</caption>
        <thead><tr><th scope="col">Version</th><th scope="col">Digest</th><th scope="col">Pinned sessions</th><th scope="col">References</th><th scope="col">Root</th></tr></thead>
        <tbody>
          ${history.length === 0 ? html`<${EmptyRow} cols=${5} text="Nothing published yet." />` : null}
          ${rootsOf(history).map(({ digest, versions }) => {
            const h = { digest, version: versions[0] };
            const r = retained.get(h.digest);
            const ids = pinnedBy.get(h.digest) ?? [];
            const current = snaps?.current === h.digest;
            return html`<tr key=${h.digest} data-version=${h.version}>
              <th scope="row">v${h.version}${versions.length > 1 ? html` <span class="muted small">(same agents as ${versions.slice(1).map((v) => `v${v}`).join(', ')})</span>` : null}</th>
              <td><code title=${h.digest}>${shortDigest(h.digest)}</code></td>
              <td class="wrap">${ids.length > 0 ? ids.map((id) => html`<code class="chip">${id}</code>`) : html`<span class="muted">none</span>`}</td>
              <td class="num">${r ? r.references : 0}</td>
              <td class="state" data-root=${rootState(current, r !== undefined)}>
                ${current ? html`<${Badge} tone="o-good" text="current" />` : r ? html`<${Badge} tone="o-info" text="retained" />` : html`<${Badge} tone="o-muted" text="evicted" />`}
                ${current || r ? html` <span class="muted small">${built.has(h.digest) ? 'tree built' : 'tree not built'}</span>` : null}
              </td>
            </tr>`;
          })}
        </tbody>
      </table>
    <//>
  </section>`;
}

/**
 * One root per digest, newest first: a later version that repeats an earlier digest (an agent
 * back as it was) is the same tree, so it is one row, named by its newest version, and only one
 * row can be current.
 * @param {ReadonlyArray<{ version: number, digest: string }>} history oldest first
 * @returns {Array<{ digest: string, versions: number[] }>} versions newest first
 */
function rootsOf(history) {
  /** @type {Map<string, number[]>} */
  const byDigest = new Map();
  for (const h of [...history].reverse()) byDigest.set(h.digest, [...(byDigest.get(h.digest) ?? []), h.version]);
  return [...byDigest].map(([digest, versions]) => ({ digest, versions }));
}

/** One state per root: current, retained, or evicted (an evicted root has no tree to speak of). @param {boolean} current @param {boolean} retained */
function rootState(current, retained) {
  return current ? 'current' : retained ? 'retained' : 'evicted';
}
