// @ts-check
/**
 * The discovery-trace explorer: the seed's five discovery attempts against one endpoint, run by
 * the real CardCache, validator and matcher on the server (`POST /api/trace`). Changing a control
 * recomputes the run at once; playback walks through its events stage by stage (request, cache,
 * validation, selection); the event list and the statistics say the same as text; a captured
 * baseline shows what changed.
 */
import { html, useEffect, useLayoutEffect, useMemo, useRef, useState } from '../lib/vendor.js';
import { ApiError, api } from '../lib/api.js';
import { modelSeconds, num } from '../lib/format.js';
import { compareTraces } from '../lib/trace-compare.js';
import { Badge, Tile, ViewHeader } from './common.js';

/** @typedef {import('../lib/types.js').TraceResult} TraceResult */
/** @typedef {import('../lib/types.js').TraceInputs} TraceInputs */
/** @typedef {import('../lib/types.js').TraceEvent} TraceEvent */
/** @typedef {import('../lib/types.js').TraceStats} TraceStats */
/** @typedef {import('../lib/types.js').TraceCacheState} TraceCacheState */
/** @typedef {import('../lib/types.js').TimelineStage} TimelineStage */

/**
 * The form's state: numbers as the text typed (an empty field is allowed while typing).
 * @typedef {object} Form
 * @property {string} condition
 * @property {boolean} credentials
 * @property {string} maxAgeSeconds
 * @property {boolean} publishV2
 * @property {string} publishV2AtSeconds
 * @property {boolean} requireStreaming
 * @property {boolean} cardStreaming
 * @property {string} intervalSeconds
 * @property {string} rttMs
 * @property {string} attempts
 * @property {boolean} backoff
 * @property {boolean} staleOnError
 * @property {boolean} failFrom
 * @property {string} failFromSeconds
 * @property {string} maxStaleSeconds
 * @property {boolean} jitter
 * @property {string} seed
 */

/** The seed's defaults (GET /api/trace/defaults replaces them when it answers). */
/** @type {TraceInputs} */
const FALLBACK_DEFAULTS = {
  condition: 'healthy',
  credentials: false,
  maxAgeSeconds: 10,
  publishV2AtSeconds: 12,
  requireStreaming: false,
  cardStreaming: true,
  intervalSeconds: 6,
  rttMs: 100,
  attempts: 5,
  backoff: false,
  staleOnError: false,
  failFromSeconds: null,
  maxStaleSeconds: 3600,
  jitter: false,
  seed: 1,
};

const CONDITIONS = [
  ['healthy', 'Healthy'],
  ['not-found', '404: card not found'],
  ['unavailable', '503: service unavailable'],
  ['unauthorized', '401 unless credentials supplied'],
  ['malformed', 'Malformed JSON'],
  ['insecure', 'Non-HTTPS advertised interface'],
];

/** @type {[keyof TraceStats, string][]} */
const STATS = [
  ['networkFetches', 'Network fetches'],
  ['cacheHits', 'Cache hits'],
  ['notModified', '304 Not Modified'],
  ['bytesTransferred', 'Bytes transferred'],
  ['accepted', 'Accepted selections'],
  ['rejected', 'Rejected selections'],
  ['backoffSkips', 'Skipped by backoff'],
  ['staleSelections', 'Accepted stale'],
];

/** @type {TimelineStage[]} */
const STAGES = ['request', 'cache', 'validation', 'selection'];
const STAGE_LABEL = { request: 'Request', cache: 'Cache', validation: 'Validation', selection: 'Selection' };
const SPEEDS = [0.5, 1, 2, 4, 8];

/** The seed's scenarios, as presets for the form (each control stays editable). */
/** @type {[string, string, Partial<TraceInputs>][]} */
const PRESETS = [
  ['healthy', 'Healthy defaults', {}],
  ['not-found', '404: card not found', { condition: 'not-found' }],
  ['unavailable', '503: service unavailable', { condition: 'unavailable' }],
  ['unauthorized', '401 without credentials', { condition: 'unauthorized' }],
  ['unauthorized-credentials', '401 with credentials supplied', { condition: 'unauthorized', credentials: true }],
  ['malformed', 'Malformed JSON', { condition: 'malformed' }],
  ['malformed-30', 'Malformed JSON, max-age 30', { condition: 'malformed', maxAgeSeconds: 30 }],
  ['insecure', 'Non-HTTPS interface', { condition: 'insecure' }],
  ['streaming', 'Client requires streaming, card lacks it', { requireStreaming: true, cardStreaming: false }],
  ['max-age-0', 'Cache max-age 0', { maxAgeSeconds: 0 }],
  ['max-age-30', 'Cache max-age 30', { maxAgeSeconds: 30 }],
  ['no-v2', 'No card v2', { publishV2AtSeconds: null }],
  ['timing', 'Interval 7 s, round trip 300 ms', { intervalSeconds: 7, rttMs: 300 }],
  ['stale', '503 from 11 s with stale-on-error', { condition: 'unavailable', failFromSeconds: 11, staleOnError: true }],
  ['backoff', '404 with backoff', { condition: 'not-found', backoff: true }],
];

