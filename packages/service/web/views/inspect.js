// @ts-check
/**
 * Inspect: paste a URL, a card or a catalog (a registry catalog or an AI Catalog) and see what
 * discovery would decide, stage by stage,
 * under this service's allowlist (`POST /api/inspect`, the same stages `a2a-discovery probe`
 * prints). Everything in a report is third-party text: shown as text only.
 */
import { html, useEffect, useState } from '../lib/vendor.js';
import { api } from '../lib/api.js';
import { Badge, ViewHeader } from './common.js';
import { Access } from './card.js';

/** @typedef {'source' | 'address' | 'fetch' | 'parse' | 'schema' | 'policy' | 'signature' | 'security' | 'selected'} Stage */
/** @typedef {{ path: string, message: string }} Problem */
/**
 * @typedef {object} ProbeHttp
 * @property {number} [status]
 * @property {string} [remoteAddress]
 * @property {Record<string, string>} headers
 * @property {number} [maxAgeSeconds]
 * @property {string} [etag]
 * @property {boolean} [notModifiedSupported]
 * @property {boolean} [etagStable]
 * @property {string[]} notes
 */
/**
 * @typedef {object} ProbeReport
 * @property {string} source
 * @property {boolean} accepted
 * @property {Stage} stage
 * @property {{ selected: boolean, reason?: string }} selection whether the agent would be selected as far as the card decides, and why not (the same words as probe's)
 * @property {string} [protocolVersion]
 * @property {Problem[]} problems
 * @property {Problem[]} warnings
 * @property {{ id: string, name: string, tags: string[], inputModes: string[], outputModes: string[] }[]} skills
 * @property {{ path: string, url: string, role: string, called: boolean, binding?: string, allowed?: boolean, reason?: string }[]} urls
 * @property {{ status: string, ok: boolean, kid?: string, form?: string }} [signature]
 * @property {boolean} hostsJudged
 * @property {number} [bytes]
 * @property {string} [rawSha256]
 * @property {string} [canonicalSha256]
 * @property {ProbeHttp} [http]
 * @property {import('../lib/types.js').ChosenInterfaceJson} [chosenInterface] the interface a client here would call, with its tenant
 * @property {import('../lib/types.js').AccessJson['security']} [security] the card's security schemes against the service's credentials
 */
/**
 * @typedef {object} CatalogEntry
 * @property {number} index
 * @property {string} [name]
 * @property {string} [url]
 * @property {string} [endpoint]
 * @property {number} [duplicateOf]
 * @property {ProbeReport} [report]
 * @property {string} [skipped]
 */
/**
 * @typedef {object} AiCatalogDocument
 * @property {string} url
 * @property {string} via
 * @property {number} depth
 * @property {boolean} usable
 * @property {'source' | 'address' | 'fetch' | 'parse' | 'schema' | 'signature' | 'selected'} stage
 * @property {'http' | 'inline' | 'file'} origin
 * @property {number} [status]
 * @property {string} [contentType]
 * @property {number} [bytes]
 * @property {string} [rawSha256]
 * @property {string} [specVersion]
 * @property {{ status: string, ok: boolean, kid?: string, form?: string }} [signature]
 * @property {Problem[]} problems
 * @property {Problem[]} warnings
 * @property {number} entries
 * @property {number} cards
 * @property {number} nested
 * @property {number} ignored
 */
/**
 * @typedef {object} AiCatalogEntry
 * @property {string} catalog
 * @property {string} path
 * @property {number} depth
 * @property {string} identifier
 * @property {string} type
 * @property {string} [url]
 * @property {boolean} [inline]
 * @property {string} [displayName]
 * @property {string} [version]
 * @property {'accepted' | 'refused' | 'superseded' | 'ignored' | 'nested' | 'not-probed'} verdict
 * @property {{ decision: string, reason: string, instead?: string }} [selection]
 * @property {{ verdict: string, reason?: Problem, sha256?: string, identity?: string, kid?: string, matches?: boolean }} [trust]
 * @property {{ followed: boolean, url?: string, reason?: string }} [nested]
 * @property {string} [endpoint]
 * @property {Problem[]} problems
 * @property {ProbeReport} [report]
 * @property {string} [skipped]
 * @property {Lookalike} [lookalike] its name looks like another origin's agent
 */
