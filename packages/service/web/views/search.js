// @ts-check
/**
 * Search: the service's registry as others query it — the ARD API (`POST /search`, `POST
 * /explore`; packages/core/src/ard/wire.ts). A query box, filters, facets with counts (a click
 * filters), results ranked by relevance with what this registry verified about each
 * (`extensions["dev.a2a-discovery.verified"]`), paging by `pageToken`, and the federation choice
 * with the registries referred to. Entries are third-party text: shown as text only.
 */
import { html, useEffect, useLayoutEffect, useRef, useState } from '../lib/vendor.js';
import { ARD_BASE, ApiError, api } from '../lib/api.js';
import { ago, num, outcomeClass } from '../lib/format.js';
import { cardHref, inspectHref, searchHref, sourcesHref } from '../lib/routes.js';
import { Badge, Explained, ViewHeader, useMedia } from './common.js';
import { CauseBadge } from './endpoints.js';
import { meaningOf } from '../lib/vocabulary.js';

/** @typedef {import('../../../core/src/ard/wire.js').ArdSearchResult} ArdSearchResult */
/** @typedef {import('../../../core/src/ard/wire.js').ArdSearchResponse} ArdSearchResponse */
/** @typedef {import('../../../core/src/ard/wire.js').ArdExploreResponse} ArdExploreResponse */
/** @typedef {import('../../../core/src/ard/wire.js').ArdReferral} ArdReferral */
/** @typedef {import('../../../core/src/ard/wire.js').ArdVerified} ArdVerified */
/** @typedef {import('../../../core/src/ard/wire.js').ArdFederation} ArdFederation */

/** The extension key of what this registry verified (wire.ts `VERIFIED_EXTENSION`). */
const VERIFIED = 'dev.a2a-discovery.verified';

/**
 * The filters, each with the ARD filter key (a field path, ARD §7.1) it sends and asks facets
 * for. `options`: a closed list (a select); otherwise free text, comma-separated values meaning
 * OR.
 * @typedef {{ id: string, field: string, label: string, options?: readonly (readonly [value: string, label: string])[] }} FilterDef
 * @type {readonly FilterDef[]}
 */
const FILTERS = [
  { id: 'tag', field: 'tags', label: 'Tag' },
  { id: 'input', field: 'verified.inputModes', label: 'Input mode' },
  { id: 'output', field: 'verified.outputModes', label: 'Output mode' },
  { id: 'protocol', field: 'verified.protocolVersion', label: 'Protocol version', options: [['1.0', '1.0'], ['0.3', '0.3'], ['0.2', '0.2']] },
  { id: 'provider', field: 'verified.provider', label: 'Provider' },
  { id: 'health', field: 'verified.health', label: 'Health', options: [['healthy', 'healthy'], ['degraded', 'degraded'], ['unhealthy', 'unhealthy'], ['unknown', 'unknown']] },
  { id: 'signature', field: 'verified.signature', label: 'Signature', options: [['verified', 'verified'], ['unsigned', 'unsigned'], ['invalid', 'invalid']] },
  { id: 'source', field: 'verified.source', label: 'Discovery source' },
  { id: 'snapshot', field: 'verified.inSnapshot', label: 'In snapshot', options: [['true', 'in the snapshot'], ['false', 'not in the snapshot']] },
];

/** @type {readonly (readonly [ArdFederation, string, string])[]} */
const FEDERATION = [
  ['none', 'This registry only', 'only what this service verified'],
  ['referrals', 'List other registries', 'and the registries it knows, for you to ask'],
  ['auto', 'Ask other registries too', 'their answers merged in, each result saying where it came from'],
];

const PAGE_SIZE = 10;

/** @typedef {Record<string, string[]>} Filters */
/**
 * @typedef {object} Page
 * @property {ArdSearchResult[]} results
 * @property {ArdReferral[]} referrals
 * @property {string | undefined} next the token of the page after this one
 * @property {number} index 0 for the first page
 */
/** @typedef {{ text: string, filters: Filters, federation: ArdFederation }} Query */
/** @typedef {{ message: string, status?: number, code?: string }} Failure */

/**
 * Kept across view changes for the life of the page: the query as last run, the tokens of the
 * pages read so far (`tokens[i]` fetched page i), the page shown.
 */
const kept = {
  /** @type {Query} */
  draft: { text: '', filters: {}, federation: 'none' },
  /** @type {Query | undefined} */
  ran: undefined,
  /** @type {(string | undefined)[]} */
  tokens: [],
  /** @type {Page | undefined} */
  page: undefined,
  /** @type {ArdExploreResponse['facets'] | undefined} */
  facets: undefined,
};