/** @param {TraceInputs} i @returns {Form} */
function formOf(i) {
  return {
    condition: i.condition,
    credentials: i.credentials,
    maxAgeSeconds: String(i.maxAgeSeconds),
    publishV2: i.publishV2AtSeconds !== null,
    publishV2AtSeconds: String(i.publishV2AtSeconds ?? 12),
    requireStreaming: i.requireStreaming,
    cardStreaming: i.cardStreaming,
    intervalSeconds: String(i.intervalSeconds),
    rttMs: String(i.rttMs),
    attempts: String(i.attempts),
    backoff: i.backoff,
    staleOnError: i.staleOnError,
    failFrom: i.failFromSeconds !== null,
    failFromSeconds: String(i.failFromSeconds ?? 11),
    maxStaleSeconds: String(i.maxStaleSeconds),
    jitter: i.jitter,
    seed: String(i.seed),
  };
}

/**
 * The inputs to send, or the fields that are not numbers yet.
 * @param {Form} f
 * @returns {{ inputs: TraceInputs, invalid: Record<string, string> }}
 */
function inputsOf(f) {
  /** @type {Record<string, string>} */
  const invalid = {};
  const n = (/** @type {string} */ key, /** @type {string} */ s) => {
    const v = s.trim() === '' ? NaN : Number(s);
    if (!Number.isFinite(v)) invalid[key] = 'must be a number';
    return v;
  };
  const inputs = /** @type {TraceInputs} */ ({
    condition: /** @type {TraceInputs['condition']} */ (f.condition),
    credentials: f.credentials,
    maxAgeSeconds: n('maxAgeSeconds', f.maxAgeSeconds),
    publishV2AtSeconds: f.publishV2 ? n('publishV2AtSeconds', f.publishV2AtSeconds) : null,
    requireStreaming: f.requireStreaming,
    cardStreaming: f.cardStreaming,
    intervalSeconds: n('intervalSeconds', f.intervalSeconds),
    rttMs: n('rttMs', f.rttMs),
    attempts: n('attempts', f.attempts),
    backoff: f.backoff,
    staleOnError: f.staleOnError,
    failFromSeconds: f.failFrom ? n('failFromSeconds', f.failFromSeconds) : null,
    maxStaleSeconds: n('maxStaleSeconds', f.maxStaleSeconds),
    jitter: f.jitter,
    seed: n('seed', f.seed),
  });
  return { inputs, invalid };
}

/**
 * The inputs of a run as one string with sorted keys (tests wait for the run they asked for).
 * @param {TraceInputs} inputs
 */
function inputsKey(inputs) {
  return JSON.stringify(Object.fromEntries(Object.entries(inputs).sort(([a], [b]) => (a < b ? -1 : 1))));
}

/**
 * The colour class of a playback event.
 * @param {TraceEvent} e
 */
function kindClass(e) {
  switch (e.kind) {
    case 'attempt.start':
      return 'o-info';
    case 'request.sent':
    case 'request.received':
      return 'o-request';
    case 'response.received': {
      const s = Number(e.detail?.status);
      return s === 304 ? 'o-revalidated' : s >= 200 && s < 300 ? 'o-changed' : 'o-failed';
    }
    case 'cache.hit':
      return 'o-hit';
    case 'cache.stored':
      return 'o-changed';
    case 'cache.revalidated':
      return 'o-revalidated';
    case 'cache.unchanged':
    case 'validation.skipped':
      return 'o-unchanged';
    case 'cache.not-stored':
    case 'validation.failed':
      return 'o-invalid';
    case 'cache.stale':
    case 'cache.backoff':
    case 'cache.backing-off':
      return 'o-stale';
    case 'cache.failed':
    case 'selection.rejected':
      return 'o-failed';
    case 'validation.passed':
    case 'selection.accepted':
      return 'o-good';
    default:
      return 'o-info';
  }
}

