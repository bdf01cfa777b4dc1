// @ts-check
/**
 * Runs the model on the service (`POST /api/trace`) whenever the inputs change (debounced,
 * keeping only the latest answer), and keeps the run before it so the page can say what the
 * last change did. A failure is an error to show — a refusal names its fields, an unreachable
 * service says so — and never leaves "Running the model…" behind.
 */
import { useEffect, useRef, useState } from '../../lib/vendor.js';
import { ApiError, api } from '../../lib/api.js';

/** @typedef {import('../../lib/types.js').TraceResult} TraceResult */
/** @typedef {import('../../lib/types.js').TraceInputs} TraceInputs */
/** @typedef {{ message: string, fields: Record<string, string>, unreachable: boolean }} RunError */

/**
 * @param {TraceInputs} inputs
 * @param {boolean} hasInvalid the form has fields that are not numbers yet: do not run
 */
export function useTraceRun(inputs, hasInvalid) {
  const [result, setResult] = useState(/** @type {TraceResult | undefined} */ (undefined));
  const [previous, setPrevious] = useState(/** @type {TraceResult | undefined} */ (undefined));
  const [error, setError] = useState(/** @type {RunError | undefined} */ (undefined));
  const [pending, setPending] = useState(true);
  const [attempt, setAttempt] = useState(0);
  const runId = useRef(0);
  const key = JSON.stringify(inputs);

  useEffect(() => {
    if (hasInvalid) {
      setPending(false);
      return;
    }
    setPending(true);
    const id = ++runId.current;
    const timer = setTimeout(() => {
      api('/api/trace', { method: 'POST', body: inputs }).then(
        (/** @type {TraceResult} */ r) => {
          if (id !== runId.current) return;
          setResult((old) => {
            if (old && JSON.stringify(old.inputs) !== JSON.stringify(r.inputs)) setPrevious(old);
            return r;
          });
          setError(undefined);
          setPending(false);
        },
        (/** @type {unknown} */ err) => {
          if (id !== runId.current) return;
          /** @type {Record<string, string>} */
          const fields = {};
          if (err instanceof ApiError) for (const p of err.body?.problems ?? []) fields[p.path] = p.message;
          const unreachable = !(err instanceof ApiError);
          const message = err instanceof Error ? err.message : String(err);
          setError({ message: unreachable ? `the service could not be reached (${message})` : message, fields, unreachable });
          setPending(false);
        },
      );
    }, 150);
    return () => clearTimeout(timer);
  }, [key, hasInvalid, attempt]);

  return { result, previous, error, pending, retry: () => setAttempt((n) => n + 1) };
}