/** The ARD `filter` of a query: only the filters with values. @param {Filters} filters */
function ardFilter(filters) {
  /** @type {Record<string, unknown[]>} */
  const out = {};
  for (const f of FILTERS) {
    const values = (filters[f.id] ?? []).filter((v) => v !== '');
    if (values.length === 0) continue;
    out[f.field] = f.id === 'snapshot' ? values.map((v) => v === 'true') : values;
  }
  return out;
}

/** @param {Query} q */
function ardQuery(q) {
  const filter = ardFilter(q.filters);
  return { ...(q.text.trim() !== '' && { text: q.text.trim() }), ...(Object.keys(filter).length > 0 && { filter }) };
}

/** @param {unknown} err @returns {Failure} */
function failure(err) {
  if (err instanceof ApiError) return { message: err.message, status: err.status, code: err.code };
  return { message: err instanceof Error ? err.message : String(err) };
}

/** @param {ArdSearchResult} r @returns {ArdVerified | undefined} */
function verifiedOf(r) {
  const v = r.extensions?.[VERIFIED];
  return v && typeof v === 'object' ? /** @type {ArdVerified} */ (v) : undefined;
}

/**
 * Whether a result came from this registry rather than from one it asked: only then are its
 * verified facts this service's and its card in the card view. Without `federation: auto` every
 * result is local (ARD §8); with it, a result is local when it names no `source` or this page's
 * own origin.
 * @param {ArdSearchResult} r @param {ArdFederation} federation
 */
function isLocal(r, federation) {
  if (federation !== 'auto' || r.source === undefined || r.source === '') return true;
  try {
    return new URL(r.source, location.href).origin === location.origin;
  } catch {
    return false;
  }
}

