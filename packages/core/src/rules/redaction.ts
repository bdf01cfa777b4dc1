/**
 * The one redaction of URLs, for every message, error field, log line, span attribute and status
 * page: a URL's user information and every query value are replaced by `REDACTED` (a user name
 * may be a token, a password is one, and a query API key is a secret a card or a registry may
 * demand). Scheme, host, port, path, query keys and fragment stay, so the reader still sees where.
 *
 * @module
 */

/** What stands in place of a secret. */
export const REDACTED = 'REDACTED';

const MAX_UNPARSED = 200;

/**
 * `url` with its user information and query values masked. A text that does not parse as a URL
 * is cut to 200 characters, and whatever stands between `://` and the last `@` is masked, and so is
 * everything after a `?`.
 *
 * @example redactUrl('https://u:p@x.example/a?key=1&b=2#f') // 'https://REDACTED@x.example/a?key=REDACTED&b=REDACTED#f'
 * @example redactUrl('postgres://a2a:s3cret@db.example.com/a2a') // 'postgres://REDACTED@db.example.com/a2a'
 * @example redactUrl('https://agents.example.com/') // 'https://agents.example.com/'
 */
export function redactUrl(url: string | URL): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return redactText(String(url));
  }
  const hasUserinfo = u.username !== '' || u.password !== '';
  if (!hasUserinfo && u.search === '') return u.href;
  if (u.search !== '') {
    const keys: string[] = [];
    for (const key of u.searchParams.keys()) keys.push(`${encodeURIComponent(key)}=${REDACTED}`);
    u.search = keys.join('&');
  }
  if (!hasUserinfo) return u.href;
  u.username = '';
  u.password = '';
  // The URL API cannot set a user name on every scheme: splice the mask in after `//`.
  const at = u.href.indexOf('//');
  return at < 0 ? u.href : `${u.href.slice(0, at + 2)}${REDACTED}@${u.href.slice(at + 2)}`;
}

function redactText(text: string): string {
  let out = text.slice(0, MAX_UNPARSED);
  // Up to the last `@`: a password may hold `/`, `:`, `#` or `@` itself, which is what made the URL unparseable.
  out = out.replace(/^([a-z][a-z0-9+.-]*:\/\/).*@/i, `$1${REDACTED}@`);
  const q = out.indexOf('?');
  return q < 0 ? out : `${out.slice(0, q)}?${REDACTED}`;
}
