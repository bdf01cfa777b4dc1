/**
 * Lookalikes within what one probe read (rules/lookalike.ts): each accepted entry of a catalog is
 * checked against the entries listed before it from other origins. `probe` knows no live set of
 * agents, so a catalog is judged on its own (and `probe --config` cannot know what a running
 * service admitted); the service's inspector also checks against the agents its loop admitted.
 */
import type { Lookalike } from '../rules/lookalike.js';
import { lookalikesAmong } from '../rules/lookalike.js';
import { originOf } from '../rules/origins.js';

/** One entry: where it is served (a URL), the names it goes by, and what to do when it is a lookalike. */
export interface LookalikeItem {
  readonly url: string | undefined;
  readonly names: ReadonlyArray<string | undefined>;
  flag(lookalike: Lookalike): void;
}

/** Flags each item whose name looks like an earlier item's from another origin. */
export function flagLookalikes(items: readonly LookalikeItem[]): void {
  const listed = items.flatMap((item, i) => {
    const origin = item.url !== undefined ? originOf(item.url) : undefined;
    return origin === undefined ? [] : [{ key: String(i), origin, names: item.names.filter((n): n is string => n !== undefined) }];
  });
  for (const [key, l] of lookalikesAmong(listed)) items[Number(key)]!.flag({ of: l.of, origin: l.origin, reason: l.reason });
}
