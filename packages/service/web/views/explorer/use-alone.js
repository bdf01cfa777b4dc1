// @ts-check
/**
 * Several controls changed at once: run each one alone on the service (`POST /api/trace`, the
 * baseline with only that control changed) and say what each does on its own (compare.js,
 * `attributeChanges`). Nothing is run when one control changed (its effect is the whole
 * difference) or more than four did.
 */
import { useEffect, useState } from '../../lib/vendor.js';
import { api } from '../../lib/api.js';
import { attributeChanges } from './compare.js';

/** @typedef {import('../../lib/types.js').TraceResult} TraceResult */
/** @typedef {import('./compare.js').SingleChangeEffect} SingleChangeEffect */

/**
 * @param {TraceResult | undefined} baseline
 * @param {TraceResult | undefined} current
 * @returns {{ effects: SingleChangeEffect[] | undefined, pending: boolean }}
 */
export function useAlone(baseline, current) {
  const [state, setState] = useState(/** @type {{ key: string, effects: SingleChangeEffect[] | undefined }} */ ({ key: '', effects: undefined }));
  const key = baseline && current ? JSON.stringify([baseline.inputs, current.inputs]) : '';
  useEffect(() => {
    if (!baseline || !current) return;
    let live = true;
    attributeChanges(baseline, current, (inputs) => api('/api/trace', { method: 'POST', body: inputs })).then(
      (effects) => live && setState({ key, effects }),
      () => live && setState({ key, effects: undefined }),
    );
    return () => {
      live = false;
    };
  }, [key]);
  return { effects: state.key === key ? state.effects : undefined, pending: key !== '' && state.key !== key };
}