/**
 * @typedef {object} Lookalike  a name confusingly like an agent of another origin (the earlier one is the original)
 * @property {string} of
 * @property {string} origin
 * @property {string} reason
 */
/**
 * @typedef {object} AiCatalogReport
 * @property {'ai-catalog'} kind
 * @property {string} source
 * @property {boolean} accepted
 * @property {AiCatalogDocument[]} documents
 * @property {AiCatalogEntry[]} entries
 * @property {Problem[]} problems
 * @property {string[]} notes
 * @property {{ entries: number, cards: number, accepted: number, refused: number, superseded: number, ignored: number, nested: number, notProbed: number }} counts
 */
/**
 * @typedef {object} InspectResult
 * @property {'url' | 'card' | 'catalog'} kind
 * @property {ProbeReport} [report]
 * @property {{ source: string, problems: Problem[], notes: string[], entries: CatalogEntry[], accepted: number, refused: number }} [catalog]
 * @property {AiCatalogReport} [aiCatalog]
 * @property {string[]} allowlist
 * @property {boolean} timedOut
 * @property {boolean} [truncated]
 * @property {string[]} [truncation]
 * @property {number} durationMs
 * @property {Lookalike} [lookalike] the card looks like an agent the service admitted from another origin
 */
/** @typedef {'url' | 'card' | 'catalog'} Kind */

/** @type {[Kind, string][]} */
const KINDS = [
  ['url', 'URL'],
  ['card', 'Card JSON'],
  ['catalog', 'Catalog JSON'],
];

/** Stages in the order discovery runs them; a pasted card starts at `parse`. */
/** @type {Stage[]} */
const STAGES = ['source', 'address', 'fetch', 'parse', 'schema', 'policy', 'signature'];
const STAGE_LABEL = {
  source: 'Source: admitted by the allowlist',
  address: 'Address: allowed at connect time',
  fetch: 'Fetch: HTTP 200, no redirect',
  parse: 'Parse: JSON within the limits',
  schema: 'Schema: a valid A2A card',
  policy: 'Policy: interfaces allowed',
  signature: 'Signature',
};

/** Kept across view changes for the life of the page. */
const kept = { kind: /** @type {Kind} */ ('url'), text: { url: '', card: '', catalog: '' }, result: /** @type {InspectResult | undefined} */ (undefined) };