/** @param {{ text?: string }} props `text`: from `#/search?q=…`, run once when the view opens. */
export function SearchView({ text = '' }) {
  const [draft, setDraftState] = useState(kept.draft);
  const [page, setPage] = useState(kept.page);
  const [facets, setFacets] = useState(kept.facets);
  const [facetError, setFacetError] = useState(/** @type {Failure | undefined} */ (undefined));
  const [error, setError] = useState(/** @type {Failure | undefined} */ (undefined));
  const [pending, setPending] = useState(false);
  const [hint, setHint] = useState('');
  const [filtersOpen, setFiltersOpen] = useState(false);
  const narrow = useMedia('(max-width: 720px)');
  const resultsHeading = useRef(/** @type {HTMLHeadingElement | null} */ (null));
  // After paging, focus moves to the results' heading (a screen reader reads the new page from there).
  const [focusResults, setFocusResults] = useState(false);
  // Answers to older requests are dropped: only the latest search (and explore) may land.
  const seq = useRef(0);
  const facetSeq = useRef(0);

  /** @param {Query} q */
  const setDraft = (q) => {
    kept.draft = q;
    setDraftState(q);
  };

  /** @param {Query} q */
  const explore = async (q) => {
    const n = ++facetSeq.current;
    try {
      /** @type {ArdExploreResponse} */
      const r = await api(`${ARD_BASE}/explore`, { method: 'POST', body: { query: ardQuery(q), resultType: { facets: FILTERS.map((f) => ({ field: f.field, limit: 8 })) } } });
      if (n !== facetSeq.current) return;
      kept.facets = r.facets;
      setFacets(r.facets);
      setFacetError(undefined);
    } catch (err) {
      if (n !== facetSeq.current) return;
      setFacetError(failure(err));
    }
  };

  /**
   * Runs `q`, page `index` (`tokens[index]` is its token; page 0 has none).
   * @param {Query} q @param {number} index @param {(string | undefined)[]} tokens @param {boolean} paging
   */
  const run = async (q, index, tokens, paging) => {
    if (q.text.trim() === '') {
      setHint('Type what you are looking for: ARD search needs text (the filters narrow it).');
      return;
    }
    setHint('');
    const n = ++seq.current;
    setPending(true);
    setError(undefined);
    try {
      /** @type {ArdSearchResponse} */
      const r = await api(`${ARD_BASE}/search`, {
        method: 'POST',
        body: { query: ardQuery(q), federation: q.federation, pageSize: PAGE_SIZE, ...(tokens[index] !== undefined && { pageToken: tokens[index] }) },
      });
      if (n !== seq.current) return;
      /** @type {Page} */
      const p = { results: [...(r.results ?? [])], referrals: [...(r.referrals ?? [])], next: r.pageToken, index };
      kept.ran = q;
      kept.tokens = r.pageToken !== undefined ? [...tokens.slice(0, index + 1), r.pageToken] : tokens.slice(0, index + 1);
      kept.page = p;
      setPage(p);
      if (paging) setFocusResults(true);
    } catch (err) {
      if (n !== seq.current) return;
      setError(failure(err));
    } finally {
      if (n === seq.current) setPending(false);
    }
  };

  /** A new query (a submit, a facet, a filter removed): page 1, fresh facets. @param {Query} q */
  const search = (q) => {
    setDraft(q);
    if (q.text.trim() !== '') history.replaceState(null, '', searchHref(q.text.trim()));
    void run(q, 0, [undefined], false);
    void explore(q);
  };

  useEffect(() => {
    // A link with a query runs it; otherwise the facets of the whole registry (or of the last query) show.
    if (text !== '' && (kept.ran === undefined || kept.ran.text !== text)) search({ ...kept.draft, text });
    else if (kept.facets === undefined) void explore(kept.ran ?? { text: '', filters: {}, federation: 'none' });
  }, [text]);

  // In the render that shows the new page, not a frame later: the results and the focus on them
  // arrive together (a screen reader reads the new heading, a key press lands in the results).
  useLayoutEffect(() => {
    if (!focusResults) return;
    setFocusResults(false);
    resultsHeading.current?.focus();
  }, [focusResults]);

  /** @param {string} id @param {string[]} values */
  const withFilter = (id, values) => ({ ...draft, filters: { ...draft.filters, [id]: values } });

  const ran = kept.ran;
  const status = pending
    ? 'Searching…'
    : error
      ? ''
      : page && ran
        ? page.results.length === 0
          ? page.index === 0
            ? `No agent matches “${ran.text}”${Object.keys(ardFilter(ran.filters)).length > 0 ? ' with these filters' : ''}.`
            : `Page ${page.index + 1} is empty.`
          : `${num(page.results.length)} result${page.results.length === 1 ? '' : 's'} on page ${page.index + 1}${page.next !== undefined ? ', more on the next page' : ', the last page'}.`
        : '';
  const filtersShown = !narrow || filtersOpen;
  const active = FILTERS.flatMap((f) => (draft.filters[f.id] ?? []).filter((v) => v !== '').map((v) => ({ f, v })));

  return html`<section aria-labelledby="view-title" class="search-view">
    <${ViewHeader} title="Search">Search the agents this registry verified — every card it fetched under its allowlist, validated, checked for signatures and keeps revalidating — as other registries and clients do (<code>POST /search</code>, ARD). Entries are the agents’ own words, shown as text.<//>
    <form class="panel search-form" id="search-form" role="search" aria-label="Search the registry" onSubmit=${(/** @type {Event} */ ev) => {
      ev.preventDefault();
      // The draft as kept, not as last rendered: Enter in a filter field commits it (change) just before the submit.
      search(kept.draft);
    }}>
      <div class="search-box">
        <label for="search-text">Search for</label>
        <input id="search-text" type="search" autocomplete="off" spellcheck="false" placeholder="e.g. warranty claims" value=${draft.text}
          aria-describedby=${hint ? 'search-hint' : undefined}
          onInput=${(/** @type {any} */ ev) => setDraft({ ...draft, text: ev.currentTarget.value })} />
        <button type="submit" class="btn btn-primary" id="search-submit" disabled=${pending}>Search</button>
      </div>
      ${hint ? html`<p class="field-error" id="search-hint">${hint}</p>` : null}
      <fieldset class="search-federation">
        <legend>Federation</legend>
        ${FEDERATION.map(
          ([value, label, help]) => html`<label class="check"><input type="radio" name="search-federation" id=${`search-federation-${value}`} value=${value} checked=${draft.federation === value}
            onChange=${() => setDraft({ ...draft, federation: value })} /> ${label} <span class="muted small">(${help})</span></label>`,
        )}
      </fieldset>
      ${narrow
        ? html`<button type="button" class="btn search-filters-toggle" id="search-filters-toggle" aria-expanded=${filtersOpen ? 'true' : 'false'} aria-controls="search-side" onClick=${() => setFiltersOpen(!filtersOpen)}>
            ${filtersOpen ? 'Hide the filters and facets' : 'Show the filters and facets'}${active.length > 0 ? ` (${active.length} set)` : ''}
          </button>`
        : null}
      ${active.length > 0
        ? html`<ul class="search-active" aria-label="Filters set">
            ${active.map(
              ({ f, v }) => html`<li><button type="button" class="chip chip-button" aria-label=${`Remove the filter ${f.label}: ${valueLabel(f, v)}`}
                onClick=${() => search(withFilter(f.id, (draft.filters[f.id] ?? []).filter((x) => x !== v)))}>${f.label}: ${valueLabel(f, v)} <span aria-hidden="true">×</span></button></li>`,
            )}
          </ul>`
        : null}
    </form>
    <p id="search-status" class="status-line" role="status" aria-live="polite">${status}</p>
    ${error ? html`<${ErrorNote} error=${error} />` : null}
    <div class="search-layout">
      <div class="search-side" id="search-side" hidden=${!filtersShown}>
        <${Facets} facets=${facets} error=${facetError} filters=${draft.filters}
          pick=${(/** @type {FilterDef} */ f, /** @type {string} */ v) => search(withFilter(f.id, [v]))} />
        <fieldset class="search-filters panel" id="search-filters" form="search-form">
          <legend>Filters</legend>
          <p class="muted small">Values separated by commas mean any of them; press Search to apply.</p>
          ${FILTERS.map((f) => html`<${FilterField} key=${f.id} f=${f} values=${draft.filters[f.id] ?? []} set=${(/** @type {string[]} */ v) => setDraft(withFilter(f.id, v))} />`)}
          <button type="submit" form="search-form" class="btn" id="search-apply" disabled=${pending}>Apply the filters</button>
        </fieldset>
      </div>
      <div class="search-main" aria-busy=${pending ? 'true' : 'false'}>
        ${page && page.referrals.length > 0 ? html`<${Referrals} referrals=${page.referrals} />` : null}
        ${page && ran
          ? html`<h2 id="search-results-h" tabindex="-1" ref=${resultsHeading}>Results for “${ran.text}”, page ${page.index + 1}</h2>
              <p class="muted small" id="search-score-note">Results are ordered by <strong>relevance</strong> (0–100): how well an entry matches the text. Relevance is not trust — what this registry verified is listed under each result.</p>
              ${page.results.length === 0 ? html`<p class="muted search-empty">${page.index === 0 ? 'No agent matches. Try other words, or fewer filters.' : 'Nothing more.'}</p>` : null}
              <ol class="search-results" start=${page.index * PAGE_SIZE + 1} aria-labelledby="search-results-h">
                ${page.results.map((r) => html`<${Result} key=${`${r.source ?? ''}|${r.identifier}`} r=${r} local=${isLocal(r, ran.federation)} />`)}
              </ol>
              <nav class="search-paging" aria-label="Result pages">
                <button type="button" class="btn" id="search-prev" disabled=${pending || page.index === 0} onClick=${() => ran && run(ran, page.index - 1, kept.tokens, true)}>Previous page</button>
                <span class="muted">Page ${page.index + 1}</span>
                <button type="button" class="btn" id="search-next" disabled=${pending || page.next === undefined} onClick=${() => ran && run(ran, page.index + 1, kept.tokens, true)}>Next page</button>
              </nav>`
          : !pending && !error
            ? html`<p class="muted search-empty" id="search-start">Type what you are looking for — a task, a skill, a provider — and press Search. The facets beside count what this registry holds.</p>`
            : null}
      </div>
    </div>
  </section>`;
}

