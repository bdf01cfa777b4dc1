// @ts-check
/**
 * The explorer's controls: the preset menu (naming the scenario loaded), the seed's inputs and
 * the extra controls for what the model leaves out.
 */
import { html } from '../../lib/vendor.js';
import { formOf } from './form.js';
import { CONDITION_LABELS, INPUT_LABELS as L } from './labels.js';
import { CUSTOM, PRESETS, presetInputs } from './presets.js';

/** @typedef {import('./form.js').Form} Form */
/** @typedef {import('../../lib/types.js').TraceInputs} TraceInputs */

const CONDITIONS = Object.entries(CONDITION_LABELS);
/** The rollout triggers, in the library's order (TRACE_ROLLOUT_TRIGGERS). */
const TRIGGERS = ['breaking', 'any', 'off'];

/**
 * Below 1,000 px the controls stand above the results, so they fold behind this button (closed
 * at first) and the run comes first; on wide screens the button is hidden and the controls shown.
 * @param {{ open: boolean, setOpen: (open: boolean) => void, presetId: string }} props
 */
export function ControlsToggle({ open, setOpen, presetId }) {
  const preset = PRESETS.find(([id]) => id === presetId)?.[1] ?? 'custom settings';
  return html`<button type="button" class="btn controls-toggle" id="x-controls-toggle" aria-expanded=${open ? 'true' : 'false'} aria-controls="x-controls" onClick=${() => setOpen(!open)}>
    ${open ? 'Hide the controls' : 'Show the controls'} <span class="muted">(${preset})</span>
  </button>`;
}

/**
 * @param {{ form: Form, set: (p: Partial<Form>) => void, setForm: (f: Form) => void, defaults: TraceInputs, presetId: string, fieldError: (k: string) => string | undefined, open: boolean }} props
 */