/** `url`: from `#/inspect?url=…`, fills the URL field (a link from elsewhere in the dashboard); `allowed`: the role may inspect. @param {{ url?: string, allowed?: boolean }} props */
export function InspectView({ url = '', allowed = true }) {
  const [kind, setKind] = useState(kept.kind);
  const [text, setText] = useState(kept.text);
  useEffect(() => {
    if (url === '') return;
    kept.kind = 'url';
    kept.text = { ...kept.text, url };
    setKind('url');
    setText(kept.text);
  }, [url]);
  const [result, setResult] = useState(kept.result);
  const [error, setError] = useState('');
  const [running, setRunning] = useState(false);

  /** @param {Kind} k */
  const choose = (k) => {
    kept.kind = k;
    setKind(k);
  };
  /** @param {string} value */
  const edit = (value) => {
    kept.text = { ...text, [kind]: value };
    setText(kept.text);
  };

  /** @param {Event} ev */
  const submit = async (ev) => {
    ev.preventDefault();
    const value = text[kind].trim();
    if (value === '' || running) return;
    setRunning(true);
    setError('');
    try {
      /** @type {InspectResult} */
      const r = await api('/api/inspect', { method: 'POST', body: { [kind]: value } });
      kept.result = r;
      setResult(r);
    } catch (err) {
      kept.result = undefined;
      setResult(undefined);
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setRunning(false);
    }
  };

  const label = kind === 'url' ? 'URL to inspect' : kind === 'card' ? 'Card JSON' : 'Catalog JSON';
  return html`<section aria-labelledby="view-title" class="inspect">
    <${ViewHeader} title="Inspect">Paste a URL, an agent card, a registry catalog or an AI Catalog and see what discovery would decide about it, stage by stage, under this service’s allowlist — what <code>a2a-discovery probe</code> prints. A URL is fetched only when the allowlist admits it, never with credentials and never through a redirect.<//>
    <form class="panel inspect-form" aria-label="Inspect" onSubmit=${submit}>
      <fieldset class="inspect-kinds">
        <legend>What to inspect</legend>
        ${KINDS.map(
          ([k, text]) => html`<label class="check"><input type="radio" name="inspect-kind" id=${`inspect-kind-${k}`} value=${k} checked=${kind === k} onChange=${() => choose(k)} /> ${text}</label>`,
        )}
      </fieldset>
      <label for="inspect-input">${label}</label>
      ${kind === 'url'
        ? html`<input id="inspect-input" type="url" inputmode="url" autocomplete="off" spellcheck="false" placeholder="https://agents.example.com/ or …/agent-card.json" value=${text.url} onInput=${(/** @type {any} */ ev) => edit(ev.currentTarget.value)} aria-describedby="inspect-hint" />`
        : html`<textarea id="inspect-input" rows="10" spellcheck="false" value=${text[kind]} aria-describedby="inspect-hint"
            placeholder=${kind === 'card' ? '{ "name": "…", "url": "https://…", "skills": [ … ] }' : '{ "agents": [ { "name": "billing", "url": "https://billing.example.com/" } ] }'}
            onInput=${(/** @type {any} */ ev) => edit(ev.currentTarget.value)}
            onKeyDown=${(/** @type {KeyboardEvent} */ ev) => { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) void submit(ev); }}></textarea>`}
      <p class="muted small" id="inspect-hint">${kind === 'url'
        ? 'A base URL (its card is read from /.well-known/agent-card.json), the card’s own URL (a path ending in .json), or an AI Catalog’s URL (such as …/.well-known/ai-catalog.json: every entry is judged).'
        : kind === 'card'
          ? 'The card as published (A2A 0.3 or 1.0). Ctrl+Enter inspects.'
          : 'An AI Catalog ({ "specVersion": "1.0", "entries": [ … ] }: url entries are fetched as cards, inline data checked as cards, nested catalogs by URL listed, not fetched) or the simple registry format ({ "agents": [ { "name", "url" | "cardUrl", "tags"? } ] }, a next page not followed). Each entry is judged like discovery would. Ctrl+Enter inspects.'}</p>
      <div class="row">
        <button type="submit" class="btn btn-primary" id="inspect-submit" disabled=${running || text[kind].trim() === '' || !allowed}>${running ? 'Inspecting…' : 'Inspect'}</button>
        ${allowed ? null : html`<span class="muted small" id="inspect-role">Inspecting needs the operator role; you are a viewer.</span>`}
      </div>
    </form>
    <p id="inspect-status" class="status-line" role="status" aria-live="polite">${running ? 'Inspecting…' : error ? `Failed: ${error}` : result ? summary(result) : ''}</p>
    ${result && !running ? html`<${Result} result=${result} />` : null}
  </section>`;
}

