/**
 * `serve`'s V8 heap growth (`server.heapGrowthPercent`; docs/operations.md "Memory"): how far the
 * heap may grow past what the last full collection found live before the next one. V8's own
 * heuristics (the default) let it grow 1.1 to 4 times, by how fast it collects: at 100,000
 * endpoints it reserved 630–810 MB for 440 MB live, and the pages it reserved stay in the
 * process's RSS. A smaller growth holds less, for more collections while the heap grows.
 *
 * @module
 */
import { setFlagsFromString } from 'node:v8';
import { DiscoveryError } from 'a2a-discovery';
import { HEAP_DEFAULTS } from 'a2a-discovery/config';

/**
 * Sets V8's heap growth for this whole process, in percent (0: V8's own heuristics). `serve` sets
 * it at start; a library leaves it to the program that hosts it.
 *
 * @example setHeapGrowth(30) // the next full collections let the heap grow 30 % past what they kept
 */
export function setHeapGrowth(percent: number, setFlags: (flags: string) => void = setFlagsFromString): void {
  const most = HEAP_DEFAULTS.maxHeapGrowthPercent;
  if (!Number.isInteger(percent) || percent < 0 || percent > most) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `the heap growth must be a whole percent from 0 to ${most}, got ${percent}`, { path: 'server.heapGrowthPercent' });
  }
  setFlags(`--heap-growing-percent=${percent}`);
}