/** @param {unknown} v @returns {string} */
function showValue(v) {
  if (v === undefined) return '—';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  if (typeof v === 'object' && !Array.isArray(v) && v !== null && Object.values(v).every((x) => typeof x !== 'object' || x === null)) {
    return Object.entries(v)
      .map(([k, x]) => `${k}: ${String(x)}`)
      .join('\n');
  }
  return JSON.stringify(v, null, 1);
}

/**
 * @param {TraceEvent[]} events
 * @param {number} t
 */
function cursorAt(events, t) {
  let c = -1;
  for (let i = 0; i < events.length; i++) if (/** @type {TraceEvent} */ (events[i]).atMs <= t) c = i;
  return c;
}

export function ExplorerView() {
  const [defaults, setDefaults] = useState(FALLBACK_DEFAULTS);
  const [form, setForm] = useState(() => formOf(FALLBACK_DEFAULTS));
  const [result, setResult] = useState(/** @type {TraceResult | undefined} */ (undefined));
  const [serverError, setServerError] = useState(/** @type {{ message: string, fields: Record<string, string> } | undefined} */ (undefined));
  const [pending, setPending] = useState(true);
  const [baseline, setBaseline] = useState(/** @type {TraceResult | undefined} */ (undefined));
  const [pb, setPb] = useState({ cursor: -1, t: 0, playing: false, speed: 2 });
  const runId = useRef(0);

  const { inputs, invalid } = useMemo(() => inputsOf(form), [form]);
  const key = JSON.stringify(inputs);
  const hasInvalid = Object.keys(invalid).length > 0;

  useEffect(() => {
    api('/api/trace/defaults').then(
      (d) => {
        setDefaults(d);
        setForm(formOf(d));
      },
      () => undefined,
    );
  }, []);

  // Recompute on every change (debounced), keeping only the latest answer.
  useEffect(() => {
    if (hasInvalid) {
      setPending(false);
      return;
    }
    setPending(true);
    const id = ++runId.current;
    const timer = setTimeout(() => {
      api('/api/trace', { method: 'POST', body: inputs }).then(
        (r) => {
          if (id !== runId.current) return;
          setResult(r);
          setServerError(undefined);
          setPending(false);
          const events = /** @type {TraceResult} */ (r).events;
          setPb((p) => ({ ...p, playing: false, cursor: events.length - 1, t: events.at(-1)?.atMs ?? 0 }));
        },
        (err) => {
          if (id !== runId.current) return;
          /** @type {Record<string, string>} */
          const fields = {};
          if (err instanceof ApiError) for (const p of err.body?.problems ?? []) fields[p.path] = p.message;
          setServerError({ message: err instanceof Error ? err.message : String(err), fields });
          setPending(false);
        },
      );
    }, 150);
    return () => clearTimeout(timer);
  }, [key, hasInvalid]);

  const events = result?.events ?? [];
  const endMs = events.at(-1)?.atMs ?? 0;

  // Playback on model time.
  useEffect(() => {
    if (!pb.playing) return;
    let last = Date.now();
    const id = setInterval(() => {
      const now = Date.now();
      const dt = now - last;
      last = now;
      setPb((p) => {
        const t = Math.min(endMs, p.t + dt * p.speed);
        const cursor = Math.max(p.cursor, cursorAt(events, t));
        return { ...p, t, cursor, playing: t < endMs };
      });
    }, 50);
    return () => clearInterval(id);
  }, [pb.playing, result]);

  /** @param {Partial<Form>} patch */
  const set = (patch) => setForm((f) => ({ ...f, ...patch }));
  const fieldError = (/** @type {string} */ k) => invalid[k] ?? serverError?.fields[k];

  const controls = {
    play: () => setPb((p) => (p.cursor >= events.length - 1 && p.t >= endMs ? { ...p, t: 0, cursor: -1, playing: true } : { ...p, playing: true })),
    pause: () => setPb((p) => ({ ...p, playing: false })),
    next: () =>
      setPb((p) => {
        const c = Math.min(events.length - 1, p.cursor + 1);
        return { ...p, playing: false, cursor: c, t: Math.max(p.t, events[c]?.atMs ?? 0) };
      }),
    prev: () =>
      setPb((p) => {
        const c = Math.max(-1, p.cursor - 1);
        return { ...p, playing: false, cursor: c, t: c < 0 ? 0 : (events[c]?.atMs ?? 0) };
      }),
    restart: () => setPb((p) => ({ ...p, t: 0, cursor: -1 })),
    /** @param {number} t */
    scrub: (t) => setPb((p) => ({ ...p, playing: false, t, cursor: cursorAt(events, t) })),
    /** @param {number} i */
    inspect: (i) => setPb((p) => ({ ...p, playing: false, cursor: i, t: events[i]?.atMs ?? 0 })),
    /** @param {number} speed */
    speed: (speed) => setPb((p) => ({ ...p, speed })),
  };

  const current = pb.cursor >= 0 ? events[pb.cursor] : undefined;
  const comparison = useMemo(() => (baseline && result ? compareTraces(baseline, result) : undefined), [baseline, result]);
  const state = hasInvalid || serverError ? 'error' : pending ? 'pending' : 'ready';

  return html`<section aria-labelledby="view-title" class="explorer-view">
    <${ViewHeader} title="Discovery-trace explorer">Five discovery attempts against one endpoint, run by the real card cache, validator and matcher on a virtual clock. An offline teaching model: one endpoint, a fixed round trip, a modeled 1,200-byte card, simulated credentials (never enter real secrets).<//>
    <div class="explorer">
      <${Controls} form=${form} set=${set} defaults=${defaults} fieldError=${fieldError} setForm=${setForm} />
      <div class="results" id="trace-results" data-state=${state} data-inputs=${result ? inputsKey(result.inputs) : ''} aria-busy=${state === 'pending' ? 'true' : 'false'}>
        ${serverError ? html`<p class="error" role="alert">The run was refused: ${serverError.message}</p>` : null}
        ${hasInvalid ? html`<p class="error" role="alert">Fix the highlighted control${Object.keys(invalid).length > 1 ? 's' : ''} to recompute.</p>` : null}
        ${result
          ? html`
              <${Summary} result=${result} pending=${pending} />
              <${Playback} pb=${pb} endMs=${endMs} events=${events} controls=${controls} />
              <${Diagram} result=${result} pb=${pb} current=${current} onInspect=${controls.inspect} />
              <${Moment} result=${result} current=${current} cursor=${pb.cursor} playing=${pb.playing} />
              <div class="grid-2 tight">
                <${AttemptsTable} result=${result} current=${current} />
                <${StatsTable} stats=${result.stats} baseline=${baseline?.stats} />
              </div>
              <${Baseline} baseline=${baseline} result=${result} comparison=${comparison} capture=${() => setBaseline(result)} clear=${() => setBaseline(undefined)} />
              <${EventList} events=${events} cursor=${pb.cursor} />
            `
          : html`<p class="muted">Running the model…</p>`}
      </div>
    </div>
  </section>`;
}