/** A filter value as a person reads it. @param {FilterDef} f @param {string} v */
function valueLabel(f, v) {
  return f.options?.find(([value]) => value === v)?.[1] ?? v;
}

/** @param {{ f: FilterDef, values: string[], set: (v: string[]) => void }} props */
function FilterField({ f, values, set }) {
  const id = `search-filter-${f.id}`;
  if (f.options) {
    const value = values[0] ?? '';
    return html`<div class="field">
      <label for=${id}>${f.label}</label>
      <select id=${id} form="search-form" value=${value} onChange=${(/** @type {any} */ ev) => set(ev.currentTarget.value === '' ? [] : [ev.currentTarget.value])}>
        <option value="">any</option>
        ${value !== '' && !f.options.some(([v]) => v === value) ? html`<option value=${value}>${value}</option>` : null}
        ${f.options.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
      </select>
    </div>`;
  }
  return html`<div class="field">
    <label for=${id}>${f.label}</label>
    <input id=${id} form="search-form" type="text" autocomplete="off" spellcheck="false" value=${values.join(', ')}
      onChange=${(/** @type {any} */ ev) => set(String(ev.currentTarget.value).split(',').map((s) => s.trim()).filter((s) => s !== ''))} />
  </div>`;
}

/**
 * The facets of the matched set (`POST /explore`), each value a button that filters by it.
 * @param {{ facets: ArdExploreResponse['facets'] | undefined, error: Failure | undefined, filters: Filters, pick: (f: FilterDef, v: string) => void }} props
 */
