// @ts-check
/**
 * Inspect: paste a URL, a card or a catalog and see what discovery would decide, stage by stage,
 * under this service's allowlist (`POST /api/inspect`, the same stages `a2a-discovery probe`
 * prints). Everything in a report is third-party text: shown as text only.
 */
import { html, useEffect, useState } from '../lib/vendor.js';
import { api } from '../lib/api.js';
import { Badge, ViewHeader } from './common.js';

/** @typedef {'source' | 'address' | 'fetch' | 'parse' | 'schema' | 'policy' | 'signature' | 'selected'} Stage */
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
 * @typedef {object} InspectResult
 * @property {'url' | 'card' | 'catalog'} kind
 * @property {ProbeReport} [report]
 * @property {{ source: string, problems: Problem[], notes: string[], entries: CatalogEntry[], accepted: number, refused: number }} [catalog]
 * @property {string[]} allowlist
 * @property {boolean} timedOut
 * @property {number} durationMs
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

/** `url`: from `#/inspect?url=…`, fills the URL field (a link from elsewhere in the dashboard). @param {{ url?: string }} props */
export function InspectView({ url = '' }) {
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
    <${ViewHeader} title="Inspect">Paste a URL, an agent card or a registry catalog and see what discovery would decide about it, stage by stage, under this service’s allowlist — what <code>a2a-discovery probe</code> prints. A URL is fetched only when the allowlist admits it, never with credentials and never through a redirect.<//>
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
        ? 'A base URL (its card is read from /.well-known/agent-card.json) or the card’s own URL (a path ending in .json).'
        : kind === 'card'
          ? 'The card as published (A2A 0.3 or 1.0). Ctrl+Enter inspects.'
          : 'The simple catalog format: { "agents": [ { "name", "url" | "cardUrl", "tags"? } ] }. Each entry is judged like discovery would; a next page is not followed. Ctrl+Enter inspects.'}</p>
      <div class="row">
        <button type="submit" class="btn btn-primary" id="inspect-submit" disabled=${running || text[kind].trim() === ''}>${running ? 'Inspecting…' : 'Inspect'}</button>
      </div>
    </form>
    <p id="inspect-status" class="status-line" role="status" aria-live="polite">${running ? 'Inspecting…' : error ? `Failed: ${error}` : result ? summary(result) : ''}</p>
    ${result && !running ? html`<${Result} result=${result} />` : null}
  </section>`;
}

/** One line for the live region. @param {InspectResult} r */
function summary(r) {
  if (r.catalog) {
    const c = r.catalog;
    if (c.problems.length > 0) return `The catalog is not readable: ${c.problems.length} problem${c.problems.length === 1 ? '' : 's'}.`;
    return `Catalog: ${c.entries.length} entr${c.entries.length === 1 ? 'y' : 'ies'}, ${c.accepted} accepted, ${c.refused} refused.`;
  }
  const p = /** @type {ProbeReport} */ (r.report);
  return p.accepted ? 'Accepted: a client would select this card.' : `Refused at stage ${p.stage}: ${p.problems[0]?.message ?? ''}`;
}

/** @param {{ result: InspectResult }} props */
function Result({ result }) {
  return html`<div class="inspect-result" id="inspect-result">
    ${result.timedOut ? html`<p class="notice" role="note">The inspection deadline passed; requests still in flight were aborted.</p>` : null}
    ${result.report ? html`<${Report} report=${result.report} pasted=${result.kind === 'card'} headingLevel=${2} />` : null}
    ${result.catalog ? html`<${Catalog} catalog=${result.catalog} />` : null}
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
          ${e.report ? html`<${Report} report=${e.report} pasted=${false} headingLevel=${4} />` : null}
        </li>`,
      )}
    </ol>
  </div>`;
}

/**
 * One report: the verdict, then each stage in order (passed, failed with its problems and
 * where, or not reached), then skills and notes.
 * @param {{ report: ProbeReport, pasted: boolean, headingLevel: number }} props
 */
function Report({ report: r, pasted, headingLevel }) {
  const stages = STAGES.filter((s) => !(pasted && (s === 'source' || s === 'address' || s === 'fetch')) && !(s === 'signature' && !r.signature && (r.accepted || r.stage !== 'signature')));
  const failedAt = r.accepted ? -1 : stages.indexOf(r.stage);
  const verdict = r.accepted ? 'Accepted: a client would select this card' : `Refused at stage ${r.stage}`;
  const H = headingLevel === 2 ? 'h2' : 'h4';
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
      return r.signature ? html`<p class="probe-detail">${r.signature.status}${r.signature.kid ? ` (kid ${r.signature.kid}${r.signature.form ? `, ${r.signature.form}` : ''})` : ''}</p>` : null;
    default:
      return null;
  }
}

/** @param {ProbeReport['urls'][number]} u */
function urlVerdict(u) {
  if (!u.called) return u.role === 'interface' ? `not called: ${u.reason ?? 'not a binding this client speaks'}` : 'listed, never fetched';
  if (u.allowed === false) return `refused: ${u.reason ?? ''}`;
  return u.allowed ? 'allowed' : 'https';
}

/** Problems (or notes) with the JSON path of each. @param {{ list: Problem[], note?: boolean }} props */
function Problems({ list, note }) {
  return html`<ul class=${note ? 'probe-problems probe-notes' : 'probe-problems'}>
    ${list.map((p) => html`<li><code class="path">${p.path}</code> <span>${p.message}</span></li>`)}
  </ul>`;
}
