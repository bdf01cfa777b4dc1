// @ts-check
/**
 * "Try this experiment": the seed's own experiments as guided steps. Each step loads a preset
 * (the controls stay editable), may capture a baseline or start playback, and says what to look
 * for.
 */
import { html, useState } from '../../lib/vendor.js';

/**
 * @typedef {object} GuideStep
 * @property {string} label
 * @property {string} preset  a preset id (presets.js)
 * @property {string} look    what to look for
 * @property {boolean} [play]     start playback from the beginning once the run is in
 * @property {boolean} [capture]  capture the run as the baseline once it is in
 *
 * @typedef {{ id: string, title: string, intro: string, steps: GuideStep[] }} Experiment
 */

/** @type {Experiment[]} */
export const EXPERIMENTS = [
  {
    id: 'play',
    title: 'Play the healthy sequence',
    intro: 'Five attempts, six model seconds apart, max-age 10 s, v2 published at 12 s.',
    steps: [
      {
        label: 'Play the healthy sequence',
        preset: 'healthy',
        play: true,
        look: 'Follow the blue request marker (the blue ring) from lane to lane: cache lookup → request → validation → cache store → selection. Attempt 3 goes to the network because the cached card expired at 10.1 s; attempt 5 sends If-None-Match: "card-v2" and gets 304 Not Modified.',
      },
    ],
  },
  {
    id: 'reject',
    title: 'Find the stage that rejects each case',
    intro: 'Inject a 404, malformed JSON and an insecure interface; use Next event or scrub the timeline to inspect the branch.',
    steps: [
      { label: 'Inject a 404', preset: 'not-found', look: 'Every attempt is rejected at Request: HTTP 404 brings no card, so validation has nothing to check and the cache store keeps nothing.' },
      { label: 'Inject malformed JSON', preset: 'malformed', look: 'Rejected at Validation (parse). The Cache store lane says nothing is stored: 5 × 1,200 = 6,000 bytes downloaded for nothing.' },
      { label: 'Inject an insecure interface', preset: 'insecure', look: 'Rejected at Validation (policy): the card parses, but its http:// interface fails the client’s HTTPS policy, so it is not stored.' },
    ],
  },
  {
    id: 'never-cached',
    title: 'Invalid cards are never cached',
    intro: 'Raise max-age on a malformed card, then compare with a valid card that does not fit.',
    steps: [
      { label: 'Malformed JSON with max-age 30', preset: 'malformed-30', look: 'Nothing changes against max-age 10: five requests, five rejections at Validation — a card that fails validation is never stored, so max-age has nothing to keep.' },
      { label: 'A valid card without streaming', preset: 'streaming', look: 'The card is fetched and cached (3 requests, 2 cache hits), yet every attempt is rejected at Selection: the client requires streaming.' },
    ],
  },
  {
    id: 'credentials',
    title: 'Unavailable cards stop discovery',
    intro: 'The model has no retries within an attempt, so each failure is one rejected discovery.',
    steps: [
      { label: '401 without credentials', preset: 'unauthorized', look: 'Five requests, five rejections at Request (HTTP 401): no agent may be invoked.' },
      { label: 'Supply discovery credentials', preset: 'unauthorized-credentials', look: 'The run matches the healthy one: the placeholder credential is sent with every request (simulated; never a real secret).' },
    ],
  },
  {
    id: 'max-age',
    title: 'Freshness versus requests',
    intro: 'Change Cache max-age and read “What this run shows”.',
    steps: [
      { label: 'Max-age 0', preset: 'max-age-0', look: 'Every attempt goes to the network; three answers are 304 Not Modified (If-None-Match matched).' },
      { label: 'Max-age 30', preset: 'max-age-30', look: 'One request serves all five attempts, and v1 is used even after the v2 marker at 12 s: fewer requests, older card. The page says so in words.' },
      { label: 'No v2', preset: 'no-v2', look: 'v1 throughout; attempts 3 and 5 are 304s.' },
    ],
  },
  {
    id: 'timing',
    title: 'Timing is not a decision',
    intro: 'Capture a baseline and record what changed.',
    steps: [
      { label: 'Capture the healthy run as the baseline', preset: 'healthy', capture: true, look: 'The Baseline panel holds the healthy run (3 fetches, 2 hits).' },
      { label: 'Interval 7 s, round trip 300 ms', preset: 'timing', look: 'The Baseline panel says “Timeline changed, decisions the same”: attempts start at 0, 7, 14, 21, 28 s, with the same decisions and cards.' },
    ],
  },
  {
    id: 'stale',
    title: 'Stale-on-error: an outage after a good card',
    intro: 'The endpoint is healthy until 11 s, then answers 503. Capture that run, turn stale-on-error on, then bound how stale a card may be.',
    steps: [
      {
        label: 'Capture the outage without stale-on-error',
        preset: 'stale-off',
        capture: true,
        look: 'Attempts 1 and 2 use v1. From 11 s the endpoint answers 503: the cached v1 expired at 10.1 s, and with stale-on-error off it is unusable as soon as its refresh fails, so attempts 3 to 5 are rejected at Request (2 accepted, 3 rejected). The Baseline panel holds this run.',
      },
      {
        label: 'Turn stale-on-error on',
        preset: 'stale',
        look: 'The same three 503s, yet every attempt is accepted: the cache serves the v1 it saw before, marked “(stale)” (3 served stale). The Baseline panel names the one change that did it — Stale-on-error off → on — and v2, published at 12 s, is never seen: the endpoint fails before it can deliver it.',
      },
      {
        label: 'Max stale 5 s',
        preset: 'stale-5',
        look: 'v1 expired at 10.1 s, so it may be served stale until 15.1 s: attempt 3 (12 s) is served stale, attempts 4 and 5 (18 s, 24 s) are past the bound and rejected. Stale-on-error bridges a short outage, not a long one. “Last change” names the one change (Max stale 3600 s → 5 s); against the baseline two controls now differ: the page says so rather than guess, and tries each alone (Max stale alone changes nothing without stale-on-error).',
      },
    ],
  },
];

