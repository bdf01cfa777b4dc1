// @ts-check
/**
 * The seed's scenarios as presets of the form, and which one (if any) the current inputs are,
 * so the preset menu always names the scenario loaded.
 */
import { inputsKey } from './form.js';

/** @typedef {import('../../lib/types.js').TraceInputs} TraceInputs */

/** @type {[string, string, Partial<TraceInputs>][]} */
export const PRESETS = [
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
  ['stale-off', '503 from 11 s, stale-on-error off', { condition: 'unavailable', failFromSeconds: 11 }],
  ['stale', '503 from 11 s with stale-on-error', { condition: 'unavailable', failFromSeconds: 11, staleOnError: true }],
  ['stale-5', '503 from 11 s, stale-on-error, max stale 5 s', { condition: 'unavailable', failFromSeconds: 11, staleOnError: true, maxStaleSeconds: 5 }],
  ['backoff', '404 with backoff', { condition: 'not-found', backoff: true }],
  ['calls-fail', 'Calls fail 5 times in a row, then recover', { attempts: 9, calls: 'ok ok 500 500 500 500 500 ok ok' }],
  ['rollout-fails', 'Breaking v2 whose calls fail 50 %: rolled back', { v2Breaking: true, rollout: true, rolloutCandidateCalls: 'ok 500' }],
  ['rollout-healthy', 'Breaking v2 with good calls: promoted by steps', { v2Breaking: true, rollout: true }],
];

/** The value of the menu when the controls match no preset. */
export const CUSTOM = 'custom';

/**
 * The inputs of a preset.
 * @param {string} id
 * @param {TraceInputs} defaults
 * @returns {TraceInputs | undefined}
 */
export function presetInputs(id, defaults) {
  const p = PRESETS.find(([pid]) => pid === id);
  return p ? { ...defaults, ...p[2] } : undefined;
}

/**
 * The preset the inputs are exactly, or {@link CUSTOM}.
 * @param {TraceInputs} inputs
 * @param {TraceInputs} defaults
 */
export function presetIdOf(inputs, defaults) {
  const key = inputsKey(inputs);
  return PRESETS.find(([, , patch]) => inputsKey({ ...defaults, ...patch }) === key)?.[0] ?? CUSTOM;
}
