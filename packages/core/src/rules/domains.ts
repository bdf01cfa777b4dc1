/**
 * Domain rules: a bare `host[:port]` as the well-known and AI Catalog sources (and their YAML
 * sections) take it, normalized the way `new URL()` sees the host, so that two spellings of one
 * host are seen as duplicates.
 *
 * @module
 */
import { describe } from '../text.js';
import { withoutTrailingDot } from './origins.js';

/**
 * `host[:port]` normalized (lower case, ASCII/punycode, default port 443 and one trailing dot
 * dropped), or why the value is not one. No scheme, path, user info, query or fragment.
 *
 * @example normalizeDomain('Partner.EXAMPLE.:443') // 'partner.example'
 * @example normalizeDomain('https://a.example') // { problem: '"https://a.example" must be a bare domain …' }
 */
export function normalizeDomain(raw: unknown): string | { problem: string } {
  if (typeof raw !== 'string' || raw.trim() === '') return { problem: `must be a non-empty domain name such as "agents.example.com", got ${describe(raw)}` };
  const text = raw.trim();
  if (/[/\\@?#\s]/.test(text) || text.includes('://')) {
    return { problem: `${describe(raw)} must be a bare domain (host or host:port) without scheme, path, user info, query or fragment` };
  }
  let url: URL;
  try {
    url = new URL(`https://${text}/`);
  } catch {
    return { problem: `${describe(raw)} is not a valid domain name` };
  }
  const hostname = withoutTrailingDot(url.hostname);
  if (hostname === '' || url.pathname !== '/') return { problem: `${describe(raw)} is not a valid domain name` };
  return url.port === '' ? hostname : `${hostname}:${url.port}`;
}
