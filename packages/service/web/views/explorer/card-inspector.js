// @ts-check
/**
 * The modelled card itself: the JSON the endpoint serves for v1 and v2 in this run (or the bytes
 * it serves when they are not JSON), and which attempts used each.
 */
import { html, useState } from '../../lib/vendor.js';

/** @typedef {import('../../lib/types.js').TraceResult} TraceResult */

/** @param {string} text */
function pretty(text) {
  try {
    return { json: true, text: JSON.stringify(JSON.parse(text), null, 2) };
  } catch {
    return { json: false, text };
  }
}

/** @param {{ result: TraceResult }} props */
export function CardInspector({ result }) {
  const [version, setVersion] = useState(/** @type {'v1' | 'v2'} */ ('v1'));
  const body = pretty(result.model.cards[version]);
  const used = result.attempts.filter((a) => a.cardVersion === version).map((a) => a.index);
  const condition = result.inputs.condition;
  const note =
    condition === 'malformed'
      ? 'Not JSON: the malformed condition serves these 1,200 bytes (the card with its closing brace replaced), so parsing fails.'
      : condition === 'insecure'
        ? 'Well-formed, but its interface URL is http://, which the client’s HTTPS policy refuses.'
        : condition === 'healthy' || (condition === 'unauthorized' && result.inputs.credentials)
          ? `What the endpoint serves as ${version} (${result.model.cardVersions[version]}).`
          : 'In this run the endpoint answers with an error status; this is the card it serves when it answers.';
  return html`<section class="panel card-inspector" aria-labelledby="card-h">
    <h2 id="card-h">Inspect the modelled card</h2>
    <div class="row" role="group" aria-label="Card version">
      ${/** @type {('v1' | 'v2')[]} */ (['v1', 'v2']).map(
        (v) => html`<button type="button" class="btn btn-small" id=${`card-${v}`} aria-pressed=${v === version ? 'true' : 'false'} onClick=${() => setVersion(v)}>Card ${v}</button>`,
      )}
      <span class="small ink-2" id="card-used">${used.length > 0 ? `Used by attempt${used.length > 1 ? 's' : ''} ${used.join(', ')}.` : `No attempt used ${version}.`}</span>
    </div>
    <p class="small" id="card-note">${note} ${result.model.cardBytes.toLocaleString('en-US')} bytes as served; the model checks it with the library’s own checkCard.</p>
    <pre class="raw card-json" id="card-json" tabindex="0" role="region" aria-label=${`Card ${version} as served`} data-json=${body.json ? 'true' : 'false'}>${body.text}</pre>
  </section>`;
}