/**
 * @param {{ active: { experiment: string, step: number } | undefined, onStep: (e: Experiment, i: number) => void }} props
 */
export function Guide({ active, onStep }) {
  const [chosen, setChosen] = useState(EXPERIMENTS[0]?.id ?? '');
  const shown = EXPERIMENTS.find((e) => e.id === (active?.experiment ?? chosen)) ?? /** @type {Experiment} */ (EXPERIMENTS[0]);
  const step = active && active.experiment === shown.id ? shown.steps[active.step] : undefined;
  return html`<section class="panel guide" aria-labelledby="guide-h">
    <h2 id="guide-h">Try this experiment</h2>
    <div class="guide-row">
      <label for="guide-experiment">Experiment</label>
      <select id="guide-experiment" value=${shown.id} onChange=${(/** @type {any} */ ev) => {
        const e = EXPERIMENTS.find((x) => x.id === ev.currentTarget.value);
        if (!e) return;
        setChosen(e.id);
        onStep(e, 0);
      }}>
        ${EXPERIMENTS.map((e, i) => html`<option value=${e.id}>${i + 1}. ${e.title}</option>`)}
      </select>
      <span class="steps" role="group" aria-label="Steps">
        ${shown.steps.map(
          (s, i) => html`<button type="button" class="btn btn-small" data-step=${`${shown.id}-${i}`} aria-pressed=${step === s ? 'true' : 'false'} onClick=${() => onStep(shown, i)}>${shown.steps.length > 1 ? `${i + 1}. ` : ''}${s.label}</button>`,
        )}
      </span>
    </div>
    <p class="small ink-2 guide-intro">${shown.intro} Each step sets the controls; change any input afterwards and the sequence recalculates at once.</p>
    <p class="look" id="guide-look" aria-live="polite">${step ? html`<strong>Look for:</strong> ${step.look}` : 'Choose a step to load its scenario and see what to look for.'}</p>
  </section>`;
}
