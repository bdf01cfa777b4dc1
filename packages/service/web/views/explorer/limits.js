// @ts-check
/** What the model is not: the limits as the run states them, and the protocol's own reference. */
import { html } from '../../lib/vendor.js';

/** The A2A specification: discovery, Agent Cards and their caching. */
export const A2A_SPEC = 'https://a2a-protocol.org/latest/specification/';

/** @param {{ limits: string[] }} props */
export function Limits({ limits }) {
  return html`<section class="panel limits" aria-labelledby="limits-h">
    <h2 id="limits-h">Limits of the model</h2>
    <ul id="trace-limits">${limits.map((l) => html`<li>${l}</li>`)}</ul>
    <p>The protocol’s reference for discovery, Agent Cards and caching: <a href=${A2A_SPEC} id="a2a-spec-link" rel="noopener noreferrer">A2A protocol specification</a>.</p>
  </section>`;
}
