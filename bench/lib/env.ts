/** A benchmark's settings from its environment. */

/** The integer in `process.env[name]` (1 to `max`), `fallback` when unset; a clear error for anything else. */
export function envCount(name: string, fallback: number, max: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < 1 || v > max) throw new Error(`${name}=${raw}: must be an integer from 1 to ${max}`);
  return v;
}