/** One line for the live region. @param {InspectResult} r */
function summary(r) {
  if (r.aiCatalog) {
    const a = r.aiCatalog;
    const root = a.documents[0];
    if (root !== undefined && !root.usable) return `The AI Catalog is not usable: refused at stage ${root.stage}${problemLine(root.problems[0])}.`;
    const c = a.counts;
    return `AI Catalog: ${c.entries} entr${c.entries === 1 ? 'y' : 'ies'}, ${c.accepted} accepted, ${c.refused} refused, ${c.superseded} superseded, ${c.ignored} ignored, ${c.notProbed} not probed.`;
  }
  if (r.catalog) {
    const c = r.catalog;
    if (c.problems.length > 0) return `The catalog is not readable: ${c.problems.length} problem${c.problems.length === 1 ? '' : 's'}.`;
    return `Catalog: ${c.entries.length} entr${c.entries.length === 1 ? 'y' : 'ies'}, ${c.accepted} accepted, ${c.refused} refused.`;
  }
  const p = /** @type {ProbeReport} */ (r.report);
  return p.accepted ? `Accepted: ${ACCEPTED_MEANS}${notSelected(p)}.` : `Refused at stage ${p.stage}${problemLine(p.problems[0])}`;
}

/** An accepted card whose agent would not be selected (its security cannot be met): why, as probe says it. @param {ProbeReport} r */
function notSelected(r) {
  return r.selection && !r.selection.selected ? `; it would not be selected (${r.selection.reason})` : '';
}

/** What "accepted" checked and what it did not (the service's needs are not run by an inspection). */
const ACCEPTED_MEANS = 'discovery would admit, fetch and cache this card; whether an agent is selected also depends on the configured needs, which an inspection does not check';

/**
 * A problem in one line, with where it is: ": at capabilities: required, must be an object", or
 * the message alone when it concerns the whole document.
 * @param {Problem | undefined} p
 */
function problemLine(p) {
  if (p === undefined) return '';
  return p.path === '$' || p.path === '' ? `: ${p.message}` : `: at ${p.path}: ${p.message}`;
}

/**
 * A name confusingly like an agent of another origin: said first and plainly (typosquatting).
 * @param {{ lookalike: Lookalike, what: string }} props
 */
function LookalikeNote({ lookalike: l, what }) {
  return html`<p class="search-lookalike inspect-lookalike" role="note"><strong><span aria-hidden="true">⚠ </span>Lookalike name:</strong> ${what} is confusingly like <strong>${l.of}</strong> from <code class="wrap-text">${l.origin}</code> (${l.reason}). Check its origin before trusting it.</p>`;
}

