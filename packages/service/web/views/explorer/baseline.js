// @ts-check
/** The baseline: capture a run, change controls, and see what changed — timeline or decisions. */
import { html } from '../../lib/vendor.js';
import { num } from '../../lib/format.js';
import { AloneList } from './lesson.js';
import { STATS } from './tables.js';
import { TableWrap } from '../common.js';

/** @typedef {import('../../lib/types.js').TraceResult} TraceResult */

/**
 * @param {{ baseline: TraceResult | undefined, comparison: import('./compare.js').Comparison | undefined, alone: import('./lesson.js').Alone, capture: () => void, clear: () => void }} props
 */
export function Baseline({ baseline, comparison, alone, capture, clear }) {
  return html`<section class="baseline panel" aria-labelledby="baseline-h">
    <h2 id="baseline-h">Baseline</h2>
    <div class="row">
      <button type="button" class="btn" id="baseline-capture" onClick=${capture}>${baseline ? 'Capture again' : 'Capture baseline'}</button>
      ${baseline ? html`<button type="button" class="btn" id="baseline-clear" onClick=${clear}>Clear baseline</button>` : null}
      <span class="muted">${baseline ? `Baseline: ${baseline.summary}.` : 'Capture the current run, change a control, and see what changed.'}</span>
    </div>
    <div id="baseline-changes" aria-live="polite">
      ${comparison
        ? comparison.lines.length === 0
          ? html`<p>Nothing changed against the baseline.</p>`
          : html`
              <p><strong id="baseline-headline">${comparison.headline}</strong>${comparison.inputs.length > 0 ? `: ${comparison.inputs.length} control(s) differ` : ''}.</p>
              <p class="attribution" id="baseline-cause">${comparison.attribution.sentence}</p>
              ${comparison.attribution.kind === 'several' ? html`<${AloneList} id="baseline-alone" alone=${alone} base="the baseline" />` : null}
              ${comparison.tradeOff ? html`<p class="trade-off">${comparison.tradeOff}</p>` : null}
              ${comparison.stats.length > 0
                ? html`<${TableWrap} label="Statistics that changed"><table class="data compact">
                    <caption>Statistics that changed</caption>
                    <thead><tr><th scope="col">Statistic</th><th scope="col">Baseline</th><th scope="col">Current</th><th scope="col">Change</th></tr></thead>
                    <tbody>${comparison.stats.map(
                      (s) => html`<tr data-stat-change=${s.field}><th scope="row">${STATS.find(([k]) => k === s.field)?.[1] ?? s.field}</th><td class="num">${num(s.baseline)}</td><td class="num">${num(s.current)}</td><td class="num">${s.delta > 0 ? '+' : '−'}${num(Math.abs(s.delta))}</td></tr>`,
                    )}</tbody>
                  </table><//>`
                : null}
              <ul class="changes">${comparison.lines.map((l) => html`<li>${l}</li>`)}</ul>
            `
        : null}
    </div>
  </section>`;
}
