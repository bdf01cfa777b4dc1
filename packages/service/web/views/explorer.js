// @ts-check
/**
 * The discovery-trace explorer: the seed's five discovery attempts against one endpoint, run by
 * the real CardCache, validator and matcher on the server (`POST /api/trace`). This module wires
 * the parts together (web/views/explorer/*): controls and presets, the guided experiments, what
 * the run shows in words, playback, the stage cards in the order the code runs, the timeline
 * strip and its legend, the inspected moment, the tables, the agent's health from its calls and
 * the rollout of v2 (when asked for), the baseline, the modelled card, the event list and the
 * model's limits.
 */
import { html, useEffect, useMemo, useState } from '../lib/vendor.js';
import { api } from '../lib/api.js';
import { compareTraces } from './explorer/compare.js';
import { ViewHeader } from './common.js';
import { Baseline } from './explorer/baseline.js';
import { HealthPanel, RolloutPanel } from './explorer/calls-panels.js';
import { CardInspector } from './explorer/card-inspector.js';
import { Controls, ControlsToggle } from './explorer/controls.js';
import { EventList } from './explorer/event-list.js';
import { FALLBACK_DEFAULTS, formOf, inputsKey, inputsOf } from './explorer/form.js';
import { Guide } from './explorer/guide.js';
import { Legend } from './explorer/legend.js';
import { Lesson } from './explorer/lesson.js';
import { Limits } from './explorer/limits.js';
import { Moment } from './explorer/moment.js';
import { Playback, usePlayback } from './explorer/playback.js';
import { presetIdOf, presetInputs } from './explorer/presets.js';
import { StageCards } from './explorer/stage-cards.js';
import { Strip } from './explorer/strip.js';
import { AttemptsTable, StatsTable, Summary } from './explorer/tables.js';
import { useTraceRun } from './explorer/use-trace-run.js';
import { useAlone } from './explorer/use-alone.js';

/** @typedef {import('../lib/types.js').TraceResult} TraceResult */
/** @typedef {import('./explorer/form.js').Form} Form */
/** @typedef {import('./explorer/guide.js').Experiment} Experiment */

/** @type {TraceResult['events']} */
const NO_EVENTS = [];

