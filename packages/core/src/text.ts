/**
 * Text helpers for messages about untrusted input: one rendering of a value, one test for control
 * characters. Used by every reader of third-party documents (sources, catalogs).
 */

/** A short, safe rendering of a value for a message. */
export function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : typeof value;
}

/** True when the string has an ASCII control character (C0 or DEL) or a Unicode line/paragraph separator. */
export function hasControl(value: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f\u2028\u2029]/.test(value);
}


/** Strings in UTF-16 code-unit order (what `<` compares; never `localeCompare`, whose order depends on the locale). */
export function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
