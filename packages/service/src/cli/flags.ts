/**
 * Option parsers the commands share: a bad value is commander's usage error (exit 2), naming the
 * option.
 *
 * @module
 */
import { InvalidArgumentError } from 'commander';

/** A repeatable option's values, in order. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A whole number above zero. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number');
  return n;
}

/** A whole number, zero or above (digits only). */
export function nonNegativeInt(value: string): number {
  if (!/^\d{1,15}$/.test(value)) throw new InvalidArgumentError('must be a whole number, zero or above');
  return Number(value);
}
