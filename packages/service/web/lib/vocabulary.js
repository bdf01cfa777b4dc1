// @ts-check
/**
 * The dashboard's words for every verdict, cause, health state and badge: one vocabulary with the
 * API and the CLI. VERDICTS, CAUSES and HEALTH are the library's own tables (ENDPOINT_VERDICTS,
 * ENDPOINT_CAUSES and HEALTH_STATES of a2a-discovery), copied here because the page loads no
 * server module; BADGES are the dashboard's own badges. docs/vocabulary.md lists the same rows, and
 * test/docs/vocabulary.test.ts holds the library, this file and the docs to one table.
 */

/** @typedef {{ label: string, meaning: string, verdict: 'refused' | 'pending' | 'unsuitable' | 'excluded' }} CauseWords */

/** Every endpoint verdict and what it means. @type {Readonly<Record<string, string>>} */
export const VERDICTS = Object.freeze({
  "selected": "In the published snapshot: conversations can be routed to it.",
  "degraded": "In the published snapshot, but its card is served stale or its calls fail; it stays while that lasts (a critical agent is never removed).",
  "held": "It should leave the snapshot, but the removal guard holds it back (too many removals at once); confirm to publish without it.",
  "pending": "Admitted, not in a snapshot yet: no usable card so far (it is being fetched, or failing to answer), or not enough good observations in a row.",
  "refused": "Never in a snapshot: the allowlist refuses its host, or it answered and what it sent was refused (a pin, a signature, 401/403, a redirect, an interface host). The cause says which.",
  "removed": "It left new snapshots after repeated failures (fetches or calls); it returns after good observations in a row.",
  "unsuitable": "A valid card that no need matches (its skills, tags or modes do not fit); it stays cached.",
  "excluded": "A valid card left out by a rule: its name is taken, it looks like another agent, it serves another tenant, no configured credentials satisfy it, or the cap was reached. The cause says which.",
  "gone": "No source proposes it any more; it is forgotten after the removal grace period."
});

/** Every cause a verdict names: its badge words, its meaning and the verdict it gives. @type {Readonly<Record<string, CauseWords>>} */
export const CAUSES = Object.freeze({
  "allowlist": {
    "label": "refused by the allowlist",
    "meaning": "Its host is not named by the allowlist (allow), so it is never contacted. Add the host to the allowlist to admit it.",
    "verdict": "refused"
  },
  "insecure-url": {
    "label": "insecure URL refused",
    "meaning": "Its URL uses plain http: (or another scheme) where https: is required. Serve it over https, or allow plain http for loopback only (allowLoopback).",
    "verdict": "refused"
  },
  "address-blocked": {
    "label": "address blocked",
    "meaning": "Its name resolved to an address discovery never contacts (private, loopback, link-local or a blocked range), so the request was not sent. Check its DNS records.",
    "verdict": "refused"
  },
  "redirect": {
    "label": "redirect refused",
    "meaning": "It answered with a redirect. Redirects are never followed (they could lead off the allowlist); register the final URL instead.",
    "verdict": "refused"
  },
  "unauthorized": {
    "label": "unauthorized",
    "meaning": "It (or its token endpoint) answered 401 or 403: the credentials configured for its origin are missing or refused.",
    "verdict": "refused"
  },
  "pin": {
    "label": "refused by a pin",
    "meaning": "The card's SHA-256 differs from the digest its publisher pinned (a DNS record's capsha256 or an AI Catalog Trust Manifest): the card is not the one published.",
    "verdict": "refused"
  },
  "signature": {
    "label": "signature refused",
    "meaning": "The card's signature is missing where one is required, or does not verify against the trusted keys.",
    "verdict": "refused"
  },
  "interface-host": {
    "label": "interface host refused",
    "meaning": "The card was fetched, but the interface it names to call sits on a host the allowlist does not name (or uses an insecure scheme), so it would never be called.",
    "verdict": "refused"
  },
  "invalid-card": {
    "label": "invalid card",
    "meaning": "The card was fetched but is not a valid agent card (not JSON, or fields missing or wrong); the reason names the JSON path.",
    "verdict": "refused"
  },
  "too-large": {
    "label": "card too large",
    "meaning": "The answer exceeded the size limit for a card (cache.maxBodyBytes), so it was not read further.",
    "verdict": "refused"
  },
  "unreachable": {
    "label": "unreachable",
    "meaning": "The request could not be made or was cut off (DNS, connection refused or reset, TLS). It is retried with backoff.",
    "verdict": "pending"
  },
  "timeout": {
    "label": "timed out",
    "meaning": "It did not answer within the fetch timeout. It is retried with backoff.",
    "verdict": "pending"
  },
  "http-error": {
    "label": "HTTP error",
    "meaning": "It answered with an error status other than 401 or 403 (404, 500, …) or a body that could not be decoded. It is retried with backoff.",
    "verdict": "pending"
  },
  "no-match": {
    "label": "no need matches",
    "meaning": "A valid card whose skills, tags or input and output modes fit none of the needs (select.needs); the reason says what is missing.",
    "verdict": "unsuitable"
  },
  "unroutable": {
    "label": "no callable interface",
    "meaning": "Its card names no interface a client here can call (an address such as 0.0.0.0, or no supported binding); a static entry with interfaceUrl can say where it answers.",
    "verdict": "unsuitable"
  },
  "credentials": {
    "label": "no accepted credentials",
    "meaning": "Its card requires a security scheme the credentials configured for its origin do not satisfy, so a call would be refused. Configure credentials for the origin.",
    "verdict": "excluded"
  },
  "tenant": {
    "label": "another tenant",
    "meaning": "Its card serves a tenant other than the one this orchestrator is for.",
    "verdict": "excluded"
  },
  "lookalike": {
    "label": "lookalike",
    "meaning": "Its name looks like an earlier agent's from another origin (a possible impersonation); with lookalikes: exclude it is left out of snapshots.",
    "verdict": "excluded"
  },
  "name": {
    "label": "name taken",
    "meaning": "Its local name is already used (by another agent, a reviewed agent or a routing domain) or is not a usable name; give it a static entry with its own name.",
    "verdict": "excluded"
  },
  "cap": {
    "label": "cap reached",
    "meaning": "The cap of agents per tree (or per routing domain) was reached, or no routing domain lists its tags; higher-priority agents were kept.",
    "verdict": "excluded"
  }
});

