// @ts-check
/**
 * Sources: what each discovery source is doing (`GET /api/sources`) — listing or failing, since
 * when, how many records, the problems of its last list by path, and for an AI Catalog source
 * every catalog document it read (URL, how it was reached, the cache's outcome, what it listed,
 * its signature). Paths, URLs and messages quote catalogs: shown as text only.
 */
import { html, useEffect } from '../lib/vendor.js';
import { OUTCOME_LABEL, ago, num, outcomeClass } from '../lib/format.js';
import { Badge, EmptyRow, TableWrap, Tile, ViewHeader, useNow } from './common.js';

/** @typedef {import('../lib/store.js').LiveStore} LiveStore */
/** @typedef {import('../lib/types.js').SourceJson} SourceJson */
/** @typedef {import('../lib/types.js').CatalogDocumentJson} CatalogDocumentJson */

/** The one word for a source's state. @param {SourceJson} s */
export function sourceState(s) {
  if (!s.ok) return 'failing';
  if (!s.synced) return 'not listed yet';
  return s.problems.length + s.moreProblems > 0 ? 'listing, with problems' : 'listing';
}

/** @param {string} state */
function stateTone(state) {
  return state === 'failing' ? 'o-failed' : state === 'listing' ? 'o-good' : state === 'not listed yet' ? 'o-info' : 'o-stale';
}

/** @param {{ store: LiveStore, focus?: string }} props */
export function SourcesView({ store, focus = '' }) {
  const now = useNow(1000);
  const all = store.sources;
  // A link from an endpoint's "Proposed by" names one source: bring it into view once it is shown
  // (after the view's own focus move to its heading).
  useEffect(() => {
    if (focus === '' || all === undefined) return;
    const t = setTimeout(() => {
      const h = document.getElementById(`source-${focus}-h`);
      if (h) {
        h.scrollIntoView({ block: 'start' });
        h.focus({ preventScroll: true });
      }
    }, 0);
    return () => clearTimeout(t);
  }, [focus, all === undefined]);

  const list = all ?? [];
  const failing = list.filter((s) => !s.ok).length;
  const problems = list.reduce((n, s) => n + s.problems.length + s.moreProblems, 0);
  const documents = list.reduce((n, s) => n + (s.catalogs?.length ?? 0) + (s.moreCatalogs ?? 0), 0);
  return html`<section aria-labelledby="view-title" class="sources-view">
    <${ViewHeader} title="Sources">Where endpoints come from: each source’s state and record count, the problems of its last list by path, and for AI Catalog sources every catalog document read in the last refresh. A failing source keeps its last good list.<//>
    <div class="tiles" role="group" aria-label="Source summary">
      <${Tile} label="sources" value=${list.length} />
      <${Tile} label="failing" value=${failing} tone=${failing > 0 ? 't-bad' : ''} />
      <${Tile} label="problems" value=${problems} tone=${problems > 0 ? 't-warn' : ''} />
      <${Tile} label="catalog documents" value=${documents} />
    </div>
    ${all === undefined ? html`<p class="muted">Loading…</p>` : list.length === 0 ? html`<p class="muted">No source is configured.</p>` : null}
    ${list.map((s) => html`<${SourcePanel} key=${s.id} s=${s} now=${now} targeted=${s.id === focus} />`)}
  </section>`;
}