export function Controls({ form, set, setForm, defaults, presetId, fieldError, open }) {
  /**
   * @param {string} id
   * @param {keyof Form} k
   * @param {string} label
   * @param {{ min?: number, max?: number, step?: string, disabled?: boolean, unit?: string }} [o]
   */
  const number = (id, k, label, o = {}) => {
    const err = fieldError(k);
    return html`<div class=${`field ${err ? 'invalid' : ''}`}>
      <label for=${id}>${label}${o.unit ? html` <span class="unit">(${o.unit})</span>` : null}</label>
      <input id=${id} type="number" inputmode="decimal" min=${o.min} max=${o.max} step=${o.step ?? 'any'} value=${/** @type {string} */ (form[k])} disabled=${o.disabled}
        aria-invalid=${err ? 'true' : 'false'} aria-describedby=${err ? `${id}-err` : undefined}
        onInput=${(/** @type {any} */ ev) => set({ [k]: ev.currentTarget.value })} />
      ${err ? html`<span class="field-error" id=${`${id}-err`}>${err}</span>` : null}
    </div>`;
  };
  /**
   * @param {string} id
   * @param {keyof Form} k
   * @param {string} label
   * @param {string} [hint]
   */
  const check = (id, k, label, hint) => html`<div class="field check">
    <input id=${id} type="checkbox" checked=${/** @type {boolean} */ (form[k])} onChange=${(/** @type {any} */ ev) => set({ [k]: ev.currentTarget.checked })} aria-describedby=${hint ? `${id}-hint` : undefined} />
    <label for=${id}>${label}</label>
    ${hint ? html`<span class="hint" id=${`${id}-hint`}>${hint}</span>` : null}
  </div>`;

  /**
   * A text field (a call script, the steps' shares).
   * @param {string} id
   * @param {keyof Form} k
   * @param {string} label
   * @param {{ disabled?: boolean, hint?: string }} [o]
   */
  const textField = (id, k, label, o = {}) => {
    const err = fieldError(k);
    const described = [o.hint ? `${id}-hint` : '', err ? `${id}-err` : ''].filter(Boolean).join(' ') || undefined;
    return html`<div class=${`field ${err ? 'invalid' : ''}`}>
      <label for=${id}>${label}</label>
      <input id=${id} type="text" spellcheck="false" autocomplete="off" value=${/** @type {string} */ (form[k])} disabled=${o.disabled}
        aria-invalid=${err ? 'true' : 'false'} aria-describedby=${described}
        onInput=${(/** @type {any} */ ev) => set({ [k]: ev.currentTarget.value })} />
      ${o.hint ? html`<span class="hint" id=${`${id}-hint`}>${o.hint}</span>` : null}
      ${err ? html`<span class="field-error" id=${`${id}-err`}>${err}</span>` : null}
    </div>`;
  };
  const noRollout = !form.rollout;

  return html`<form class=${`controls${open ? '' : ' folded'}`} id="x-controls" aria-label="Explorer controls" onSubmit=${(/** @type {Event} */ ev) => ev.preventDefault()}>
    <div class="field">
      <label for="x-preset">Seed scenario</label>
      <select id="x-preset" value=${presetId} onChange=${(/** @type {any} */ ev) => {
        const inputs = presetInputs(ev.currentTarget.value, defaults);
        if (inputs) setForm(formOf(inputs));
      }}>
        ${presetId === CUSTOM ? html`<option value=${CUSTOM}>Custom settings (no preset)</option>` : null}
        ${PRESETS.map(([id, label]) => html`<option value=${id}>${label}</option>`)}
      </select>
    </div>
    <fieldset>
      <legend>Endpoint</legend>
      <div class="field">
        <label for="x-condition">${L.condition}</label>
        <select id="x-condition" value=${form.condition} onChange=${(/** @type {any} */ ev) => set({ condition: ev.currentTarget.value })}>
          ${CONDITIONS.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
        </select>
      </div>
      ${check('x-credentials', 'credentials', L.credentials, 'Simulated: a placeholder header, never a real secret.')}
      ${number('x-rtt', 'rttMs', L.rttMs, { min: 1, max: 60000, unit: 'ms' })}
    </fieldset>
    <fieldset>
      <legend>Card and cache</legend>
      ${number('x-max-age', 'maxAgeSeconds', L.maxAgeSeconds, { min: 0, max: 86400, step: '1', unit: 's' })}
      ${check('x-publish-v2', 'publishV2', L.publishV2AtSeconds)}
      ${number('x-v2-at', 'publishV2AtSeconds', 'v2 published at model time', { min: 0, disabled: !form.publishV2, unit: 's' })}
      ${check('x-card-streaming', 'cardStreaming', L.cardStreaming)}
    </fieldset>
    <fieldset>
      <legend>Client</legend>
      ${check('x-require-streaming', 'requireStreaming', L.requireStreaming)}
      ${number('x-interval', 'intervalSeconds', L.intervalSeconds, { min: 0.1, unit: 's' })}
      ${number('x-attempts', 'attempts', L.attempts, { min: 1, max: 100, step: '1' })}
    </fieldset>
    <fieldset>
      <legend>Beyond the model</legend>
      ${check('x-backoff', 'backoff', L.backoff, 'The library’s 5 s doubling backoff.')}
      ${check('x-stale', 'staleOnError', L.staleOnError, 'Serve the card seen before when a refresh fails.')}
      ${check('x-fail-from', 'failFrom', L.failFromSeconds, 'Healthy before T, the condition above from T on.')}
      ${number('x-fail-at', 'failFromSeconds', 'T', { min: 0, disabled: !form.failFrom, unit: 's' })}
      ${number('x-max-stale', 'maxStaleSeconds', L.maxStaleSeconds, { min: 0, disabled: !form.staleOnError, unit: 's' })}
      ${check('x-jitter', 'jitter', L.jitter)}
      ${number('x-seed', 'seed', L.seed, { min: 0, step: '1', disabled: !form.jitter })}
    </fieldset>
    <fieldset>
      <legend>Calls and health</legend>
      ${check('x-with-calls', 'withCalls', L.calls, 'One call per attempt; the library’s health tracker judges the agent.')}
      ${textField('x-calls', 'calls', 'Calls, one per attempt', { disabled: !form.withCalls, hint: 'ok, an HTTP status (500), network, or - for none; @ms for a latency.' })}
      ${number('x-enter-after', 'enterAfter', L.enterAfter, { min: 1, max: 100, step: '1', disabled: !form.withCalls })}
      ${number('x-call-leave-after', 'callLeaveAfter', L.callLeaveAfter, { min: 1, max: 100, step: '1', disabled: !form.withCalls })}
    </fieldset>
    <fieldset>
      <legend>Rollout of v2</legend>
      ${check('x-v2-breaking', 'v2Breaking', L.v2Breaking, 'order-status becomes order-tracking: a skill removed, so breaking.')}
      ${check('x-rollout', 'rollout', L.rollout, 'Staged by the library’s Rollouts, judged on the calls of each side.')}
      <div class="field">
        <label for="x-rollout-trigger">${L.rolloutTrigger}</label>
        <select id="x-rollout-trigger" value=${form.rolloutTrigger} disabled=${noRollout} onChange=${(/** @type {any} */ ev) => set({ rolloutTrigger: ev.currentTarget.value })}>
          ${TRIGGERS.map((t) => html`<option value=${t}>${t}</option>`)}
        </select>
      </div>
      ${textField('x-candidate-calls', 'rolloutCandidateCalls', L.rolloutCandidateCalls, { disabled: noRollout, hint: 'Repeated: ok 500 fails half the turns.' })}
      ${textField('x-current-calls', 'rolloutCurrentCalls', L.rolloutCurrentCalls, { disabled: noRollout })}
      ${textField('x-rollout-steps', 'rolloutSteps', L.rolloutSteps, { disabled: noRollout })}
      ${number('x-rollout-hold', 'rolloutHoldSeconds', L.rolloutHoldSeconds, { min: 0, disabled: noRollout, unit: 's' })}
      ${number('x-rollout-min-turns', 'rolloutMinTurns', L.rolloutMinTurns, { min: 0, step: '1', disabled: noRollout })}
      ${number('x-rollout-min-samples', 'rolloutMinSamples', L.rolloutMinSamples, { min: 1, step: '1', disabled: noRollout })}
      ${number('x-rollout-max-error', 'rolloutMaxErrorRateIncrease', L.rolloutMaxErrorRateIncrease, { min: 0, max: 1, step: '0.01', disabled: noRollout, unit: 'fraction' })}
      ${number('x-rollout-sessions', 'rolloutSessions', L.rolloutSessions, { min: 1, max: 10000, step: '1', disabled: noRollout })}
    </fieldset>
    <button type="button" class="btn" id="x-defaults" onClick=${() => setForm(formOf(defaults))}>Restore defaults</button>
  </form>`;
}
