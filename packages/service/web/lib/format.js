// @ts-check
/**
 * Formatting and classification shared by the views. Pure functions, no DOM.
 */

/** @typedef {import('./types.js').DiscoveryEvent} DiscoveryEvent */
/** @typedef {import('./types.js').CardOutcome} CardOutcome */

/** @param {string | undefined | null} digest */
export function shortDigest(digest) {
  return digest ? digest.slice(0, 12) : '—';
}

/**
 * The trace viewer's URL of a trace: `server.telemetry.traceUrl` with `{traceId}` replaced, or
 * undefined without a template (or for anything but a W3C trace id, or a URL that is not http(s)).
 * @param {string | null | undefined} template
 * @param {string} traceId
 */
export function traceHref(template, traceId) {
  if (!template || !/^[0-9a-f]{32}$/.test(traceId)) return undefined;
  const href = template.replaceAll('{traceId}', traceId);
  try {
    return ['http:', 'https:'].includes(new URL(href).protocol) ? href : undefined;
  } catch {
    return undefined;
  }
}

/** @param {number} n */
export function num(n) {
  return n.toLocaleString('en-US');
}

/** @param {number} n */
export function bytes(n) {
  return `${num(n)} B`;
}

/**
 * A duration for a person: "0.4 s", "12 s", "3 min", "2 h".
 * @param {number} ms
 */
export function duration(ms) {
  const a = Math.abs(ms);
  if (a < 10_000) return `${(a / 1000).toFixed(1)} s`;
  if (a < 120_000) return `${Math.round(a / 1000)} s`;
  if (a < 7_200_000) return `${Math.round(a / 60_000)} min`;
  return `${Math.round(a / 3_600_000)} h`;
}

/**
 * @param {number | undefined} epochMs
 * @param {number} now
 */
export function ago(epochMs, now) {
  if (epochMs === undefined) return '—';
  const d = now - epochMs;
  return d < 1000 ? 'just now' : `${duration(d)} ago`;
}