/** @param {{ s: SourceJson, now: number, targeted: boolean }} props */
function SourcePanel({ s, now, targeted }) {
  const state = sourceState(s);
  const hid = `source-${s.id}-h`;
  return html`<section class=${`panel source-panel${s.ok ? '' : ' panel-bad'}${targeted ? ' source-targeted' : ''}`} id=${`source-${s.id}`} aria-labelledby=${hid} data-source=${s.id} data-state=${state}>
    <h2 id=${hid} tabindex="-1" class="source-title"><code>${s.id}</code> <span class="chip">${s.kind}</span> <${Badge} tone=${stateTone(state)} text=${state} /></h2>
    <dl class="source-facts">
      <div><dt>Records</dt><dd class="source-records">${num(s.records)}${!s.ok && s.records > 0 ? ' (the last good list, kept)' : ''}</dd></div>
      <div><dt>Last good list</dt><dd>${s.updatedAt === null ? 'never' : html`<span title=${new Date(s.updatedAt).toISOString()}>${ago(s.updatedAt, now)}</span>`}</dd></div>
      <div><dt>Problems</dt><dd>${s.problems.length + s.moreProblems === 0 ? 'none' : num(s.problems.length + s.moreProblems)}</dd></div>
    </dl>
    ${s.error
      ? html`<div class="source-error" role="group" aria-label=${`Error of source ${s.id}`}>
          <p><${Badge} tone="o-failed" text="error" /> <code>${s.error.code}</code>${s.error.status !== undefined ? ` (HTTP ${s.error.status})` : ''} <span class="wrap-text">${s.error.message}</span></p>
          ${s.error.url !== undefined ? html`<p class="small">at <code class="wrap-text">${s.error.url}</code></p>` : null}
          ${s.error.problems && s.error.problems.length > 0 ? html`<ul class="probe-problems">${s.error.problems.map((p) => html`<li><code class="path">${p.path}</code> ${p.message}</li>`)}</ul>` : null}
        </div>`
      : null}
    ${s.problems.length > 0 ? html`<${ProblemTable} s=${s} />` : null}
    ${s.catalogs !== undefined ? html`<${CatalogTable} s=${s} />` : null}
  </section>`;
}

/** @param {{ s: SourceJson }} props */
function ProblemTable({ s }) {
  return html`<${TableWrap}>
    <table class="data source-problems">
      <caption>Problems of source ${s.id}’s last list, by path${s.moreProblems > 0 ? ` (the first ${s.problems.length}; ${num(s.moreProblems)} more not shown)` : ''}</caption>
      <thead><tr><th scope="col">Path</th><th scope="col">Problem</th></tr></thead>
      <tbody>
        ${s.problems.map((p, i) => html`<tr key=${i}><td class="wrap"><code>${p.path}</code></td><td class="wrap">${p.message}</td></tr>`)}
        ${s.moreProblems > 0 ? html`<tr class="empty"><td colspan="2">… and ${num(s.moreProblems)} more</td></tr>` : null}
      </tbody>
    </table>
  <//>`;
}

/** @param {string} outcome */
function outcomeText(outcome) {
  return outcome in OUTCOME_LABEL ? OUTCOME_LABEL[/** @type {import('../lib/types.js').CardOutcome} */ (outcome)] : outcome;
}

/** @param {{ s: SourceJson }} props */
function CatalogTable({ s }) {
  const docs = s.catalogs ?? [];
  return html`<${TableWrap}>
    <table class="data catalog-documents">
      <caption>Catalog documents source ${s.id} read in its last refresh${(s.moreCatalogs ?? 0) > 0 ? ` (the first ${docs.length}; ${num(s.moreCatalogs ?? 0)} more not shown)` : ''}</caption>
      <thead><tr>
        <th scope="col">Catalog</th><th scope="col">Via</th><th scope="col">Depth</th><th scope="col">Outcome</th>
        <th scope="col">Entries</th><th scope="col">Cards</th><th scope="col">Nested</th><th scope="col">Ignored</th><th scope="col">Signature</th>
      </tr></thead>
      <tbody>
        ${docs.length === 0 ? html`<${EmptyRow} cols=${9} text="No catalog document was read yet." />` : null}
        ${docs.map(
          (d, i) => html`<tr key=${`${d.url}|${i}`} data-catalog=${d.url} data-outcome=${d.outcome}>
            <th scope="row" class="wrap"><code>${d.url}</code>${d.specVersion !== undefined ? html`<div class="muted small">specVersion ${d.specVersion}${d.etag !== undefined ? html`, ETag <code>${d.etag}</code>` : null}</div>` : null}</th>
            <td class="wrap">${d.via === 'root' ? 'root' : html`<code>${d.via}</code>`}</td>
            <td class="num">${d.depth}</td>
            <td><${Badge} text=${outcomeText(d.outcome)} tone=${outcomeClass(d.outcome)} title=${d.outcome} />${d.error !== undefined ? html`<div class="reason">${d.error}</div>` : null}</td>
            <td class="num">${num(d.entries)}</td>
            <td class="num">${num(d.cards)}</td>
            <td class="num">${num(d.nested)}</td>
            <td class="num">${num(d.ignored)}</td>
            <td>${d.signature ?? html`<span class="muted">—</span>`}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  <//>`;
}
