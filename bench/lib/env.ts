/** A benchmark's settings from its environment: the one reader of numbers, each with its bounds and a clear error. */

/**
 * The number in `process.env[name]`, within `min`–`max` (and whole with `integer`), `fallback`
 * when unset or empty; an error naming the variable for anything else.
 */
export function envNumber(name: string, fallback: number, o: { min: number; max: number; integer?: boolean }): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw);
  const integer = o.integer ?? true;
  if (!Number.isFinite(v) || v < o.min || v > o.max || (integer && !Number.isInteger(v))) {
    throw new Error(`${name}=${raw}: must be ${integer ? 'an integer' : 'a number'} from ${o.min} to ${o.max}`);
  }
  return v;
}

/** The integer in `process.env[name]` (1 to `max`), `fallback` when unset; a clear error for anything else. */
export function envCount(name: string, fallback: number, max: number): number {
  return envNumber(name, fallback, { min: 1, max });
}

/** A comma-separated list of integers (each 1 to `max`) in `process.env[name]`, `fallback` when unset. */
export function envCounts(name: string, fallback: readonly number[], max: number): number[] {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return [...fallback];
  return raw.split(',').map((part) => {
    const v = Number(part.trim());
    if (part.trim() === '' || !Number.isInteger(v) || v < 1 || v > max) throw new Error(`${name}=${raw}: must be integers from 1 to ${max}, separated by commas`);
    return v;
  });
}