function Facets({ facets, error, filters, pick }) {
  return html`<div class="search-facets panel" id="search-facets">
    <h2 id="search-facets-h">Facets</h2>
    <p class="muted small">How many entries match, by value; choose one to filter by it.</p>
    ${error ? html`<p class="error" id="search-facets-error">Facets unavailable: ${error.message}${error.status !== undefined ? ` (HTTP ${error.status})` : ''}</p>` : null}
    ${!facets && !error ? html`<p class="muted">Loading…</p>` : null}
    ${facets
      ? FILTERS.map((f) => {
          const facet = facets[f.field];
          if (!facet || facet.buckets.length === 0) return null;
          const hid = `search-facet-${f.id}-h`;
          return html`<section class="search-facet" key=${f.id} data-facet=${f.field} aria-labelledby=${hid}>
            <h3 id=${hid}>${f.label}</h3>
            <ul>
              ${facet.buckets.map((b) => {
                const on = (filters[f.id] ?? []).includes(b.value);
                return html`<li><button type="button" class="facet-value" aria-pressed=${on ? 'true' : 'false'} data-value=${b.value} onClick=${() => pick(f, b.value)}>
                  <span class="facet-label">${valueLabel(f, b.value)}</span>${b.count !== undefined ? html` <span class="facet-count">${num(b.count)}<span class="visually-hidden"> entries</span></span>` : null}
                </button></li>`;
              })}
              ${facet.otherCount ? html`<li class="muted small">${num(facet.otherCount)} in other values</li>` : null}
            </ul>
          </section>`;
        })
      : null}
  </div>`;
}

/** @param {{ referrals: ArdReferral[] }} props */
function Referrals({ referrals }) {
  return html`<section class="panel search-referrals" aria-labelledby="search-referrals-h" id="search-referrals">
    <h2 id="search-referrals-h">Other registries to ask</h2>
    <p class="muted small">This registry knows them (from AI Catalogs and its configured peers) but did not ask them; their answers are theirs, not verified here.</p>
    <ul>
      ${referrals.map(
        (r) => html`<li key=${r.identifier} data-referral=${r.url}><strong>${r.displayName}</strong> <code class="wrap-text">${r.url}</code>${r.description ? html`<div class="reason">${r.description}</div>` : null}</li>`,
      )}
    </ul>
  </section>`;
}

/** @param {string | undefined} v @param {string} fallback */
function word(v, fallback = 'not known') {
  return v === undefined || v === '' ? fallback : v;
}

