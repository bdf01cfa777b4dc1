/**
 * The few Cache-Control directives the card cache reads itself (freshness comes from
 * http-cache-semantics): RFC 9111 §5.2.2.2 `must-revalidate`, §5.2.2.4 `no-cache`,
 * §5.2.2.5 `no-store`, and RFC 5861 §4 `stale-if-error`.
 */

export interface CacheDirectives {
  noStore: boolean;
  noCache: boolean;
  mustRevalidate: boolean;
  /** Seconds a stale response may be used after an error (RFC 5861), 0 when absent. */
  staleIfErrorSeconds: number;
  /** Whether the response said anything about its lifetime (max-age, Expires, Last-Modified, no-cache...). */
  explicit: boolean;
}

/** Parses the directives of a response's headers (lower-case names). */
export function readDirectives(headers: Readonly<Record<string, string | undefined>>): CacheDirectives {
  const cc = parseCacheControl(headers['cache-control']);
  const staleIfError = Number(cc.get('stale-if-error'));
  return {
    noStore: cc.has('no-store'),
    noCache: cc.has('no-cache'),
    mustRevalidate: cc.has('must-revalidate') || cc.has('proxy-revalidate'),
    staleIfErrorSeconds: Number.isFinite(staleIfError) && staleIfError > 0 ? staleIfError : 0,
    explicit:
      cc.has('max-age') ||
      cc.has('s-maxage') ||
      cc.has('no-cache') ||
      cc.has('no-store') ||
      headers.expires !== undefined ||
      headers['last-modified'] !== undefined ||
      (headers.pragma !== undefined && /no-cache/i.test(headers.pragma)),
  };
}

/** `max-age=60, no-cache="x"` → Map { 'max-age' → '60', 'no-cache' → 'x' }. Names are lower-cased. */
export function parseCacheControl(value: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!value) return out;
  for (const part of value.split(',')) {
    const [rawName, ...rest] = part.split('=');
    const name = rawName!.trim().toLowerCase();
    if (name === '') continue;
    const arg = rest.join('=').trim().replace(/^"(.*)"$/, '$1');
    if (!out.has(name)) out.set(name, arg);
  }
  return out;
}