/** @param {number} epochMs */
export function clockTime(epochMs) {
  const d = new Date(epochMs);
  const pad = (/** @type {number} */ n, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** Model seconds, e.g. "12.1 s". @param {number} s */
export function modelSeconds(s) {
  return `${Number.isInteger(s) ? s : s.toFixed(s * 10 === Math.round(s * 10) ? 1 : 3)} s`;
}

/** Outcome → a short label that carries the meaning without colour. */
export const OUTCOME_LABEL = /** @type {Record<CardOutcome, string>} */ ({
  hit: 'hit',
  revalidated: '304',
  changed: '200 changed',
  unchanged: '200 same',
  stale: 'stale',
  invalid: 'invalid',
  failed: 'failed',
});

/**
 * The CSS class of an outcome (colour and mark), shared by tables, the timeline and the explorer.
 * @param {string | undefined} outcome
 */
export function outcomeClass(outcome) {
  switch (outcome) {
    case 'hit':
    case 'revalidated':
    case 'changed':
    case 'unchanged':
    case 'stale':
    case 'invalid':
    case 'failed':
      return `o-${outcome}`;
    case 'accepted':
    case 'selected':
    case 'healthy':
    case 'admitted':
      return 'o-good';
    case 'rejected':
    case 'refused':
    case 'removed':
    case 'excluded':
    case 'unsuitable':
      return 'o-failed';
    case 'degraded':
      return 'o-stale';
    default:
      return 'o-info';
  }
}

/**
 * The stage of the pipeline that decided an event (the timeline's "decided by" column).
 * @param {DiscoveryEvent} e
 * @returns {string}
 */
export function decidingStage(e) {
  switch (e.type) {
    case 'card.fetch':
      return 'request';
    case 'card.result':
      switch (e.outcome) {
        case 'hit':
          return 'cache (fresh)';
        case 'revalidated':
          return 'cache (304)';
        case 'changed':
        case 'unchanged':
          return 'validation';
        case 'invalid':
          return e.stage ?? 'validation';
        default:
          return e.stage ?? 'fetch';
      }
    case 'card.backoff':
      return 'cache (backoff)';
    case 'endpoint.admitted':
    case 'endpoint.refused':
    case 'endpoint.gone':
    case 'endpoint.evicted':
      return 'admission';
    case 'routing.evaluated':
      return 'routing gate';
    case 'session.pinned':
    case 'session.upgraded':
    case 'session.ended':
    case 'session.expired':
    case 'session.restarted':
      return 'sessions';
    case 'tree.built':
    case 'tree.evicted':
      return 'agent trees';
    case 'catalog.read':
      return 'source';
    case 'health.changed':
      return 'health';
    case 'match.verdict':
      return 'match';
    case 'snapshot.published':
      return 'publish';
    case 'snapshot.held':
      return 'guard';
    case 'alert':
      return 'alerting';
    case 'service.started':
      return 'service';
    case 'replica.leader':
      return 'replicas';
    case 'api.action':
      return 'people';
    case 'config.reloaded':
    case 'config.refused':
      return 'configuration';
    default:
      if (e.type.startsWith('rollout.')) return e.by === undefined || e.by === 'auto' ? 'rollout (the figures)' : 'rollout (an operator)';
      return e.type.split('.')[0] ?? e.type;
  }
}

/**
 * The outcome word of an event (its colour and its text).
 * @param {DiscoveryEvent} e
 * @returns {string}
 */
export function eventOutcome(e) {
  switch (e.type) {
    case 'card.result':
      return e.outcome ?? 'result';
    case 'card.fetch':
      return e.conditional ? 'conditional GET' : 'GET';
    case 'card.backoff':
      return 'backoff';
    case 'endpoint.admitted':
      return 'admitted';
    case 'endpoint.refused':
      return 'refused';
    case 'endpoint.gone':
      return 'gone';
    case 'endpoint.evicted':
      return 'forgotten';
    case 'health.changed':
      return e.to ?? 'health';
    case 'match.verdict':
      return e.verdict ?? 'verdict';
    case 'snapshot.published':
      return `v${e.version}`;
    case 'snapshot.held':
      return 'held';
    case 'alert':
      return 'alert';
    case 'alert.resolved':
      return 'resolved';
    case 'catalog.read':
      return e.outcome ?? 'read';
    case 'routing.evaluated':
      return e.held ? 'held' : e.passed ? 'passed' : 'below minimum';
    case 'session.pinned':
      return 'pinned';
    case 'session.upgraded':
      return 'upgraded';
    case 'session.ended':
      return 'ended';
    case 'session.expired':
      return 'expired';
    case 'session.restarted':
      return 'restarted';
    case 'tree.built':
      return 'built';
    case 'tree.evicted':
      return 'dropped';
    case 'service.started':
      return restarted(e) ? 'restart' : 'start';
    case 'replica.leader':
      return e.previousLeader ? 'takeover' : 'leader';
    case 'api.action':
      return ACTION_WORD[e.action ?? ''] ?? 'action';
    case 'config.reloaded':
      return 'reloaded';
    case 'config.refused':
      return 'refused';
    default:
      if (e.type.startsWith('rollout.')) return ROLLOUT_WORD[e.type.slice('rollout.'.length)] ?? 'rollout';
      return e.type;
  }
}

/** The outcome word of each rollout decision (`rollout.<action>`, and a rollout's status). */
export const ROLLOUT_WORD = /** @type {Record<string, string>} */ ({
  started: 'started',
  advanced: 'advanced',
  held: 'held',
  resumed: 'resumed',
  promoted: 'promoted',
  'rolled-back': 'rolled back',
  superseded: 'superseded',
  withdrawn: 'withdrawn',
  running: 'running',
});

/**
 * A share of new sessions or a rate as a person reads it: `5 %`, `12.5 %` (`rate` 0..1 when
 * `fraction`).
 * @param {number | undefined} n
 * @param {boolean} [fraction]
 */
export function percent(n, fraction = false) {
  const v = (n ?? 0) * (fraction ? 100 : 1);
  return `${Math.round(v * 10) / 10} %`;
}

/**
 * Who took a rollout decision, as a person reads it: `auto` is the service on the figures of
 * real calls; otherwise the operator the API names (`anonymous` on an open loopback service).
 * @param {string | undefined} by
 */
export function rolloutBy(by) {
  if (by === undefined || by === 'auto') return 'automatically, on the figures of real calls';
  if (by === 'anonymous') return 'by an anonymous caller (loopback, no tokens)';
  if (by === 'admin-token') return 'by the admin token';
  return `by ${by}`;
}

/**
 * The colour class of a rollout decision or status: green when promoted, red when rolled back,
 * amber while held, grey otherwise.
 * @param {string} action
 */
export function rolloutClass(action) {
  if (action === 'promoted') return 'o-good';
  if (action === 'rolled-back') return 'o-failed';
  if (action === 'held') return 'o-stale';
  if (action === 'started' || action === 'advanced' || action === 'running' || action === 'resumed') return 'o-snapshot';
  return 'o-info';
}

/**
 * A rollout decision in words (`rollout.*` events): what it staged, the share of new sessions it
 * left on the candidate, who decided and why.
 * @param {DiscoveryEvent} e
 */
function rolloutSentence(e) {
  const agents = (e.agents ?? []).join(', ') || 'a change';
  const of = `rollout of ${agents}`;
  const share = percent(e.share);
  const by = rolloutBy(e.by);
  const operator = e.by !== undefined && e.by !== 'auto';
  switch (e.type) {
    case 'rollout.started':
      return `${of} started: ${share} of new sessions go to snapshot ${shortDigest(e.candidate)} (${e.reason ?? 'a breaking change'})`;
    case 'rollout.advanced':
      return `${of} advanced to ${share} of new sessions (step ${(e.step ?? 0) + 1}) ${by}: ${e.reason ?? ''}`;
    case 'rollout.held':
      return `${of} held at ${share} of new sessions ${by}; an automatic rollback still happens`;
    case 'rollout.resumed':
      return `${of} resumed at ${share} of new sessions ${by}`;
    case 'rollout.promoted':
      return `${of} promoted ${by}: snapshot ${shortDigest(e.candidate)} is current for every new session${operator ? '' : ` (${e.reason ?? ''})`}`;
    case 'rollout.rolled-back':
      return `${of} rolled back ${by}${operator ? '' : `: ${e.reason ?? ''}`}; new sessions start on the current snapshot ${shortDigest(e.baseline)} again`;
    case 'rollout.superseded':
      return `${of} ended, nothing promoted: ${e.reason ?? 'another change replaced it'}`;
    case 'rollout.withdrawn':
      return `${of} ended, nothing published: ${e.reason ?? 'the change is no longer in the selection'}`;
    default:
      return `${of}: ${e.reason ?? ''}`;
  }
}

/**
 * A `service.started` that followed an earlier process on the same store (a restart).
 * @param {DiscoveryEvent} e
 */
export function restarted(e) {
  return e.previousReplica !== undefined || (e.restored?.version ?? 0) > 0;
}

/** @param {number} n @param {string} what */
function plural(n, what) {
  return `${n} ${what}${n === 1 ? '' : 's'}`;
}

/**
 * The colour class of an event on the timeline.
 * @param {DiscoveryEvent} e
 */
export function eventClass(e) {
  if (e.type === 'card.result') return outcomeClass(e.outcome);
  if (e.type === 'card.fetch') return 'o-request';
  if (e.type === 'card.backoff') return 'o-stale';
  if (e.type === 'alert' || e.type === 'snapshot.held') return 'o-alert';
  if (e.type === 'alert.resolved') return 'o-good';
  if (e.type === 'snapshot.published') return 'o-snapshot';
  if (e.type === 'service.started' || e.type === 'replica.leader' || e.type === 'config.reloaded') return 'o-service';
  if (e.type === 'config.refused') return 'o-alert';
  if (e.type.startsWith('rollout.')) return rolloutClass(e.type.slice('rollout.'.length));
  return outcomeClass(eventOutcome(e));
}

/**
 * One sentence describing an event (peer-supplied text stays text: the views never parse it as HTML).
 * @param {DiscoveryEvent} e
 * @returns {string}
 */
export function describeEvent(e) {
  switch (e.type) {
    case 'card.fetch':
      return `to ${e.url ?? ''}${e.conditional ? ' (If-None-Match: the cached ETag)' : ''}`;
    case 'card.result': {
      const status = e.status !== undefined ? ` ${e.status}` : '';
      const size = e.bytes !== undefined && e.bytes > 0 ? `, ${num(e.bytes)} bytes` : '';
      const why = e.reason !== undefined ? `: ${e.code ?? ''} ${e.reason}` : '';
      const label = e.outcome !== undefined ? OUTCOME_LABEL[e.outcome] : 'result';
      return `card ${label}${status && label !== '304' ? status : ''}${size}${why}`;
    }
    case 'card.backoff':
      return `backing off ${duration(e.retryInMs ?? 0)} after ${e.failures} failure(s)`;
    case 'endpoint.admitted':
      return `the allowlist admits it (proposed by ${(e.sources ?? []).join(', ') || 'no source'})`;
    case 'endpoint.refused':
      return `${e.reason ?? 'not admitted'}${e.code ? ` (${e.code})` : ''}`;
    case 'endpoint.gone':
      return 'no source lists it any more';
    case 'endpoint.evicted':
      return 'no source listed it again within the removal grace: its cache entry and counters are freed';
    case 'health.changed':
      return `health ${e.from} → ${e.to}`;
    case 'match.verdict':
      return [e.localName ? `as ${e.localName}` : '', e.reason ?? ''].filter(Boolean).join(': ') || 'by the configured needs';
    case 'snapshot.published':
      return `snapshot v${e.version} ${shortDigest(e.digest)}: ${(e.agents ?? []).join(', ') || '(no agents)'}`;
    case 'snapshot.held':
      return `snapshot v${e.version} held: ${e.reason ?? ''}`;
    case 'alert':
    case 'alert.resolved': {
      // A lookalike's message names both agents and both origins; its kind is said as what it means.
      const kind = e.kind === 'lookalike' ? 'looks like an earlier agent of another origin' : e.kind === 'rollout-rolled-back' ? 'staged rollout stopped' : e.kind;
      // The alert's own message starts with "resolved: " (logs read it alone); the views say
      // "resolved" once, in their badge or prefix.
      return `${kind}: ${e.type === 'alert' ? (e.message ?? '') : (e.message ?? '').replace(/^resolved:\s*/, '')}`;
    }
    case 'routing.evaluated':
      return routingSentence(e);
    case 'session.pinned':
      return `session ${e.sessionId ?? ''} pinned to snapshot ${shortDigest(e.digest)}`;
    case 'session.upgraded':
      return `session ${e.sessionId ?? ''} moved from snapshot ${shortDigest(e.previousDigest)} to ${shortDigest(e.digest)}`;
    case 'session.ended':
      return `session ${e.sessionId ?? ''} ended (it was on snapshot ${shortDigest(e.digest)})`;
    case 'session.expired':
      return `session ${e.sessionId ?? ''} idled past its timeout: its pin and history were dropped`;
    case 'session.restarted':
      return `session ${e.sessionId ?? ''} came back after expiring and began anew on snapshot ${shortDigest(e.digest)}`;
    case 'tree.built':
      return `agent tree built for snapshot ${shortDigest(e.digest)}`;
    case 'tree.evicted':
      return `agent tree of snapshot ${shortDigest(e.digest)} dropped: no session or current snapshot needs it`;
    case 'catalog.read': {
      const why = e.reason !== undefined ? `: ${e.code ?? ''} ${e.reason}` : '';
      return `source ${e.source ?? ''} read the AI Catalog ${e.url ?? ''} (${e.outcome ?? 'read'}, ${e.entries ?? 0} entries)${why}`;
    }
    case 'service.started': {
      const r = e.restored ?? { version: 0, pins: 0, alerts: 0 };
      if (!restarted(e)) return `the service started (process ${e.replica ?? ''}) on an empty store`;
      return `the service came back (process ${e.replica ?? ''}${e.previousReplica ? ` after ${e.previousReplica}` : ''}): snapshot v${r.version}, ${plural(r.pins, 'pinned session')} and ${plural(r.alerts, 'open alert')} carried over, not raised again`;
    }
    case 'replica.leader':
      return `${e.replica ?? 'a replica'} leads now (epoch ${e.epoch ?? 0})${e.previousLeader ? `, taking over from ${e.previousLeader}` : ''}; ${plural(e.alerts ?? 0, 'open alert')} carried over`;
    case 'api.action':
      return actionSentence(e);
    case 'config.reloaded':
      return `configuration applied live (${RELOAD_TRIGGER[e.trigger ?? ''] ?? 'reload'}): ${(e.changed ?? []).join(', ') || 'no setting changed'}; file sha256 ${(e.sha256 ?? '').slice(0, 12)}`;
    case 'config.refused':
      return `configuration refused (${RELOAD_TRIGGER[e.trigger ?? ''] ?? 'reload'}), the running one stays: ${(e.problems ?? []).join('; ')}`;
    default:
      if (e.type.startsWith('rollout.')) return rolloutSentence(e);
      return e.type;
  }
}

/** @type {Record<string, string>} */
const RELOAD_TRIGGER = { signal: 'SIGHUP', api: 'POST /api/config/reload', watch: 'the file changed' };

/** @type {Record<string, string>} */
const ACTION_WORD = {
  refresh: 'refreshed',
  confirm: 'confirmed',
  'session.end': 'ended',
  'session.upgrade': 'upgraded',
  inspect: 'inspected',
  'config.reload': 'reloaded',
  'rollout.hold': 'held',
  'rollout.resume': 'resumed',
  'rollout.promote': 'promoted',
  'rollout.rollback': 'rolled back',
};

/**
 * Who acted through the API, as a person reads it: a person's name (or `sub`) and role, the
 * admin token, or anyone on an open loopback service.
 * @param {DiscoveryEvent['actor']} actor
 */
function actorName(actor) {
  if (actor?.kind === 'person') return `${actor.name ?? actor.sub ?? 'a person'}${actor.sub !== undefined && actor.name !== undefined && actor.name !== actor.sub ? ` (${actor.sub})` : ''}, ${actor.role ?? 'no role'}`;
  if (actor?.kind === 'admin-token') return 'the admin token';
  return 'an anonymous caller (loopback, no tokens)';
}

/**
 * An action taken through the API: who did what.
 * @param {DiscoveryEvent} e
 */
function actionSentence(e) {
  const who = actorName(e.actor);
  const at = e.version !== undefined ? ` (snapshot v${e.version} ${shortDigest(e.digest)})` : '';
  switch (e.action) {
    case 'refresh':
      return `${who} asked for a discovery pass now${at}`;
    case 'confirm':
      return `${who} confirmed the held removal${at}`;
    case 'session.end':
      return `${who} ended session ${e.sessionId ?? ''}`;
    case 'session.upgrade':
      return `${who} moved session ${e.sessionId ?? ''} to snapshot ${shortDigest(e.digest)}`;
    case 'inspect':
      return `${who} ran an inspection`;
    case 'config.reload':
      return `${who} asked for a configuration reload (POST /api/config/reload)`;
    case 'rollout.hold':
      return `${who} held the rollout of snapshot ${shortDigest(e.digest)} at its share`;
    case 'rollout.resume':
      return `${who} resumed the rollout of snapshot ${shortDigest(e.digest)}`;
    case 'rollout.promote':
      return `${who} promoted snapshot ${shortDigest(e.digest)} (the rollout's candidate)`;
    case 'rollout.rollback':
      return `${who} rolled back the rollout of snapshot ${shortDigest(e.digest)}`;
    default:
      return `${who}: ${e.action ?? 'an action'}`;
  }
}

/**
 * A routing check as a person reads it: the figure the CLI prints (accuracy over the labelled
 * cases counted), the minimum, and what the gate did.
 * @param {DiscoveryEvent} e
 */
function routingSentence(e) {
  const pct = (/** @type {number | undefined} */ x) => `${Math.round((x ?? 0) * 1000) / 10}%`;
  const figure = `${pct(e.accuracy)} of ${num(e.evaluated ?? 0)} labelled case${e.evaluated === 1 ? '' : 's'} routed right (minimum ${pct(e.minAccuracy)})`;
  const verdict = e.held ? `snapshot v${e.version} held back` : e.passed ? `snapshot v${e.version} may be published` : `below the minimum, but snapshot v${e.version} was not held back (the gate is off, it is the first snapshot, or an operator confirmed it)`;
  return `routing check: ${figure}; ${verdict}`;
}

/**
 * Whether an event is cache chatter (never journaled; counted per endpoint instead): requests,
 * fresh hits, 304s, unchanged bytes, stale serving, failures and backoff. The same rule as the
 * service's journal (packages/store/src/journal.ts).
 * @param {DiscoveryEvent} e
 */
export function isChatter(e) {
  if (e.type === 'card.fetch' || e.type === 'card.backoff') return true;
  return e.type === 'card.result' && e.outcome !== 'changed' && e.outcome !== 'invalid';
}

/**
 * A short name for an endpoint base URL: the host and port, with the path when it has one.
 * @param {string} baseUrl
 */
export function endpointLabel(baseUrl) {
  try {
    const u = new URL(baseUrl);
    return `${u.host}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return baseUrl;
  }
}

/**
 * The interface a client here calls, in words: binding, URL, A2A version and tenant.
 * @param {import('./types.js').ChosenInterfaceJson} ci
 */
export function interfaceText(ci) {
  return `${ci.binding} ${ci.url} · A2A ${ci.protocolVersion} · ${ci.tenant !== undefined ? `tenant ${ci.tenant}` : 'no tenant'}`;
}

/**
 * A card's security verdict as a badge: its tone and word (`open`, `satisfied`, `unauthorized`).
 * @param {'none' | 'satisfied' | 'unsatisfiable'} status
 */
export function securityBadge(status) {
  return status === 'unsatisfiable' ? { tone: 'o-failed', text: 'unauthorized' } : status === 'satisfied' ? { tone: 'o-good', text: 'satisfied' } : { tone: 'o-info', text: 'open' };
}
