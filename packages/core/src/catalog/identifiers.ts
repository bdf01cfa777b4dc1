/**
 * One rule for the identifier of a catalog or registry entry (ARD v0.91), read and written:
 *
 * - `urn:ai:` and `urn:air:` are one identifier. ARD writes `urn:air:<publisher>:…`; registries
 *   in the wild still write the older `urn:ai:` prefix (11 % of federated entries). An identifier
 *   is compared, de-duplicated and looked up in its canonical form, the `urn:air:` one, and that
 *   is the form we publish.
 * - An identifier is absolute: it names its scheme (`urn:air:…`, `https://…#name`). A relative
 *   reference (`billing`, `/api/registry/#ard-registry`) means something else on every host that
 *   repeats it, so it is refused, when a catalog is read and when one is published.
 *
 * @module
 */

/** The prefix of a domain-anchored ARD identifier, as we publish it. */
export const AIR_URN_PREFIX = 'urn:air:';

/** `urn:ai:` or `urn:air:` in any case (RFC 8141: the `urn` scheme and the NID are case-insensitive). */
const AI_URN = /^urn:air?:/i;

/** RFC 3986 §3.1: `scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`, then `:`. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * The canonical form of an entry identifier: `urn:ai:…` and `urn:air:…` (any case of the prefix)
 * become `urn:air:…`; every other identifier is returned as given.
 *
 * @example canonicalIdentifier('urn:ai:acme.com:agent:billing') // 'urn:air:acme.com:agent:billing'
 */
export function canonicalIdentifier(identifier: string): string {
  return AI_URN.test(identifier) ? `${AIR_URN_PREFIX}${identifier.replace(AI_URN, '')}` : identifier;
}

/** Whether two identifiers are one (`urn:ai:x` and `urn:air:x` are). */
export function sameIdentifier(a: string, b: string): boolean {
  return canonicalIdentifier(a) === canonicalIdentifier(b);
}

/**
 * Why `identifier` is not absolute, or undefined when it is: a relative reference (no scheme)
 * names nothing outside the document that carries it.
 *
 * @example relativeIdentifierProblem('/api/registry/#ard-registry') // 'is a relative reference …'
 */
export function relativeIdentifierProblem(identifier: string): string | undefined {
  if (SCHEME.test(identifier)) return undefined;
  return `is a relative reference (${JSON.stringify(identifier.slice(0, 80))}); an entry identifier must be absolute, a URN such as "urn:air:<publisher>:<namespace>:<name>" (ARD 0.91: no relative registry identifiers)`;
}

/**
 * The `urn:air:` identifier a publisher that is not the agent's own gives an entry (our catalog,
 * our registry): `urn:air:<host>:<namespace>:<name>`, the host of `url` as the publisher (the
 * domain the agent, or the service, is reached at), its port (when it has one) appended to the
 * namespace (`agent.8443`), so two endpoints on one host are two identifiers; characters a URN
 * segment cannot carry are written `-`. Its trailing segment is `name` (the display-name
 * fallback of a reader).
 *
 * @example airIdentifier('https://billing.example.com/', 'agent', 'billing_agent') // 'urn:air:billing.example.com:agent:billing_agent'
 */
export function airIdentifier(url: string, namespace: string, name: string): string {
  const at = new URL(url);
  const publisher = at.hostname.toLowerCase().replace(/^\[|\]$/g, '').replace(/[^a-z0-9.-]/g, '-');
  const ns = at.port === '' ? namespace : `${namespace}.${at.port}`;
  return `${AIR_URN_PREFIX}${publisher}:${ns}:${name.replace(/[^A-Za-z0-9._-]/g, '-')}`;
}
