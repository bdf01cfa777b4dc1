// @ts-check
/** The strip's legend: what each colour, mark and band means (colour is never the only cue). */
import { html } from '../../lib/vendor.js';
import { LEGEND } from './lanes.js';

export function Legend() {
  return html`<div class="x-legend" id="trace-legend">
    <h3 class="legend-title">Legend</h3>
    <ul class="legend">
      ${LEGEND.map(([tone, label]) => html`<li data-tone=${tone}><span class=${`swatch ${tone}`} aria-hidden="true"></span>${label}</li>`)}
    </ul>
    <ul class="legend">
      <li><span class="key-ring" aria-hidden="true"></span>blue ring: the request marker, on the step being inspected — follow it from lane to lane</li>
      <li><span class="key-v2" aria-hidden="true"></span>dashed line: v2 published on the server</li>
      <li><span class="key-band" aria-hidden="true"></span>box: one attempt, ✓ accepted with the card used, ✗ rejected</li>
    </ul>
  </div>`;
}
