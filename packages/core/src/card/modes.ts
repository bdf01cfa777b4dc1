/**
 * Input and output modes. Cards list modes as media types (`text/plain`), but ADK JS publishes
 * short forms (`text`), so a literal comparison would call two equal things different. Every
 * mode is reduced to a canonical media type before it is compared; the table is documented in
 * docs/card-model.md.
 */

/**
 * Short forms seen in the wild and the media type each stands for.
 * `text` is what ADK JS `toA2a` publishes; `data` is A2A's structured-data part.
 */
const MODE_SHORT_FORMS: Readonly<Record<string, string>> = Object.freeze({
  text: 'text/plain',
  json: 'application/json',
  data: 'application/json',
  file: 'application/octet-stream',
  image: 'image/*',
  audio: 'audio/*',
  video: 'video/*',
});

const MEDIA_TYPE = /^([a-z0-9][a-z0-9!#$&^_.+-]*|\*)\/([a-z0-9][a-z0-9!#$&^_.+-]*|\*)$/;

/**
 * The canonical media type of a mode, or `undefined` when it is neither a media type nor a
 * known short form. Case and parameters are ignored: `Text/Plain; charset=utf-8` → `text/plain`.
 */
export function canonicalMode(mode: string): string | undefined {
  const bare = mode.split(';', 1)[0]!.trim().toLowerCase();
  const short = MODE_SHORT_FORMS[bare];
  if (short !== undefined) return short;
  return MEDIA_TYPE.test(bare) ? bare : undefined;
}

/** True when `offered` (a canonical media type, possibly `type/*` or `*\/*`) covers `needed`. */
function covers(offered: string, needed: string): boolean {
  if (offered === needed || offered === '*/*') return true;
  const [ot, os] = offered.split('/') as [string, string];
  const [nt, ns] = needed.split('/') as [string, string];
  if (ot !== nt) return false;
  return os === '*' || ns === '*';
}

/**
 * Whether every needed mode is offered, comparing canonical media types with wildcards
 * (`image/*` offered covers `image/png` needed, and the reverse). Unknown modes never match.
 *
 * @example modesCover(['text'], ['text/plain']) // true
 */
export function modesCover(offered: readonly string[], needed: readonly string[]): boolean {
  const have = offered.map(canonicalMode).filter((m): m is string => m !== undefined);
  return needed.every((n) => {
    const want = canonicalMode(n);
    return want !== undefined && have.some((h) => covers(h, want));
  });
}

/** A skill's effective modes: its own when it lists any, otherwise the card's defaults. */
export function effectiveModes(
  skillModes: readonly string[] | undefined,
  defaults: readonly string[],
): readonly string[] {
  return skillModes !== undefined && skillModes.length > 0 ? skillModes : defaults;
}
