/**
 * URL rules: which strings can be a base URL, a card's own URL, or any http(s) URL that
 * configuration, sources and the registry API accept. Syntax only: whether an origin may be
 * reached is the allowlist's decision (`HostPolicy`), made later. One sentence per fault, the
 * same wherever the rule is applied.
 *
 * @module
 */
import { describe } from '../text.js';

/** A card's own URL names a JSON document: its path ends in `.json` (any letter case). */
export function isCardPath(pathname: string): boolean {
  return /\.json$/i.test(pathname);
}

/**
 * True when a URL names a card itself rather than a base URL: its path ends in `.json`.
 *
 * @example isCardUrl('https://a.example.com/.well-known/finance/agent-card.json') // true
 * @example isCardUrl('https://a.example.com/v1') // false
 */
export function isCardUrl(url: string): boolean {
  try {
    return isCardPath(new URL(url).pathname);
  } catch {
    return false;
  }
}

/**
 * Why a string cannot be an http(s) URL here, or undefined when it can: it must parse as an
 * absolute `http:` or `https:` URL with a host and without a user name or password.
 *
 * @example impossibleUrl('https://agents.example.com/') // undefined
 * @example impossibleUrl('ftp://files.example.com/') // '"ftp://files.example.com/" is not an http(s) URL'
 */
export function impossibleUrl(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `${describe(value)} is not an absolute URL such as "https://agents.example.com/"`;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return `${describe(value)} is not an http(s) URL`;
  if (url.username !== '' || url.password !== '') return `${describe(value)} carries credentials (a user name or password) in the URL`;
  if (url.hostname === '') return `${describe(value)} has no host`;
  return undefined;
}

/**
 * Why a string cannot be a card's own URL, or undefined when it can: an absolute http(s) URL
 * ({@link impossibleUrl}) whose path ends in `.json`, without query or fragment.
 */
export function impossibleCardUrl(value: string): string | undefined {
  const why = impossibleUrl(value);
  if (why !== undefined) return why;
  const url = new URL(value);
  if (!isCardPath(url.pathname)) return `${describe(value)} is not a card URL: its path must end in .json (give a base URL as url instead)`;
  if (url.search !== '' || url.hash !== '') return `${describe(value)}: a card URL has no query or fragment`;
  return undefined;
}

/**
 * Why a string cannot be a base URL, or undefined when it can: {@link impossibleUrl}, or a path
 * ending in `.json`, which names a card and belongs in `cardUrl`.
 */
export function impossibleBaseUrl(value: string): string | undefined {
  const why = impossibleUrl(value);
  if (why !== undefined) return why;
  if (isCardUrl(value)) return `${describe(value)} names a card (its path ends in .json); give it as cardUrl, or give the base URL here`;
  return undefined;
}