/**
 * @param {{ form: Form, set: (p: Partial<Form>) => void, setForm: (f: Form) => void, defaults: TraceInputs, fieldError: (k: string) => string | undefined }} props
 */
function Controls({ form, set, setForm, defaults, fieldError }) {
  /**
   * @param {string} id
   * @param {keyof Form} k
   * @param {string} label
   * @param {{ min?: number, max?: number, step?: string, disabled?: boolean, unit?: string, errorKey?: string }} [o]
   */
  const number = (id, k, label, o = {}) => {
    const err = fieldError(o.errorKey ?? k);
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

  return html`<form class="controls" aria-label="Explorer controls" onSubmit=${(/** @type {Event} */ ev) => ev.preventDefault()}>
    <div class="field">
      <label for="x-preset">Seed scenario</label>
      <select id="x-preset" value="" onChange=${(/** @type {any} */ ev) => {
        const p = PRESETS.find(([id]) => id === ev.currentTarget.value);
        if (p) setForm(formOf({ ...defaults, ...p[2] }));
        ev.currentTarget.value = '';
      }}>
        <option value="">Choose a preset…</option>
        ${PRESETS.map(([id, label]) => html`<option value=${id}>${label}</option>`)}
      </select>
    </div>
    <fieldset>
      <legend>Endpoint</legend>
      <div class="field">
        <label for="x-condition">Endpoint / card condition</label>
        <select id="x-condition" value=${form.condition} onChange=${(/** @type {any} */ ev) => set({ condition: ev.currentTarget.value })}>
          ${CONDITIONS.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
        </select>
      </div>
      ${check('x-credentials', 'credentials', 'Supply discovery credentials', 'Simulated: a placeholder header, never a real secret.')}
      ${number('x-rtt', 'rttMs', 'Network round trip', { min: 1, max: 60000, unit: 'ms' })}
    </fieldset>
    <fieldset>
      <legend>Card and cache</legend>
      ${number('x-max-age', 'maxAgeSeconds', 'Cache max-age', { min: 0, max: 86400, step: '1', unit: 's' })}
      ${check('x-publish-v2', 'publishV2', 'Publish card v2')}
      ${number('x-v2-at', 'publishV2AtSeconds', 'v2 published at model time', { min: 0, disabled: !form.publishV2, unit: 's' })}
      ${check('x-card-streaming', 'cardStreaming', 'Card advertises streaming')}
    </fieldset>
    <fieldset>
      <legend>Client</legend>
      ${check('x-require-streaming', 'requireStreaming', 'Client requires streaming')}
      ${number('x-interval', 'intervalSeconds', 'Discovery interval', { min: 0.1, unit: 's' })}
      ${number('x-attempts', 'attempts', 'Number of attempts', { min: 1, max: 100, step: '1' })}
    </fieldset>
    <fieldset>
      <legend>Beyond the model</legend>
      ${check('x-backoff', 'backoff', 'Backoff after failures', 'The library’s 5 s doubling backoff.')}
      ${check('x-stale', 'staleOnError', 'Stale-on-error', 'Serve the card seen before when a refresh fails.')}
      ${check('x-fail-from', 'failFrom', 'Fail from time T', 'Healthy before T, the condition above from T on.')}
      ${number('x-fail-at', 'failFromSeconds', 'T', { min: 0, disabled: !form.failFrom, unit: 's' })}
      ${number('x-max-stale', 'maxStaleSeconds', 'Max stale', { min: 0, disabled: !form.staleOnError, unit: 's' })}
      ${check('x-jitter', 'jitter', 'Jitter')}
      ${number('x-seed', 'seed', 'Random seed', { min: 0, step: '1', disabled: !form.jitter })}
    </fieldset>
    <button type="button" class="btn" id="x-defaults" onClick=${() => setForm(formOf(defaults))}>Restore defaults</button>
  </form>`;
}

/** @param {{ result: TraceResult, pending: boolean }} props */
function Summary({ result, pending }) {
  const s = result.stats;
  return html`<div class="summary">
    <div class="tiles" role="group" aria-label="Run summary">
      <${Tile} label="network fetches" value=${s.networkFetches} />
      <${Tile} label="cache hits" value=${s.cacheHits} />
      <${Tile} label="304 Not Modified" value=${s.notModified} />
      <${Tile} label="bytes transferred" value=${num(s.bytesTransferred)} />
      <${Tile} label="accepted" value=${s.accepted} tone=${s.accepted > 0 ? 't-good' : ''} />
      <${Tile} label="rejected" value=${s.rejected} tone=${s.rejected > 0 ? 't-bad' : ''} />
    </div>
    <p class="summary-line" id="trace-summary" role="status">${pending ? 'Recomputing… ' : ''}${result.summary}.</p>
  </div>`;
}

/**
 * @param {{ pb: { cursor: number, t: number, playing: boolean, speed: number }, endMs: number, events: TraceEvent[], controls: any }} props
 */
function Playback({ pb, endMs, events, controls }) {
  const atEnd = pb.cursor >= events.length - 1;
  return html`<div class="playback" role="group" aria-label="Playback">
    ${pb.playing
      ? html`<button type="button" class="btn btn-primary" id="pb-pause" onClick=${controls.pause}>Pause</button>`
      : html`<button type="button" class="btn btn-primary" id="pb-play" onClick=${controls.play}>Play</button>`}
    <button type="button" class="btn" id="pb-prev" onClick=${controls.prev} disabled=${pb.cursor < 0}>Previous event</button>
    <button type="button" class="btn" id="pb-next" onClick=${controls.next} disabled=${atEnd}>Next event</button>
    <button type="button" class="btn" id="pb-restart" onClick=${controls.restart}>Restart</button>
    <label class="inline">Speed
      <select id="pb-speed" value=${String(pb.speed)} onChange=${(/** @type {any} */ ev) => controls.speed(Number(ev.currentTarget.value))}>
        ${SPEEDS.map((s) => html`<option value=${String(s)}>${s}×</option>`)}
      </select>
    </label>
    <label class="scrub">
      <span class="visually-hidden">Inspect moment (model time)</span>
      <input type="range" id="pb-scrub" min="0" max=${endMs} step="50" value=${pb.t}
        aria-valuetext=${`${modelSeconds(pb.t / 1000)}, event ${pb.cursor + 1} of ${events.length}`}
        onInput=${(/** @type {any} */ ev) => controls.scrub(Number(ev.currentTarget.value))} />
    </label>
    <span class="clock" id="pb-clock">${modelSeconds(Math.round(pb.t) / 1000)} / ${modelSeconds(endMs / 1000)} · event <span id="pb-position">${pb.cursor + 1}</span> of ${events.length}</span>
  </div>`;
}

/**
 * The stages at the inspected moment, then the whole run on model time.
 * @param {{ result: TraceResult, pb: { cursor: number, t: number }, current: TraceEvent | undefined, onInspect: (i: number) => void }} props
 */
function Diagram({ result, pb, current, onInspect }) {
  const events = result.events;
  const attempt = current?.attempt ?? 0;
  const done = events.slice(0, pb.cursor + 1);
  const finished = done.some((e) => e.attempt === attempt && e.stage === 'selection');
  const scrollRef = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [boxWidth, setBoxWidth] = useState(800);
  useLayoutEffect(() => {
    const measure = () => setBoxWidth(scrollRef.current?.clientWidth ?? 800);
    measure();
    window.addEventListener('resize', measure);
    return () => window.removeEventListener('resize', measure);
  }, []);

  const endS = Math.max(1, (events.at(-1)?.atMs ?? 0) / 1000);
  // Fit the run in the box when it is short; scroll horizontally (at least 6 px per second) when not.
  const pxPerS = Math.max(6, Math.min(80, (boxWidth - 90) / endS));
  const LABEL = 92;
  const LANE = 34;
  const TOP = 30;
  const width = 14 + endS * pxPerS + 74;
  const height = TOP + STAGES.length * LANE + 14;
  const x = (/** @type {number} */ ms) => 14 + (ms / 1000) * pxPerS;
  const y = (/** @type {TimelineStage} */ s) => TOP + STAGES.indexOf(s) * LANE + LANE / 2;
  const tickStep = [1, 2, 5, 10, 30, 60, 120, 300, 600].find((s) => endS / s <= 14) ?? 600;
  const ticks = [];
  for (let s = 0; s <= endS + 1e-9; s += tickStep) ticks.push(s);

  // Keep the playhead in view while playing or stepping.
  useEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const px = x(pb.t);
    if (px < el.scrollLeft + 20 || px > el.scrollLeft + el.clientWidth - 20) el.scrollLeft = Math.max(0, px - el.clientWidth / 2);
  }, [pb.t, pxPerS]);

  return html`<div class="diagram">
    <ol class="stages" aria-label=${`Stages of attempt ${attempt || '—'} at this moment`}>
      ${STAGES.map((s) => {
        const last = [...done].reverse().find((e) => e.attempt === attempt && e.stage === s);
        const active = current?.stage === s;
        const text = last ? last.message : attempt === 0 ? 'Not started.' : finished ? 'Not involved in this attempt.' : 'Not reached yet.';
        return html`<li class=${`stage ${last ? kindClass(last) : 'o-idle'} ${active ? 'active' : ''}`} data-stage=${s} aria-current=${active ? 'step' : undefined}>
          <span class="stage-name">${STAGE_LABEL[s]}${active ? html`<span class="marker" aria-hidden="true"></span>` : null}</span>
          <span class="stage-kind">${last ? last.kind : '—'}</span>
          <span class="stage-text">${text}</span>
        </li>`;
      })}
    </ol>
    <div class="lanes-box">
      <svg class="lanes lane-labels" width=${LABEL} height=${height} aria-hidden="true">
        ${STAGES.map((s) => html`<text x="10" y=${y(s) + 4} class="lane-label">${STAGE_LABEL[s]}</text>`)}
      </svg>
      <div class="lanes-scroll" ref=${scrollRef} tabindex="0" role="region" aria-label="Discovery diagram over model time (scrolls horizontally)">
      <svg class="lanes" width=${width} height=${height} viewBox=${`0 0 ${width} ${height}`} role="img" aria-label=${`${events.length} events on four stages over ${modelSeconds(endS)}; the event list below gives the same as text`}>
        ${result.attempts.map(
          (a) => html`<g class=${`band ${a.outcome === 'accepted' ? 'band-ok' : 'band-bad'} ${a.index === attempt ? 'band-current' : ''}`}>
            <rect x=${x(a.at * 1000) - 4} y=${TOP - 4} width=${Math.max(10, (a.endedAt - a.at) * pxPerS + 8)} height=${STAGES.length * LANE + 6} rx="4" />
            <text x=${x(a.at * 1000) - 2} y=${TOP - 8}>#${a.index} ${a.outcome === 'accepted' ? `✓ ${a.cardVersion ?? ''}` : '✗'}</text>
          </g>`,
        )}
        ${STAGES.map((s) => html`<g class="lane"><line x1="0" x2=${width} y1=${y(s)} y2=${y(s)} /></g>`)}
        ${ticks.map((s) => html`<text class="tick-label" x=${x(s * 1000)} y=${height - 1} text-anchor="middle">${s} s</text>`)}
        ${events.map(
          (e, i) => html`<circle class=${`mark ${kindClass(e)} ${i > pb.cursor ? 'future' : ''}`} cx=${x(e.atMs)} cy=${y(e.stage)} r="5" onClick=${() => onInspect(i)}>
            <title>${modelSeconds(e.atMs / 1000)} · attempt ${e.attempt} · ${e.kind}: ${e.message}</title>
          </circle>`,
        )}
        <line class="playhead" x1=${x(pb.t)} x2=${x(pb.t)} y1=${TOP - 6} y2=${TOP + STAGES.length * LANE} />
        ${current ? html`<circle class="request-marker" cx=${x(current.atMs)} cy=${y(current.stage)} r="9" />` : null}
      </svg>
      </div>
    </div>
  </div>`;
}

