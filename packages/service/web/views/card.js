// @ts-check
/**
 * Card view: an endpoint's card as fetched (the bytes the cache holds), with every problem and
 * warning highlighted at its JSON path. Card text is third-party input: shown as text only.
 */
import { html, useEffect, useMemo, useState } from '../lib/vendor.js';
import { ApiError, api } from '../lib/api.js';
import { ago, bytes, endpointLabel, interfaceText, securityBadge } from '../lib/format.js';
import { isWithin, jsonLines, nearestPath } from '../lib/json-lines.js';
import { cardHref, inspectHref } from '../lib/routes.js';
import { Badge, EmptyRow, TableWrap, ViewHeader } from './common.js';
import { ProposedBy } from './provenance.js';

/** @typedef {import('../lib/store.js').LiveStore} LiveStore */
/** @typedef {import('../lib/types.js').CardJson} CardJson */
/** @typedef {import('../lib/types.js').Problem} Problem */
/** @typedef {import('../lib/types.js').ErrorJson} ErrorJson */
/** @typedef {{ path: string, message: string, level: 'error' | 'warning', id: string }} Marked */

/** @param {{ store: LiveStore, url: string }} props */
export function CardView({ store, url }) {
  const endpoints = (store.endpoints ?? []).filter((e) => e.admitted);
  const selected = url || endpoints[0]?.baseUrl || '';
  const [card, setCard] = useState(/** @type {CardJson | undefined} */ (undefined));
  const [missing, setMissing] = useState(/** @type {{ message: string, lastFailure?: ErrorJson | null } | undefined} */ (undefined));
  const [raw, setRaw] = useState(false);
  const [loading, setLoading] = useState(false);
  const ep = endpoints.find((e) => e.baseUrl === selected);
  // Re-read the card when the cache reports a new outcome for this endpoint.
  const stamp = `${ep?.cache?.rawSha256 ?? ''}|${ep?.cache?.lastOutcome ?? ''}|${ep?.cache?.lastError?.code ?? ''}|${ep?.lastFailure?.failures ?? ''}`;

  useEffect(() => {
    if (selected === '') return;
    let live = true;
    setLoading(true);
    api(`/api/endpoints/card?url=${encodeURIComponent(selected)}`).then(
      (c) => {
        if (!live) return;
        setCard(c);
        setMissing(undefined);
        setLoading(false);
      },
      (err) => {
        if (!live) return;
        setCard(undefined);
        setMissing({ message: err instanceof Error ? err.message : String(err), lastFailure: err instanceof ApiError ? err.body?.lastFailure : undefined });
        setLoading(false);
      },
    );
    return () => void (live = false);
  }, [selected, stamp]);

  /** @param {string} next */
  const choose = (next) => {
    location.hash = cardHref(next);
  };

  return html`<section aria-labelledby="view-title">
    <${ViewHeader} title="Card">The agent card as fetched, with every problem and warning the validator reported highlighted at its JSON path. Card text is shown as text and never reaches a model.<//>
    <form class="filters" aria-label="Choose an endpoint" onSubmit=${(/** @type {Event} */ ev) => ev.preventDefault()}>
      <label>Endpoint
        <select id="card-endpoint" value=${selected} onChange=${(/** @type {any} */ ev) => choose(ev.currentTarget.value)}>
          ${selected !== '' && !ep ? html`<option value=${selected}>${selected}</option>` : null}
          ${endpoints.map((e) => html`<option value=${e.baseUrl}>${endpointLabel(e.baseUrl)} — ${e.names.join(', ')}</option>`)}
        </select>
      </label>
      <label class="check"><input type="checkbox" id="card-raw" checked=${raw} onChange=${(/** @type {any} */ ev) => setRaw(ev.currentTarget.checked)} /> raw bytes</label>
      ${selected !== '' ? html`<a href=${inspectHref(selected)} id="card-inspect">Inspect this endpoint</a>` : null}
      <span class="muted" aria-live="polite">${loading ? 'Loading…' : ''}</span>
    </form>
    ${selected === '' ? html`<p>No endpoint yet.</p>` : null}
    ${missing ? html`<${Missing} info=${missing} />` : null}
    ${missing && ep ? html`<${ProposedBy} proposals=${ep.proposals} headingLevel=${2} />` : null}
    ${ep && OUT_OF_SNAPSHOT.has(ep.state.verdict) ? html`<p class="panel panel-bad" id="card-left">Not in the current snapshot (${ep.state.verdict}, ${ago(ep.state.since, Date.now())}): ${ep.state.reason}</p>` : null}
    ${card && ep?.access ? html`<${Access} access=${ep.access} kind=${ep.cardKind === 'extended' ? { identity: ep.identity } : undefined} />` : null}
    ${card ? html`<${CardBody} card=${card} raw=${raw} fetchedAt=${ep?.cache?.fetchedAtWall} proposals=${ep?.proposals} />` : null}
  </section>`;
}