/** @param {{ result: InspectResult }} props */
function Result({ result }) {
  return html`<div class="inspect-result" id="inspect-result">
    ${result.timedOut ? html`<p class="notice" role="note">The inspection deadline passed; requests still in flight were aborted.</p>` : null}
    ${result.truncated ? html`<div class="notice" role="note"><p>This answer is truncated: the inspection stopped at the service's bounds.</p><ul>${(result.truncation ?? []).map((t) => html`<li>${t}</li>`)}</ul></div>` : null}
    ${result.lookalike ? html`<${LookalikeNote} lookalike=${result.lookalike} what="This card" />` : null}
    ${result.report ? html`<${Report} report=${result.report} pasted=${result.kind === 'card'} headingLevel=${2} idPrefix="inspect" />` : null}
    ${result.catalog ? html`<${Catalog} catalog=${result.catalog} />` : null}
    ${result.aiCatalog ? html`<${AiCatalog} catalog=${result.aiCatalog} />` : null}
    <details class="inspect-allowlist">
      <summary>The allowlist applied</summary>
      <ul>${result.allowlist.map((l) => html`<li><code>${l}</code></li>`)}</ul>
    </details>
  </div>`;
}

/** @param {{ catalog: NonNullable<InspectResult['catalog']> }} props */
function Catalog({ catalog }) {
  if (catalog.problems.length > 0) {
    return html`<div class="panel panel-bad"><h2>The catalog is not readable</h2><${Problems} list=${catalog.problems} /></div>`;
  }
  return html`<div class="catalog-report">
    <h2>${catalog.entries.length} catalog entr${catalog.entries.length === 1 ? 'y' : 'ies'}: ${catalog.accepted} accepted, ${catalog.refused} refused</h2>
    ${catalog.notes.map((n) => html`<p class="muted small">${n}</p>`)}
    <ol class="catalog-entries">
      ${catalog.entries.map(
        (e) => html`<li class="panel catalog-entry" data-entry=${e.index}>
          <h3>${e.name ?? `agents[${e.index}]`} <span class="url">${e.url ?? ''}</span></h3>
          ${e.duplicateOf !== undefined ? html`<p class="muted small">The same endpoint as entry ${e.duplicateOf + 1}: discovery merges them, so this is its decision.</p>` : null}
          ${e.skipped ? html`<p><${Badge} tone="o-muted" text="not probed" /> ${e.skipped}</p>` : null}
          ${e.report ? html`<${Report} report=${e.report} pasted=${false} headingLevel=${4} idPrefix=${`inspect-entry-${e.index}`} />` : null}
        </li>`,
      )}
    </ol>
  </div>`;
}

/** What a catalog document's stages check. */
const DOCUMENT_STAGE_LABEL = {
  source: 'Source: admitted by the allowlist',
  address: 'Address: allowed at connect time',
  fetch: 'Fetch: HTTP 200, no redirect',
  parse: 'Parse: JSON within the limits',
  schema: 'Schema: a valid AI Catalog',
  signature: 'Signature: the catalog’s, against the trust store',
};

/**
 * An AI Catalog: each document's stages, then each of its entries with what discovery decides
 * (type, version, Trust Manifest) and the card's own report.
 * @param {{ catalog: AiCatalogReport }} props
 */
function AiCatalog({ catalog }) {
  const c = catalog.counts;
  return html`<div class="catalog-report ai-catalog-report" data-accepted=${catalog.accepted ? 'true' : 'false'}>
    <h2 class="probe-verdict"><${Badge} tone=${catalog.accepted ? 'o-good' : 'o-failed'} text=${catalog.accepted ? 'accepted' : 'refused'} /> AI Catalog: ${c.entries} entr${c.entries === 1 ? 'y' : 'ies'}, ${c.accepted} accepted, ${c.refused} refused, ${c.superseded} superseded, ${c.ignored} ignored</h2>
    <p class="muted small url">${catalog.source}</p>
    ${catalog.problems.length > 0 ? html`<${Problems} list=${catalog.problems} />` : null}
    ${catalog.notes.map((n) => html`<p class="muted small">${n}</p>`)}
    ${catalog.documents.map((d) => html`<section class="panel ai-catalog-document" data-catalog=${d.url} aria-label=${`Catalog ${d.url}`}>
      <h3>Catalog <span class="url">${d.url}</span></h3>
      ${d.via !== 'root' ? html`<p class="muted small">Nested at depth ${d.depth}, listed at <span class="url">${d.via}</span>.</p>` : null}
      <${DocumentStages} doc=${d} />
      ${d.usable
        ? html`<ol class="catalog-entries" aria-label="Entries">
            ${catalog.entries.filter((e) => e.catalog === d.url).map((e) => html`<${AiCatalogEntryItem} entry=${e} />`)}
          </ol>`
        : null}
    </section>`)}
  </div>`;
}

/** @param {{ doc: AiCatalogDocument }} props */
function DocumentStages({ doc: d }) {
  /** @type {Array<keyof typeof DOCUMENT_STAGE_LABEL>} */
  const all = d.origin === 'http' ? ['source', 'address', 'fetch', 'parse', 'schema', 'signature'] : d.origin === 'file' ? ['parse', 'schema', 'signature'] : ['parse', 'schema'];
  const failedAt = d.usable ? -1 : all.indexOf(/** @type {any} */ (d.stage));
  const detail = (/** @type {string} */ s) => {
    if (s === 'fetch' && d.status !== undefined) return `HTTP ${d.status}${d.contentType ? `, ${d.contentType}` : ''}`;
    if (s === 'parse') return d.origin === 'inline' ? 'Inline in its parent catalog.' : d.bytes !== undefined ? `${d.bytes} bytes, sha256 ${(d.rawSha256 ?? '').slice(0, 16)}…` : '';
    if (s === 'schema' && d.specVersion) return `AI Catalog ${d.specVersion}: ${d.entries} entries (${d.cards} A2A cards, ${d.nested} nested catalogs, ${d.ignored} of other types).`;
    if (s === 'signature' && d.signature) return `${d.signature.status}${d.signature.kid ? ` (kid ${d.signature.kid})` : ''}`;
    return '';
  };
  return html`<ol class="probe-stages" aria-label="Catalog stages">
    ${all.map((s, i) => {
      const state = failedAt === -1 || i < failedAt ? 'passed' : i === failedAt ? 'failed' : 'not-reached';
      const text = state === 'not-reached' ? '' : detail(s);
      return html`<li class=${`probe-stage probe-stage-${state}`} data-stage=${s} data-state=${state}>
        <div class="probe-stage-head">
          <${Badge} tone=${state === 'passed' ? 'o-good' : state === 'failed' ? 'o-failed' : 'o-muted'} text=${state === 'not-reached' ? 'not reached' : state} />
          <strong>${DOCUMENT_STAGE_LABEL[s]}</strong>
        </div>
        ${text ? html`<p class="probe-detail">${text}</p>` : null}
        ${state === 'failed' ? html`<${Problems} list=${d.problems} />` : null}
      </li>`;
    })}
  </ol>
  ${d.warnings.length > 0 ? html`<p><strong>Notes</strong> (these do not refuse the catalog)</p><${Problems} list=${d.warnings} note=${true} />` : null}`;
}

const ENTRY_VERDICT = {
  accepted: ['o-good', 'accepted'],
  refused: ['o-failed', 'refused'],
  superseded: ['o-muted', 'superseded'],
  ignored: ['o-muted', 'ignored'],
  nested: ['o-muted', 'nested catalog'],
  'not-probed': ['o-muted', 'not probed'],
};

/** @param {{ entry: AiCatalogEntry }} props */
function AiCatalogEntryItem({ entry: e }) {
  const [tone, label] = ENTRY_VERDICT[e.verdict];
  const t = e.trust;
  const trust = !t
    ? undefined
    : t.verdict === 'pinned'
      ? `Pinned: sha256 ${t.sha256} by ${t.identity} (kid ${t.kid})${t.matches === undefined ? '' : t.matches ? '; the card’s bytes match' : '; the card’s bytes do NOT match'}`
      : t.verdict === 'refused'
        ? `Refused at ${t.reason?.path ?? 'trustManifest'}: ${t.reason?.message ?? ''}`
        : t.verdict === 'unverified'
          ? `Unverified, pins nothing: ${t.reason?.message ?? ''}`
          : t.reason
            ? `No pin: ${t.reason.message}`
            : 'No Trust Manifest';
  return html`<li class="panel catalog-entry ai-catalog-entry" data-entry=${e.path} data-verdict=${e.verdict}>
    <h4><${Badge} tone=${tone} text=${label} /> <span>${e.displayName ?? e.identifier}</span> <span class="muted small">${e.path}</span></h4>
    ${e.lookalike ? html`<${LookalikeNote} lookalike=${e.lookalike} what="This entry" />` : null}
    <dl class="probe-headers">
      <div><dt>identifier</dt><dd><code>${e.identifier}</code></dd></div>
      <div><dt>type</dt><dd><code>${e.type}</code></dd></div>
      <div><dt>artifact</dt><dd>${e.inline ? 'inline data' : html`<span class="url">${e.url ?? ''}</span>`}</dd></div>
      ${e.selection ? html`<div><dt>version</dt><dd>${e.version ?? '(none)'}: ${e.selection.decision} — ${e.selection.reason}${e.selection.instead && e.selection.decision !== 'chosen' ? html` (<span class="url">${e.selection.instead}</span>)` : ''}</dd></div>` : null}
      ${trust ? html`<div><dt>trust</dt><dd>${trust}</dd></div>` : null}
      ${e.nested ? html`<div><dt>nested</dt><dd>${e.nested.followed ? html`followed: <span class="url">${e.nested.url ?? ''}</span>` : `not followed: ${e.nested.reason ?? ''}`}</dd></div>` : null}
    </dl>
    ${e.verdict === 'ignored' ? html`<p class="muted small">Not an A2A agent card: discovery reads A2A card entries and nested catalogs only, and never fetches this one.</p>` : null}
    ${e.problems.length > 0 ? html`<${Problems} list=${e.problems} />` : null}
    ${e.skipped ? html`<p><${Badge} tone="o-muted" text="not probed" /> ${e.skipped}</p>` : null}
    ${e.report ? html`<${Report} report=${e.report} pasted=${e.inline === true} headingLevel=${5} idPrefix=${`inspect-ai-${idPart(`${e.catalog} ${e.path}`)}`} />` : null}
  </li>`;
}

/**
 * One report: the verdict, then each stage in order (passed, failed with its problems and
 * where, or not reached), then skills and notes.
 * @param {{ report: ProbeReport, pasted: boolean, headingLevel: number, idPrefix: string }} props
 */
function Report({ report: r, pasted, headingLevel, idPrefix }) {
  // The same stages every time (a pasted card has no source, address or fetch to judge).
  const stages = STAGES.filter((s) => !(pasted && (s === 'source' || s === 'address' || s === 'fetch')));
  const failedAt = r.accepted ? -1 : stages.indexOf(r.stage);
  const verdict = r.accepted ? `Accepted: ${ACCEPTED_MEANS}${notSelected(r)}` : `Refused at stage ${r.stage}`;
  const H = headingLevel === 2 ? 'h2' : headingLevel === 5 ? 'h5' : 'h4';
  return html`<div class="probe-report" data-accepted=${r.accepted ? 'true' : 'false'} data-stage=${r.stage}>
    <${H} class="probe-verdict"><${Badge} tone=${r.accepted ? 'o-good' : 'o-failed'} text=${r.accepted ? 'accepted' : 'refused'} /> ${verdict}<//>
    <p class="muted small probe-source">${r.source}</p>
    <ol class="probe-stages" aria-label="Stages">
      ${stages.map((s, i) => {
        const state = failedAt === -1 || i < failedAt ? 'passed' : i === failedAt ? 'failed' : 'not-reached';
        return html`<li class=${`probe-stage probe-stage-${state}`} data-stage=${s} data-state=${state}>
          <div class="probe-stage-head">
            <${Badge} tone=${state === 'passed' ? 'o-good' : state === 'failed' ? 'o-failed' : 'o-muted'} text=${state === 'not-reached' ? 'not reached' : state} />
            <strong>${STAGE_LABEL[/** @type {keyof typeof STAGE_LABEL} */ (s)]}</strong>
          </div>
          ${state !== 'not-reached' ? html`<${StageDetail} stage=${s} report=${r} />` : null}
          ${state === 'failed' ? html`<${Problems} list=${r.problems} />` : null}
        </li>`;
      })}
    </ol>
    ${r.skills.length > 0
      ? html`<p class="probe-skills-h"><strong>Skills</strong></p>
          <ul class="probe-skills">${r.skills.map((k) => html`<li><code>${k.id}</code> tags: ${k.tags.join(', ') || '—'}; in: ${k.inputModes.join(', ') || '—'}; out: ${k.outputModes.join(', ') || '—'}</li>`)}</ul>`
      : null}
    ${r.chosenInterface || r.security
      ? html`<${Access} access=${{ ...(r.chosenInterface && { chosenInterface: r.chosenInterface }), ...(r.security && { security: r.security }) }} prefix=${idPrefix} level=${headingLevel + 1} />`
      : null}
    ${r.warnings.length > 0 ? html`<p><strong>Notes</strong> (these do not refuse the card)</p><${Problems} list=${r.warnings} note=${true} />` : null}
  </div>`;
}

/** What a stage saw, in words. @param {{ stage: Stage, report: ProbeReport }} props */
function StageDetail({ stage, report: r }) {
  const h = r.http;
  switch (stage) {
    case 'source':
      return r.stage === 'source' && !r.accepted ? null : html`<p class="probe-detail">The allowlist admits this origin.</p>`;
    case 'address':
      return h?.remoteAddress ? html`<p class="probe-detail">Connected to <code>${h.remoteAddress}</code> (address allowed).</p>` : null;
    case 'fetch':
      if (!h) return null;
      return html`<div class="probe-detail">
        ${h.status !== undefined ? html`<p>HTTP ${h.status}${h.maxAgeSeconds !== undefined ? `; max-age ${h.maxAgeSeconds} s` : '; no max-age'}${h.etag !== undefined ? html`; ETag <code>${h.etag}</code>` : '; no ETag'}${h.notModifiedSupported !== undefined ? (h.notModifiedSupported ? '; a conditional request got 304' : '; a conditional request did not get 304') : ''}${h.etagStable !== undefined ? (h.etagStable ? '; the ETag is stable' : '; the ETag changed between identical requests') : ''}.</p>` : null}
        ${Object.keys(h.headers).length > 0 ? html`<dl class="probe-headers">${Object.entries(h.headers).map(([k, v]) => html`<div><dt>${k}</dt><dd><code>${v}</code></dd></div>`)}</dl>` : null}
        ${h.notes.length > 0 ? html`<ul class="probe-http-notes">${h.notes.map((n) => html`<li>${n}</li>`)}</ul>` : null}
      </div>`;
    case 'parse':
      return r.bytes !== undefined ? html`<p class="probe-detail">${r.bytes} bytes, sha256 <code>${(r.rawSha256 ?? '').slice(0, 16)}…</code></p>` : null;
    case 'schema':
      return r.protocolVersion ? html`<p class="probe-detail">An A2A ${r.protocolVersion} card${r.protocolVersion === '1.0' ? '' : ' (normalized to the 1.0 model)'}.</p>` : null;
    case 'policy': {
      if (r.urls.length === 0) return null;
      return html`<ul class="probe-detail probe-urls">${r.urls.map((u) => html`<li><span class="muted">${u.role}${u.binding ? ` ${u.binding}` : ''}</span> <span class="url">${u.url}</span> — ${urlVerdict(u)}</li>`)}</ul>`;
    }
    case 'signature':
      return r.signature
        ? html`<p class="probe-detail">${r.signature.status}${r.signature.kid ? ` (kid ${r.signature.kid}${r.signature.form ? `, ${r.signature.form}` : ''})` : ''}</p>`
        : html`<p class="probe-detail">Not checked: this service requires no signature.</p>`;
    default:
      return null;
  }
}

/** @param {ProbeReport['urls'][number]} u */
function urlVerdict(u) {
  if (!u.called) return u.role === 'interface' ? `not called: ${u.reason ?? 'not a binding this client speaks'}` : 'listed, never fetched';
  if (u.allowed === false) return `refused: ${u.reason ?? ''}`;
  // Hosts not judged (no allowlist to judge them by): say only what the URL is.
  return u.allowed ? 'allowed' : `${schemeOf(u.url)}, not judged`;
}

/** @param {string} url */
function schemeOf(url) {
  try {
    return new URL(url).protocol.replace(/:$/, '');
  } catch {
    return 'not a URL';
  }
}

/** Problems (or notes) with the JSON path of each. @param {{ list: Problem[], note?: boolean }} props */
function Problems({ list, note }) {
  return html`<ul class=${note ? 'probe-problems probe-notes' : 'probe-problems'}>
    ${list.map((p) => html`<li>${p.path === '$' || p.path === '' ? null : html`<code class="path">${p.path}</code> `}<span>${p.message}</span></li>`)}
  </ul>`;
}

/** A short id-safe token for `text` (FNV-1a, base 36): unique ids for reports repeated on one page. @param {string} text */
function idPart(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(36);
}