/**
 * The inspected moment: the event, its detail and the cache entry around it.
 * @param {{ result: TraceResult, current: TraceEvent | undefined, cursor: number, playing: boolean }} props
 */
function Moment({ result, current, cursor, playing }) {
  if (!current) {
    return html`<div class="moment panel" aria-live="polite"><h2>Inspect a moment</h2><p class="muted">Before the first attempt. Press Play or Next event, or move the timeline.</p></div>`;
  }
  const before = result.cacheStates[current.attempt - 2];
  const after = result.cacheStates[current.attempt - 1];
  const attemptDone = result.events.slice(0, cursor + 1).some((e) => e.attempt === current.attempt && e.stage === 'selection');
  const detail = Object.entries(current.detail ?? {}).filter(([k]) => k !== 'entryBefore');
  return html`<div class="moment panel" id="moment">
    <h2>Moment: attempt ${current.attempt} at ${modelSeconds(current.atMs / 1000)}, ${current.stage} stage</h2>
    <p aria-live=${playing ? 'off' : 'polite'}><${Badge} tone=${kindClass(current)} text=${current.kind} /> <span id="moment-message">${current.message}</span></p>
    <div class="grid-2 tight">
      <div>
        ${detail.length > 0
          ? html`<dl class="detail">${detail.map(([k, v]) => html`<div><dt>${k}</dt><dd><pre>${showValue(v)}</pre></dd></div>`)}</dl>`
          : html`<p class="muted">No further detail for this step.</p>`}
      </div>
      <div>
        <table class="data compact">
          <caption>Cache entry around attempt ${current.attempt}</caption>
          <thead><tr><th scope="col">Field</th><th scope="col">Before</th><th scope="col">${attemptDone ? 'After' : 'After (when the attempt ends)'}</th></tr></thead>
          <tbody>
            ${[
              ['card', (/** @type {TraceCacheState | undefined} */ s) => (s?.present ? (s.cardVersion ?? '?') : 'none')],
              ['ETag', (/** @type {TraceCacheState | undefined} */ s) => s?.etag ?? '—'],
              ['fresh until', (/** @type {TraceCacheState | undefined} */ s) => (s?.expiresAt !== undefined ? modelSeconds(s.expiresAt) : '—')],
              ['usable', (/** @type {TraceCacheState | undefined} */ s) => (s ? (s.usable ? 'yes' : 'no') : '—')],
              ['stale', (/** @type {TraceCacheState | undefined} */ s) => (s ? (s.stale ? 'yes' : 'no') : '—')],
              ['failures', (/** @type {TraceCacheState | undefined} */ s) => String(s?.failures ?? 0)],
              ['last outcome', (/** @type {TraceCacheState | undefined} */ s) => s?.lastOutcome ?? '—'],
            ].map(
              ([label, f]) => html`<tr><th scope="row">${/** @type {string} */ (label)}</th><td>${/** @type {Function} */ (f)(before)}</td><td>${/** @type {Function} */ (f)(after)}</td></tr>`,
            )}
          </tbody>
        </table>
      </div>
    </div>
  </div>`;
}