/**
 * How a client here calls the agent: the chosen interface with its tenant, and the card's
 * security schemes with whether the configured credentials can present each. Scheme names and
 * descriptions are card text, rendered as text.
 * `kind` is set when the card in use is the authenticated extended card (with the identity it was
 * fetched for); `prefix` keeps ids unique where several are shown (the inspector), `level` the heading.
 * @param {{ access: import('../lib/types.js').AccessJson, kind?: { identity?: string }, prefix?: string, level?: number }} props
 */
export function Access({ access, kind, prefix = 'card', level = 2 }) {
  const ci = access.chosenInterface;
  const sec = access.security;
  const badge = sec ? securityBadge(sec.status) : undefined;
  const H = `h${Math.min(6, Math.max(2, level))}`;
  return html`<div class="card-access" id=${`${prefix}-access`}>
    <${H} id=${`${prefix}-access-h`}>Interface and security<//>
    <dl class="facts">
      ${kind ? html`<div class="wide"><dt>Card in use</dt><dd id=${`${prefix}-kind`}>the authenticated extended card${kind.identity ? html`, fetched as <code>${kind.identity}</code>` : null} (the public card is the fallback)</dd></div>` : null}
      <div class="wide"><dt>Chosen interface</dt><dd id=${`${prefix}-interface`}>${ci ? html`<code>${interfaceText(ci)}</code>` : html`<span class="muted">none a client here calls</span>`}</dd></div>
      <div><dt>Tenant</dt><dd id=${`${prefix}-tenant`}>${ci?.tenant !== undefined ? html`<code>${ci.tenant}</code>` : html`<span class="muted">none</span>`}</dd></div>
      <div><dt>Client</dt><dd>${ci ? (ci.client === 'adk-0.3' ? 'ADK (A2A 0.3)' : 'A2A 1.x') : '—'}</dd></div>
      ${sec && badge ? html`<div class="wide"><dt>Credentials</dt><dd id=${`${prefix}-security`} data-status=${sec.status}><${Badge} tone=${badge.tone} text=${badge.text} /> ${sec.message}</dd></div>` : null}
    </dl>
    ${sec && sec.schemes.length > 0
      ? html`<${TableWrap}>
          <table class="data schemes" aria-labelledby=${`${prefix}-access-h`}>
            <caption>Security schemes the card declares${sec.requirements.length > 0 ? ` (accepted: ${sec.requirements.map((r) => (r.length === 0 ? 'anonymous' : r.join(' + '))).join(' or ')})` : ' (none required)'}</caption>
            <thead><tr><th scope="col">Scheme</th><th scope="col">Needs</th><th scope="col">Can be presented</th><th scope="col">Description (card text)</th></tr></thead>
            <tbody>
              ${sec.schemes.map(
                (sc) => html`<tr key=${sc.name} data-scheme=${sc.name}>
                  <th scope="row"><code>${sc.name}</code></th>
                  <td class="wrap">${sc.needs}</td>
                  <td>${sc.presentable ? html`<${Badge} tone="o-good" text="yes" />` : html`<${Badge} tone="o-failed" text="no" />`}</td>
                  <td class="wrap">${sc.description ?? ''}</td>
                </tr>`,
              )}
            </tbody>
          </table>
        <//>`
      : null}
  </div>`;
}

/** Verdicts of an endpoint that no agent of the current snapshot stands for. */
const OUT_OF_SNAPSHOT = new Set(['refused', 'gone', 'pending', 'removed', 'unsuitable', 'excluded', 'held']);
/** Stages whose failure is the card being refused (its content), not the refresh failing. */
const REFUSING_STAGES = new Set(['parse', 'schema', 'policy', 'signature']);

/**
 * How the last refresh ended, in words: a card refused for its content is not a timeout.
 * @param {ErrorJson} err
 */
function lastRefresh(err) {
  return err.stage !== undefined && REFUSING_STAGES.has(err.stage) ? `The last refresh was refused (${err.stage})` : `The last refresh failed${err.stage ? ` (${err.stage})` : ''}`;
}

/** @param {{ info: { message: string, lastFailure?: ErrorJson | null } }} props */
function Missing({ info }) {
  const f = info.lastFailure;
  return html`<div class="panel panel-bad">
    <h2>No card is cached</h2>
    <p>${info.message}</p>
    ${f ? html`<p><${Badge} tone="o-failed" text=${f.stage ?? 'fetch'} /> <code>${f.code}</code> ${f.message}</p>` : null}
    ${f?.problems?.length ? html`<${ProblemList} marked=${f.problems.map((p, i) => ({ ...p, level: 'error', id: `p-${i}` }))} lines=${undefined} />` : null}
  </div>`;
}

/** @param {{ card: CardJson, raw: boolean, fetchedAt: number | undefined, proposals: import('../lib/types.js').Proposal[] | undefined }} props */
function CardBody({ card, raw, fetchedAt, proposals }) {
  const parsed = useMemo(() => {
    try {
      return { ok: true, value: /** @type {unknown} */ (JSON.parse(card.body)) };
    } catch (err) {
      return { ok: false, value: undefined, error: err instanceof Error ? err.message : String(err) };
    }
  }, [card.body]);
  const lines = useMemo(() => (parsed.ok ? jsonLines(parsed.value) : []), [parsed]);
  /** @type {Marked[]} */
  const marked = [
    ...(card.lastError?.problems ?? []).map((p, i) => ({ ...p, level: /** @type {const} */ ('error'), id: `p-${i}` })),
    ...card.warnings.map((p, i) => ({ ...p, level: /** @type {const} */ ('warning'), id: `w-${i}` })),
  ];
  const paths = useMemo(() => new Set(lines.map((l) => l.path)), [lines]);
  /** @type {Map<number, Marked[]>} line index → problems anchored there */
  const anchors = new Map();
  /** @type {Map<number, 'error' | 'warning'>} */
  const levels = new Map();
  for (const m of marked) {
    const near = nearestPath(paths, m.path);
    const first = lines.findIndex((l) => l.path === near.path);
    if (first >= 0) anchors.set(first, [...(anchors.get(first) ?? []), m]);
    lines.forEach((l, i) => {
      const hit = near.exact ? isWithin(l.path, near.path) : i === first;
      if (hit && levels.get(i) !== 'error') levels.set(i, m.level);
    });
  }
  const c = card.card;
  const skills = Array.isArray(c.skills) ? c.skills : [];
  return html`<div class="card-view">
    <dl class="facts">
      <div class="wide"><dt>Card URL</dt><dd><code>${card.cardUrl}</code></dd></div>
      <div><dt>Name</dt><dd>${String(c.name ?? '—')}</dd></div>
      <div><dt>Version</dt><dd>${String(c.version ?? '—')}</dd></div>
      <div><dt>Skills</dt><dd>${skills.length}</dd></div>
      <div><dt>Size</dt><dd>${bytes(new TextEncoder().encode(card.body).length)}</dd></div>
      <div><dt>Fetched</dt><dd>${ago(fetchedAt, Date.now())}</dd></div>
      <div><dt>Problems</dt><dd>${card.lastError ? html`<${Badge} tone="o-failed" text=${`${card.lastError.problems?.length ?? 1} in the last refresh`} />` : html`<${Badge} tone="o-good" text="none" />`}</dd></div>
      <div><dt>Warnings</dt><dd>${card.warnings.length > 0 ? html`<${Badge} tone="o-stale" text=${String(card.warnings.length)} />` : html`<${Badge} tone="o-good" text="none" />`}</dd></div>
    </dl>
    ${card.lastError ? html`<p class="panel panel-bad">${lastRefresh(card.lastError)}: <code>${card.lastError.code}</code> ${card.lastError.message}. The card below is the last good one the cache kept.</p>` : null}
    ${marked.length > 0 ? html`<${ProblemList} marked=${marked} lines=${lines} />` : null}
    <${SkillList} skills=${skills} />
    ${proposals ? html`<${ProposedBy} proposals=${proposals} headingLevel=${2} />` : null}
    <h2 id="card-body-h">${raw ? 'Body as fetched (raw bytes)' : 'Body as fetched (formatted)'}</h2>
    ${raw || !parsed.ok
      ? html`${!parsed.ok ? html`<p class="error">Not JSON: ${parsed.error}</p>` : null}<pre class="raw" tabindex="0" aria-labelledby="card-body-h">${card.body}</pre>`
      : html`<div class="code" role="region" aria-labelledby="card-body-h" tabindex="0">
          <ol class="json">
            ${lines.map((l, i) => {
              const level = levels.get(i);
              const here = anchors.get(i) ?? [];
              return html`<li key=${i} class=${level ? `hl-${level}` : ''} data-path=${l.path}>
                <span class=${`indent d${Math.min(l.depth, 12)}`}></span><span class="json-text">${l.text}</span>
                ${here.map((m) => html`<span class=${`note note-${m.level}`} id=${`line-${m.id}`} tabindex="-1">${m.level === 'error' ? '✖' : '⚠'} ${m.path}: ${m.message}</span>`)}
              </li>`;
            })}
          </ol>
        </div>`}
  </div>`;
}

/** @param {{ marked: Marked[], lines: import('../lib/json-lines.js').JsonLine[] | undefined }} props */
function ProblemList({ marked, lines }) {
  const go = (/** @type {string} */ id) => {
    const el = document.getElementById(`line-${id}`);
    if (el) {
      el.scrollIntoView({ block: 'center' });
      el.focus();
    }
  };
  return html`<${TableWrap}>
    <table class="data problems">
      <caption>Problems and warnings by JSON path</caption>
      <thead><tr><th scope="col">Level</th><th scope="col">Path</th><th scope="col">Message</th>${lines ? html`<th scope="col"><span class="visually-hidden">Show</span></th>` : null}</tr></thead>
      <tbody>
        ${marked.map(
          (m) => html`<tr key=${m.id}>
            <td><${Badge} tone=${m.level === 'error' ? 'o-failed' : 'o-stale'} text=${m.level} /></td>
            <td><code>${m.path || '(card)'}</code></td>
            <td class="wrap">${m.message}</td>
            ${lines ? html`<td><button type="button" class="btn btn-small" onClick=${() => go(m.id)}>Show<span class="visually-hidden"> ${m.path}</span></button></td>` : null}
          </tr>`,
        )}
      </tbody>
    </table>
  <//>`;
}