export function ExplorerView() {
  const [defaults, setDefaults] = useState(FALLBACK_DEFAULTS);
  const [form, setForm] = useState(() => formOf(FALLBACK_DEFAULTS));
  const [baseline, setBaseline] = useState(/** @type {TraceResult | undefined} */ (undefined));
  const [guide, setGuide] = useState(/** @type {{ experiment: string, step: number } | undefined} */ (undefined));
  // What a guide step asked for once its run is in: play it, or capture it as the baseline.
  const [onRun, setOnRun] = useState(/** @type {{ key: string, play: boolean, capture: boolean } | undefined} */ (undefined));
  // At narrow widths the controls fold (see ControlsToggle); an invalid control opens them.
  const [controlsOpen, setControlsOpen] = useState(false);

  const { inputs, invalid } = useMemo(() => inputsOf(form), [form]);
  const hasInvalid = Object.keys(invalid).length > 0;
  const { result, previous, error, pending, retry } = useTraceRun(inputs, hasInvalid);
  const events = result?.events ?? NO_EVENTS;
  const { pb, endMs, controls } = usePlayback(events);

  useEffect(() => {
    api('/api/trace/defaults').then(
      (d) => {
        setDefaults(d);
        setForm(formOf(d));
      },
      () => undefined,
    );
  }, []);

  // Every new run opens at step 0, ready to play; a guide step may start it or capture it.
  useEffect(() => {
    if (!result) return;
    const wanted = onRun !== undefined && onRun.key === inputsKey(result.inputs) ? onRun : undefined;
    controls.reset(wanted?.play ?? false);
    if (wanted?.capture) setBaseline(result);
    if (wanted) setOnRun(undefined);
  }, [result]);

  /** @param {Partial<Form>} patch */
  const set = (patch) => setForm((f) => ({ ...f, ...patch }));
  const fieldError = (/** @type {string} */ k) => invalid[k] ?? error?.fields[k];
  const onStep = (/** @type {Experiment} */ e, /** @type {number} */ i) => {
    const step = e.steps[i];
    const next = step && presetInputs(step.preset, defaults);
    if (!step || !next) return;
    setGuide({ experiment: e.id, step: i });
    setForm(formOf(next));
    const key = inputsKey(next);
    if (result && inputsKey(result.inputs) === key) {
      // Already this run: act at once.
      controls.reset(step.play ?? false);
      if (step.capture) setBaseline(result);
    } else {
      setOnRun({ key, play: step.play ?? false, capture: step.capture ?? false });
    }
  };

  const current = pb.cursor >= 0 ? events[pb.cursor] : undefined;
  const comparison = useMemo(() => (baseline && result ? compareTraces(baseline, result) : undefined), [baseline, result]);
  const lastChange = useMemo(() => (previous && result ? compareTraces(previous, result) : undefined), [previous, result]);
  // Several controls changed: each one's own effect, measured by running it alone.
  const lastAlone = useAlone(lastChange?.attribution.kind === 'several' ? previous : undefined, lastChange?.attribution.kind === 'several' ? result : undefined);
  const baselineAlone = useAlone(comparison?.attribution.kind === 'several' ? baseline : undefined, comparison?.attribution.kind === 'several' ? result : undefined);
  const state = hasInvalid || error ? 'error' : pending ? 'pending' : 'ready';

  return html`<section aria-labelledby="view-title" class="explorer-view">
    <${ViewHeader} title="Discovery-trace explorer">Five discovery attempts against one endpoint, run by the real card cache, validator and matcher on a virtual clock. Follow the request, inspect the card, and see exactly why discovery succeeds or stops. An offline teaching model: simulated credentials only, never enter real secrets.<//>
    <${ControlsToggle} open=${controlsOpen || hasInvalid} setOpen=${setControlsOpen} presetId=${presetIdOf(inputs, defaults)} />
    <div class="explorer">
      <${Controls} form=${form} set=${set} setForm=${setForm} defaults=${defaults} presetId=${presetIdOf(inputs, defaults)} fieldError=${fieldError} open=${controlsOpen || hasInvalid} />
      <div class="results" id="trace-results" data-state=${state} data-inputs=${result ? inputsKey(result.inputs) : ''} aria-busy=${state === 'pending' ? 'true' : 'false'}>
        ${error
          ? html`<div class="error-box" role="alert" id="trace-error">
              <p><strong>${error.unreachable ? 'The model could not run' : 'The run was refused'}:</strong> ${error.message}.${result ? ' The last run is shown below.' : ''}</p>
              ${error.unreachable ? html`<button type="button" class="btn btn-small" id="trace-retry" onClick=${retry}>Try again</button>` : null}
            </div>`
          : null}
        ${hasInvalid ? html`<p class="error" role="alert">Fix the highlighted control${Object.keys(invalid).length > 1 ? 's' : ''} to recompute.</p>` : null}
        <${Guide} active=${guide} onStep=${onStep} />
        ${result
          ? html`
              <${Summary} result=${result} pending=${pending} />
              <${Lesson} result=${result} lastChange=${lastChange} alone=${lastAlone} />
              <${Playback} pb=${pb} endMs=${endMs} events=${events} controls=${controls} />
              <section class="diagram" aria-labelledby="diagram-h">
                <h2 id="diagram-h">Discovery diagram</h2>
                <${StageCards} events=${events} cursor=${pb.cursor} current=${current} />
                <${Strip} result=${result} cursor=${pb.cursor} t=${pb.t} current=${current} onInspect=${controls.inspect} />
                <${Legend} />
              </section>
              <${Moment} result=${result} current=${current} cursor=${pb.cursor} playing=${pb.playing} />
              <${AttemptsTable} result=${result} current=${current} />
              ${result.health ? html`<${HealthPanel} health=${result.health} />` : null}
              ${result.rollout ? html`<${RolloutPanel} rollout=${result.rollout} />` : null}
              <div class="trace-pair">
                <${StatsTable} stats=${result.stats} baseline=${baseline?.stats} />
                <${Baseline} baseline=${baseline} comparison=${comparison} alone=${baselineAlone} capture=${() => setBaseline(result)} clear=${() => setBaseline(undefined)} />
              </div>
              <${CardInspector} result=${result} />
              <${EventList} events=${events} cursor=${pb.cursor} />
              <${Limits} limits=${result.model.limits} />
            `
          : error || hasInvalid
            ? null
            : html`<p class="muted" id="trace-running">Running the model…</p>`}
      </div>
    </div>
  </section>`;
}
