// @ts-check
/**
 * "Proposed by": which sources proposed an endpoint, under which name, and for an AI Catalog
 * entry where it is listed (catalog URL and entry path, identifier, version, pinned digest) and
 * what the catalog says of it. The catalog's displayName, description and tags are third-party
 * text: rendered as text, labelled as the catalog's words, never as our reviewed description.
 */
import { html } from '../lib/vendor.js';
import { sourcesHref } from '../lib/routes.js';

/** @typedef {import('../lib/types.js').Proposal} Proposal */

/** Metadata keys shown in the AI Catalog layout (the rest are listed as the source's facts). */
const CATALOG_KEYS = new Set(['catalog', 'entry', 'identifier', 'version', 'displayName', 'description', 'tags', 'pinnedSha256']);

/** A record from an AI Catalog entry (its metadata names the document and the entry). @param {Proposal} p */
export function isCatalogProposal(p) {
  return typeof p.metadata?.catalog === 'string' && typeof p.metadata?.entry === 'string';
}

/**
 * The block: one item per proposal. `headingLevel` 2 or 3 gives it a heading (the card view);
 * without one it is the content of a disclosure whose summary names it (the endpoints table).
 * @param {{ proposals: Proposal[] | undefined, headingLevel?: 2 | 3, id?: string }} props
 */
export function ProposedBy({ proposals, headingLevel, id = 'proposed-by' }) {
  const list = proposals ?? [];
  const headingId = `${id}-h`;
  const heading = headingLevel === 3 ? html`<h3 id=${headingId}>Proposed by</h3>` : headingLevel === 2 ? html`<h2 id=${headingId}>Proposed by</h2>` : null;
  const items = html`${list.length === 0 ? html`<p class="muted small">No source proposes this endpoint now.</p>` : null}
    <ul class="proposals">
      ${list.map((p, i) => html`<${ProposalItem} key=${`${p.source}|${i}`} p=${p} />`)}
    </ul>`;
  return heading ? html`<section class="provenance" aria-labelledby=${headingId}>${heading}${items}</section>` : html`<div class="provenance">${items}</div>`;
}

/** @param {{ p: Proposal }} props */
function ProposalItem({ p }) {
  const m = p.metadata ?? {};
  const catalog = isCatalogProposal(p);
  const facts = Object.entries(m).filter(([k]) => !catalog || !CATALOG_KEYS.has(k));
  return html`<li class="proposal" data-source=${p.source}>
    <p class="proposal-head">
      <a href=${sourcesHref(p.source)} class="proposal-source"><span class="visually-hidden">source </span>${p.source}</a>
      <span class="muted small">record</span> <code class="proposal-name">${p.name}</code>
    </p>
    ${catalog
      ? html`<dl class="kv proposal-entry">
          ${m.identifier !== undefined ? html`<dt>Identifier</dt><dd><code>${m.identifier}</code></dd>` : null}
          ${m.version !== undefined ? html`<dt>Version</dt><dd><code>${m.version}</code></dd>` : null}
          <dt>Catalog</dt><dd><code class="proposal-catalog">${m.catalog}</code></dd>
          <dt>Entry</dt><dd><code class="proposal-path">${m.entry}</code></dd>
          ${m.pinnedSha256 !== undefined ? html`<dt>Pinned digest</dt><dd><code class="proposal-pin">sha256:${m.pinnedSha256}</code> <span class="muted small">(a Trust Manifest pins the card’s bytes)</span></dd>` : null}
        </dl>
        <${CatalogSays} m=${m} />`
      : null}
    ${facts.length > 0
      ? html`<dl class="kv proposal-facts" aria-label=${`What source ${p.source} records`}>
          ${facts.map(([k, v]) => html`<dt>${k}</dt><dd>${v}</dd>`)}
        </dl>`
      : null}
  </li>`;
}

/**
 * The entry's own words, framed as a quotation from the catalog (third-party, unreviewed).
 * @param {{ m: Record<string, string> }} props
 */
function CatalogSays({ m }) {
  const tags = (m.tags ?? '').split(',').map((t) => t.trim()).filter((t) => t !== '');
  const said = m.displayName !== undefined || m.description !== undefined || tags.length > 0;
  return html`<figure class="catalog-says">
    <figcaption>The catalog says <span class="muted small">(third-party text, not reviewed; never used as this agent’s description)</span></figcaption>
    ${said
      ? html`<dl class="kv">
          ${m.displayName !== undefined ? html`<dt>Display name</dt><dd class="says-name">${m.displayName}</dd>` : null}
          ${m.description !== undefined ? html`<dt>Description</dt><dd class="says-description">${m.description}</dd>` : null}
          ${tags.length > 0 ? html`<dt>Tags</dt><dd class="says-tags">${tags.map((t) => html`<span class="chip">${t}</span>`)}</dd>` : null}
        </dl>`
      : html`<p class="muted small">Nothing: the entry has no display name, description or tags.</p>`}
  </figure>`;
}