/** @param {{ result: TraceResult, current: TraceEvent | undefined }} props */
function AttemptsTable({ result, current }) {
  return html`<div class="table-wrap">
    <table class="data attempts" id="trace-attempts">
      <caption>Attempts</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Start</th><th scope="col">Action</th><th scope="col">Status</th><th scope="col">Card</th><th scope="col">Outcome</th></tr></thead>
      <tbody>
        ${result.attempts.map(
          (a) => html`<tr key=${a.index} data-attempt=${a.index} class=${current?.attempt === a.index ? 'row-selected' : ''}>
            <th scope="row">${a.index}</th>
            <td class="num">${modelSeconds(a.at)}</td>
            <td>${a.action}${a.conditional ? html` <span class="muted small">conditional</span>` : null}</td>
            <td class="num">${a.status ?? '—'}</td>
            <td data-card>${a.cardVersion ?? '—'}${a.stale ? ' (stale)' : ''}</td>
            <td>
              <${Badge} text=${a.outcome} />
              ${a.outcome === 'rejected' ? html` <span class="reject-stage">at ${a.stage}</span><div class="reason">${a.reason}</div>` : null}
              ${a.note ? html`<div class="reason">${a.note}</div>` : null}
            </td>
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** @param {{ stats: TraceStats, baseline: TraceStats | undefined }} props */
function StatsTable({ stats, baseline }) {
  return html`<div class="table-wrap">
    <table class="data stats" id="trace-stats">
      <caption>Statistics</caption>
      <thead><tr><th scope="col">Statistic</th><th scope="col">Value</th>${baseline ? html`<th scope="col">Baseline</th>` : null}</tr></thead>
      <tbody>
        ${STATS.map(
          ([k, label]) => html`<tr>
            <th scope="row">${label}</th>
            <td class="num" data-stat=${k}>${num(stats[k])}</td>
            ${baseline ? html`<td class=${`num ${baseline[k] !== stats[k] ? 'changed' : 'muted'}`}>${num(baseline[k])}</td>` : null}
          </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/**
 * @param {{ baseline: TraceResult | undefined, result: TraceResult, comparison: import('../lib/trace-compare.js').Comparison | undefined, capture: () => void, clear: () => void }} props
 */
function Baseline({ baseline, comparison, capture, clear }) {
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
              <p><strong>${comparison.sameDecisions ? 'Same decisions as the baseline' : 'Decisions changed'}</strong>${comparison.inputs.length > 0 ? `: ${comparison.inputs.length} control(s) differ` : ''}.</p>
              ${comparison.stats.length > 0
                ? html`<table class="data compact">
                    <caption>Statistics that changed</caption>
                    <thead><tr><th scope="col">Statistic</th><th scope="col">Baseline</th><th scope="col">Current</th><th scope="col">Change</th></tr></thead>
                    <tbody>${comparison.stats.map(
                      (s) => html`<tr data-stat-change=${s.field}><th scope="row">${STATS.find(([k]) => k === s.field)?.[1] ?? s.field}</th><td class="num">${num(s.baseline)}</td><td class="num">${num(s.current)}</td><td class="num">${s.delta > 0 ? '+' : '−'}${num(Math.abs(s.delta))}</td></tr>`,
                    )}</tbody>
                  </table>`
                : null}
              <ul class="changes">${comparison.lines.map((l) => html`<li>${l}</li>`)}</ul>
            `
        : null}
    </div>
  </section>`;
}

/** @param {{ events: TraceEvent[], cursor: number }} props */
function EventList({ events, cursor }) {
  const boxRef = useRef(/** @type {HTMLDivElement | null} */ (null));
  useEffect(() => {
    const box = boxRef.current;
    const row = box?.querySelector('tr.current');
    if (!box || !(row instanceof HTMLElement)) return;
    const top = row.offsetTop - box.clientHeight / 2;
    box.scrollTop = Math.max(0, top);
  }, [cursor]);
  return html`<section aria-labelledby="events-h">
    <h2 id="events-h">Event list</h2>
    <div class="table-wrap scroll-y" ref=${boxRef} tabindex="0" role="region" aria-labelledby="events-h">
      <table class="data trace-events" id="trace-events">
        <caption>Every step of the run in order; the inspected step is marked</caption>
        <thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Attempt</th><th scope="col">Stage</th><th scope="col">Step</th><th scope="col">What happened</th></tr></thead>
        <tbody>
          ${events.map(
            (e, i) => html`<tr key=${e.seq} class=${i === cursor ? 'current' : i > cursor ? 'future' : ''} aria-current=${i === cursor ? 'step' : undefined} data-seq=${e.seq}>
              <td class="num">${e.seq}</td>
              <td class="num">${modelSeconds(e.atMs / 1000)}</td>
              <td class="num">${e.attempt}</td>
              <td>${e.stage}</td>
              <td><${Badge} tone=${kindClass(e)} text=${e.kind} /></td>
              <td class="wrap">${e.message}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    </div>
  </section>`;
}
