// @ts-check
/** The strip's legend: what each colour, mark and band means (colour is never the only cue). */
import { html } from '../../lib/vendor.js';
import { LEGEND, SHAPES, glyphPath } from './lanes.js';

export function Legend() {
  return html`<div class="x-legend" id="trace-legend">
    <h3 class="legend-title">Legend</h3>
    <ul class="legend">
      ${LEGEND.map(
        ([tone, label]) => html`<li data-tone=${tone} data-shape=${SHAPES[tone] ?? 'dot'}>
          <svg class="key-mark" width="14" height="14" viewBox="0 0 14 14" aria-hidden="true" focusable="false"><circle class=${`mark-key ${tone}`} cx="7" cy="7" r="5" />${glyphPath(tone, 7, 7) ? html`<path class="glyph" d=${glyphPath(tone, 7, 7)} />` : null}</svg>${label}
        </li>`,
      )}
    </ul>
    <ul class="legend">
      <li><span class="key-ring" aria-hidden="true"></span>blue ring: the request marker, on the step being inspected — follow it from lane to lane</li>
      <li><span class="key-v2" aria-hidden="true"></span>dashed line: v2 published on the server</li>
      <li><span class="key-band" aria-hidden="true"></span>box: one attempt, ✓ accepted with the card used, ✗ rejected</li>
    </ul>
  </div>`;
}
