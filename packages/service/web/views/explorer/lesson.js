// @ts-check
/**
 * What the run shows in words: when v2 reached the client (and which attempts still used v1
 * while v2 was on the server, and why), and what the last change of a control did — timing
 * alone, or decisions — in the form's words, with the change it is attributed to (or "several
 * controls changed" and no cause named), and the freshness-versus-requests trade-off when max-age
 * alone changed.
 */
import { html } from '../../lib/vendor.js';

/** @typedef {import('../../lib/types.js').TraceResult} TraceResult */
/** @typedef {import('./compare.js').Comparison} Comparison */
/** @typedef {{ effects: import('./compare.js').SingleChangeEffect[] | undefined, pending: boolean }} Alone */

/**
 * Each changed control's own effect, measured by running it alone (or that it is being measured).
 * @param {{ id: string, alone: Alone, base: string }} props  base: what the changes start from, in words
 */
export function AloneList({ id, alone, base }) {
  if (alone.pending) return html`<p class="muted small" id=${id} data-state="pending">Trying each change alone…</p>`;
  if (!alone.effects) return null;
  return html`<div id=${id} data-state="ready">
    <p class="small">Each change tried alone on ${base}, by the same library:</p>
    <ul class="alone">${alone.effects.map((e) => html`<li data-field=${e.field} data-explains-all=${e.explainsAll ? 'true' : 'false'}>${e.sentence}</li>`)}</ul>
  </div>`;
}

/** @param {{ result: TraceResult, lastChange: Comparison | undefined, alone: Alone }} props */
export function Lesson({ result, lastChange, alone }) {
  const hidden = result.attempts.filter((a) => a.hiddenNewer);
  const first = hidden[0];
  return html`<section class="panel lesson" aria-labelledby="lesson-h">
    <h2 id="lesson-h">What this run shows</h2>
    <p id="freshness-sentence">${result.freshness.sentence}</p>
    ${first
      ? html`<p class="hidden-newer" id="v2-hidden"><strong>v2 is on the server, the cache still serves v1.</strong> Attempt ${first.index}: ${first.hiddenNewer}.${hidden.length > 1 ? ` The same for attempt${hidden.length > 2 ? 's' : ''} ${hidden.slice(1).map((a) => a.index).join(', ')}.` : ''}</p>`
      : null}
    <div id="last-change" aria-live="polite">
      ${lastChange && lastChange.inputs.length > 0
        ? html`<p><strong>Last change: ${lastChange.headline}.</strong> <span id="last-change-controls">${lastChange.inputs.map((c) => c.text ?? c.field).join('; ')}.</span>${
            lastChange.headline === 'Timeline changed, decisions the same' ? ' The attempts start at other times, but every attempt makes the same decision with the same card.' : ''
          }</p>
          ${lastChange.attribution.kind === 'several' ? html`<p class="attribution" id="last-change-cause">${lastChange.attribution.sentence}</p><${AloneList} id="last-change-alone" alone=${alone} base="the run before" />` : null}
          ${lastChange.tradeOff ? html`<p class="trade-off" id="trade-off"><strong>Freshness versus requests:</strong> ${lastChange.tradeOff}</p>` : null}`
        : html`<p class="muted">Change a control to see what it changes: the timeline only, or the decisions.</p>`}
    </div>
  </section>`;
}