/** One result: the entry, its relevance, where it came from, and what was verified about it. @param {{ r: ArdSearchResult, local: boolean }} props */
function Result({ r, local }) {
  const v = verifiedOf(r);
  const hid = `search-result-${encodeURIComponent(`${r.source ?? ''}|${r.identifier}`).replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return html`<li class=${`search-result panel${v?.lookalike ? ' search-result-lookalike' : ''}`} data-identifier=${r.identifier} data-source=${r.source ?? ''} aria-labelledby=${hid}>
    <div class="search-result-head">
      <h3 id=${hid}>${r.displayName}</h3>
      ${typeof r.score === 'number' ? html`<span class="search-score" title="relevance to the text, not trust">relevance <strong>${Math.round(r.score)}</strong></span>` : null}
    </div>
    ${v?.lookalike
      ? html`<p class="search-lookalike" role="note"><strong><span aria-hidden="true">⚠ </span>Lookalike name:</strong> this entry is confusingly like <strong>${v.lookalike.of}</strong> from <code class="wrap-text">${v.lookalike.origin}</code> (${v.lookalike.reason}). Check its origin before trusting it.</p>`
      : null}
    <p class="search-id"><code class="wrap-text">${r.identifier}</code>${r.version !== undefined ? html` <span class="muted small">version ${String(r.version)}</span>` : null}</p>
    ${r.description ? html`<p class="search-description">${r.description}</p>` : null}
    ${r.tags && r.tags.length > 0 ? html`<p class="search-tags">${r.tags.map((t) => html`<span class="chip">${t}</span>`)}</p>` : null}
    <p class="search-source small">${local ? html`From <strong>this registry</strong>` : html`From <strong>another registry</strong>: <code class="wrap-text">${r.source}</code>`}</p>
    ${v ? html`<${Verified} v=${v} local=${local} />` : html`<p class="muted small search-unverified">No verified facts: ${local ? 'this registry' : 'that registry'} sent none.</p>`}
  </li>`;
}

/** @param {{ v: ArdVerified, local: boolean }} props */
function Verified({ v, local }) {
  return html`<div class="search-verified">
    <p class="small search-verified-by">${local ? 'Verified by this registry:' : 'As that registry says (not verified here):'}</p>
    <dl class="search-facts">
      <div data-fact="snapshot"><dt>In snapshot</dt><dd>${v.inSnapshot ? html`<${Badge} tone="o-good" text="yes" /> as <code>${word(v.localName, '(unnamed)')}</code>` : html`<${Badge} tone="o-muted" text="no" />`}</dd></div>
      <div data-fact="verdict"><dt>Verdict</dt><dd>${v.verdict ? html`<${Explained} text=${v.verdict} explain=${meaningOf('verdict', v.verdict) ?? ''} />` : 'none yet'}${v.cause ? html` <${CauseBadge} cause=${v.cause} />` : null}${v.reason ? html`<div class="reason">${v.reason}</div>` : null}</dd></div>
      <div data-fact="health"><dt>Health</dt><dd><${Explained} text=${word(v.health)} tone=${outcomeClass(v.health)} explain=${meaningOf('health', v.health ?? '') ?? ''} /></dd></div>
      <div data-fact="signature"><dt>Signature</dt><dd><${Badge} text=${word(v.signature)} tone=${signatureTone(v.signature)} /></dd></div>
      <div data-fact="protocol"><dt>Protocol</dt><dd>${v.protocolVersion ? `A2A ${v.protocolVersion}` : 'not known'}</dd></div>
      <div data-fact="card-kind"><dt>Card</dt><dd>${word(v.cardKind)}${v.cardChangedAt ? html`<div class="muted small">changed <time datetime=${v.cardChangedAt}>${changedAt(v.cardChangedAt)}</time></div>` : null}</dd></div>
      <div data-fact="provenance" class="wide"><dt>Proposed by</dt><dd>${(v.provenance ?? []).length === 0
        ? 'no source recorded'
        : (v.provenance ?? []).map((p, i) => html`${i > 0 ? ', ' : ''}${local ? html`<a href=${sourcesHref(p.source)}>${p.source}</a>` : html`<code>${p.source}</code>`}${p.name ? html` <span class="muted">(as “${p.name}”)</span>` : null}`)}</dd></div>
    </dl>
    <p class="search-links small">Endpoint <code class="wrap-text">${v.endpoint}</code>${local
      ? html` · <a href=${cardHref(v.endpoint)} class="search-card-link">Card</a> · <a href=${inspectHref(v.endpoint)}>Inspect</a>`
      : html` · <a href=${inspectHref(v.endpoint)}>Inspect it here</a>`}</p>
  </div>`;
}

/** @param {string | undefined} s */
function signatureTone(s) {
  return s === 'verified' ? 'o-good' : s === 'invalid' ? 'o-failed' : s === 'unsigned' ? 'o-stale' : 'o-info';
}

/** @param {string} iso */
function changedAt(iso) {
  const t = Date.parse(iso);
  return Number.isNaN(t) ? iso : ago(t, Date.now());
}

/** A failed search, as the registry said it (ARD error shape), with what to do. @param {{ error: Failure }} props */
function ErrorNote({ error }) {
  const what =
    error.status === 401
      ? 'This registry asks for a token: enter one above.'
      : error.status === 429
        ? 'Too many searches: wait a moment and search again.'
        : error.status !== undefined && error.status >= 500
          ? 'The registry failed to answer; the search can be tried again.'
          : error.status !== undefined && error.status >= 400
            ? 'The registry refused this search; change the query or the filters.'
            : 'The registry could not be reached.';
  return html`<div class="panel panel-bad search-error" role="alert" id="search-error">
    <p><strong>The search failed</strong>${error.status !== undefined ? ` (HTTP ${error.status}${error.code ? `, ${error.code}` : ''})` : ''}: <span class="wrap-text">${error.message}</span></p>
    <p class="small">${what}</p>
  </div>`;
}