/** A card field as text: strings as they are, anything else (hostile or malformed cards) as JSON. @param {unknown} v */
function asText(v) {
  if (v === undefined || v === null) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * The card's skills as the card states them — name, id, description, tags — all rendered as text.
 * @param {{ skills: unknown[] }} props
 */
function SkillList({ skills }) {
  return html`<h2 id="card-skills-h">Skills</h2>
    <${TableWrap}>
      <table class="data skills" aria-labelledby="card-skills-h">
        <caption>${skills.length === 1 ? '1 skill' : `${skills.length} skills`} as the card states them</caption>
        <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Description</th><th scope="col">Tags</th></tr></thead>
        <tbody>
          ${skills.length === 0 ? html`<${EmptyRow} cols=${4} text="The card lists no skill." />` : null}
          ${skills.map((raw, i) => {
            const k = /** @type {Record<string, unknown>} */ (raw !== null && typeof raw === 'object' ? raw : {});
            const tags = Array.isArray(k.tags) ? k.tags : [];
            return html`<tr key=${i} data-skill=${asText(k.id)}>
              <th scope="row">${asText(k.name) || html`<span class="muted">—</span>`}</th>
              <td><code>${asText(k.id) || '—'}</code></td>
              <td class="wrap">${asText(k.description)}</td>
              <td class="wrap">${tags.map((t) => html`<span class="chip">${asText(t)}</span>`)}</td>
            </tr>`;
          })}
        </tbody>
      </table>
    <//>`;
}