/** Every health state and what it means. @type {Readonly<Record<string, string>>} */
export const HEALTH = Object.freeze({
  "healthy": "Its card is fresh and its fetches and calls succeed: it may be in snapshots.",
  "pending": "Not yet in snapshots: no usable card so far, or fewer good observations in a row than health.enterAfter.",
  "degraded": "In snapshots, but its last fetches or calls failed (its card may be served stale); it leaves after health.leaveAfter failed fetches in a row, unless it is critical.",
  "removed": "Out of new snapshots after repeated failures; it returns after health.enterAfter good observations in a row."
});

/** The dashboard's other badges, by their text: cache outcomes, critical, call health, replica roles. @type {Readonly<Record<string, string>>} */
export const BADGES = Object.freeze({
  "critical": "A critical agent (critical: true on its static entry) is never removed for health reasons: while it fails it stays in snapshots, flagged degraded, and an alert says so.",
  "call health": "Health from real calls: the A2A calls the orchestrator made to the agent (turns and active checks), the share that failed and the p95 latency. Calls failing in a row degrade the agent, then leave it out of new snapshots (health.callLeaveAfter); good calls bring it back.",
  "hit": "The last read was served from the cache: the card was fresh, no request was sent.",
  "304": "The last fetch revalidated the card: the peer answered 304 Not Modified to a conditional GET, and the cached card stays.",
  "200 changed": "The last fetch got a new card (200) whose content differs from the cached one.",
  "200 same": "The last fetch got the whole card again (200: the peer did not revalidate) with the same content.",
  "stale": "The last fetch failed and the cached card is served stale, within its allowed staleness (cache.maxStaleMs).",
  "invalid": "The last fetch got an answer that was refused (not a valid card, a pin or a signature that does not match); the cause says which.",
  "failed": "The last fetch got no answer (network, timeout or an error status); it is retried with backoff.",
  "leader": "This replica leads: it runs discovery, publishes snapshots and writes the store; followers serve its lists.",
  "follower": "This replica follows the leader: it serves the leader's lists and answers chats on the snapshots the leader published.",
  "leader unreachable": "This replica follows, but cannot reach the leader (no leader yet, no advertised URL, no replica key, or the leader does not answer): its lists are not shown rather than shown empty."
});

/**
 * What a badge's words mean, for its explanation: a verdict, a health state or another badge.
 * @param {'verdict' | 'health' | 'badge'} kind @param {string} word
 * @returns {string | undefined}
 */
export function meaningOf(kind, word) {
  const table = kind === 'verdict' ? VERDICTS : kind === 'health' ? HEALTH : BADGES;
  return Object.hasOwn(table, word) ? table[word] : undefined;
}

/**
 * A cause's badge words and meaning, or undefined for a cause this page does not know (a newer
 * server): the reason sentence still says it.
 * @param {string | undefined} cause
 * @returns {CauseWords | undefined}
 */
export function causeWords(cause) {
  return cause !== undefined && Object.hasOwn(CAUSES, cause) ? CAUSES[cause] : undefined;
}
