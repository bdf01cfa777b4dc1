/**
 * Span names and attribute keys: the OpenTelemetry conventions where they exist (HTTP, URL,
 * server, error; the GenAI A2A client span of `semantic-conventions-genai` docs/gen-ai/a2a.md),
 * and our own `a2a_discovery.*` namespace where they do not (discovery itself has no convention
 * yet). docs/observability.md lists every span with its attributes; a new one is added to both.
 *
 * Rules for every attribute value: no secret ever (credential headers, tokens, session secrets,
 * URL user info or query values: {@link spanUrl}); third-party text (card names, descriptions) is
 * bounded by {@link spanText}.
 *
 * @module
 */
import { redactUrl } from '../rules/redaction.js';

/** Span names. The A2A client span is named after the A2A method (`SendMessage`, ...), per the convention. */
export const SPAN = {
  /** One discovery cycle of the control loop (a root span: a new trace per cycle). */
  cycle: 'a2a_discovery.cycle',
  /** One source listing (refresh) of one source. */
  sourceList: 'a2a_discovery.source.list',
  /** One card fetch that reaches the network (or is refused before it), with its cache decision. */
  cardFetch: 'a2a_discovery.card.fetch',
  /** Validation of fetched card bytes (schema, limits, digest pin). */
  cardValidate: 'a2a_discovery.card.validate',
  /** Verification of a card's JWS signatures. */
  cardVerify: 'a2a_discovery.card.verify',
  /** Matching the admitted cards against the needs. */
  match: 'a2a_discovery.match',
  /** Building, gating and publishing (or holding) a snapshot. */
  publish: 'a2a_discovery.snapshot.publish',
  /** Routing evaluation of a candidate snapshot. */
  routingEvaluate: 'a2a_discovery.routing.evaluate',
  /** One read of an AI Catalog document. */
  catalogRead: 'a2a_discovery.catalog.read',
  /** One DNS question of the DNS source, every attempt and the TCP retry of a truncated answer included (client). */
  dnsQuery: 'a2a_discovery.dns.query',
  /** Building the ADK agent tree of one snapshot digest. */
  treeBuild: 'a2a_discovery.tree.build',
  /** One chat turn on a session pinned to a snapshot (the service's `/api/chat`, the library's session runner). */
  chatTurn: 'a2a_discovery.chat.turn',
  /** One decision of a staged rollout: started, advanced, held, resumed, promoted, rolled back, superseded, withdrawn. */
  rolloutDecision: 'a2a_discovery.rollout.decision',
} as const;

/** A2A method names (GenAI A2A conventions): the name of an A2A client span and its `a2a.method.name`. */
export const A2A_METHOD = {
  sendMessage: 'SendMessage',
  sendStreamingMessage: 'SendStreamingMessage',
  getTask: 'GetTask',
  cancelTask: 'CancelTask',
  listTasks: 'ListTasks',
  getExtendedAgentCard: 'GetExtendedAgentCard',
  subscribeToTask: 'SubscribeToTask',
} as const;

/** Attribute keys. Conventional ones first, then ours. */
export const ATTR = {
  // OpenTelemetry general conventions (stable).
  urlFull: 'url.full',
  serverAddress: 'server.address',
  serverPort: 'server.port',
  httpMethod: 'http.request.method',
  httpStatus: 'http.response.status_code',
  /** The service's HTTP server spans: the matched route template (`/api/sessions/:id`), and the path without its query. */
  httpRoute: 'http.route',
  urlPath: 'url.path',
  errorType: 'error.type',
  // GenAI A2A client span (development status).
  a2aMethod: 'a2a.method.name',
  a2aProtocolVersion: 'a2a.protocol.version',
  a2aTenant: 'a2a.tenant',
  a2aTaskId: 'a2a.task.id',
  a2aTaskState: 'a2a.task.state',
  a2aMessageId: 'a2a.message.id',
  genAiAgentName: 'gen_ai.agent.name',
  genAiAgentVersion: 'gen_ai.agent.version',
  genAiAgentDescription: 'gen_ai.agent.description',
  genAiConversationId: 'gen_ai.conversation.id',
  // Ours.
  endpoint: 'a2a_discovery.endpoint',
  source: 'a2a_discovery.source',
  sourceKind: 'a2a_discovery.source.kind',
  records: 'a2a_discovery.records',
  /** How a step ended, where no conventional attribute says it (`ok`, `failed`; a publication: `published`, `unchanged`, `held`, `deferred`, `refused`). */
  outcome: 'a2a_discovery.outcome',
  /** The card cache's decision: hit, revalidated, changed, unchanged, stale, invalid, failed, refused. */
  cacheDecision: 'a2a_discovery.cache.decision',
  conditional: 'a2a_discovery.cache.conditional',
  bytes: 'a2a_discovery.card.bytes',
  cardSha256: 'a2a_discovery.card.sha256',
  signature: 'a2a_discovery.card.signature',
  localName: 'a2a_discovery.agent.local_name',
  snapshotVersion: 'a2a_discovery.snapshot.version',
  snapshotDigest: 'a2a_discovery.snapshot.digest',
  previousDigest: 'a2a_discovery.snapshot.previous_digest',
  agentsAdded: 'a2a_discovery.snapshot.agents_added',
  agentsRemoved: 'a2a_discovery.snapshot.agents_removed',
  agentCount: 'a2a_discovery.snapshot.agents',
  held: 'a2a_discovery.snapshot.held',
  heldReason: 'a2a_discovery.snapshot.held_reason',
  /** A staged rollout: its id, the decision, the share of new sessions (percent) after it, and the candidate. */
  rolloutId: 'a2a_discovery.rollout.id',
  rolloutAction: 'a2a_discovery.rollout.action',
  rolloutShare: 'a2a_discovery.rollout.share',
  rolloutCandidate: 'a2a_discovery.rollout.candidate_digest',
  rolloutReason: 'a2a_discovery.rollout.reason',
  sessionId: 'a2a_discovery.session.id',
  /** The agents that produced events in a chat turn, in order (the root's transfers). */
  chatAgents: 'a2a_discovery.chat.agents',
  /** The agent a failed chat turn called (its local name): the one whose error the turn reports. */
  chatFailedAgent: 'a2a_discovery.chat.failed_agent',
  due: 'a2a_discovery.cycle.due',
  /** Sources polled in a cycle. */
  dueSources: 'a2a_discovery.cycle.due_sources',
  /** Admitted endpoints in a cycle. */
  endpoints: 'a2a_discovery.cycle.endpoints',
  /** Fresh cache hits in a cycle (a hit has no span of its own). */
  cacheHits: 'a2a_discovery.cycle.cache_hits',
  agentsSelected: 'a2a_discovery.match.selected',
  agentsUnsuitable: 'a2a_discovery.match.unsuitable',
  agentsExcluded: 'a2a_discovery.match.excluded',
  /** Entries of an AI Catalog document read. */
  catalogEntries: 'a2a_discovery.catalog.entries',
  /** Problems found in a card (their text is third-party data: only the count is recorded). */
  problems: 'a2a_discovery.card.problems',
  routingAccuracy: 'a2a_discovery.routing.accuracy',
  routingPassed: 'a2a_discovery.routing.passed',
  /** The DNS question's name and type, as OpenTelemetry's DNS conventions name the first. */
  dnsQuestionName: 'dns.question.name',
  dnsQuestionType: 'a2a_discovery.dns.question.type',
  /** The answer: its rcode, whether the resolver validated it (AD bit), whether it came over TCP. */
  dnsRcode: 'a2a_discovery.dns.rcode',
  dnsAuthenticated: 'a2a_discovery.dns.authenticated',
  dnsTcp: 'a2a_discovery.dns.tcp',
  dnsAttempts: 'a2a_discovery.dns.attempts',
} as const;

const MAX_TEXT = 256;

/** Third-party text (a card's name or description) bounded for an attribute: at most 256 characters. */
export function spanText(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  return text.length <= MAX_TEXT ? text : `${text.slice(0, MAX_TEXT - 1)}…`;
}

/**
 * A URL as a span may record it: the one redaction ({@link redactUrl}: user info and every query
 * value replaced by `REDACTED`), without its fragment. Unparseable text gives `undefined` (the
 * attribute is then left out).
 *
 * @example spanUrl('https://u:p@x.example/a?key=1#f') // 'https://REDACTED@x.example/a?key=REDACTED'
 */
export function spanUrl(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  u.hash = '';
  return redactUrl(u);
}

/** `server.address` and `server.port` of a URL (the port defaulted from the scheme), or nothing. */
export function serverOf(url: string): { 'server.address'?: string; 'server.port'?: number } {
  try {
    const u = new URL(url);
    const port = u.port !== '' ? Number(u.port) : u.protocol === 'https:' ? 443 : u.protocol === 'http:' ? 80 : undefined;
    return { 'server.address': u.hostname.replace(/^\[|\]$/g, ''), 'server.port': port };
  } catch {
    return {};
  }
}

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

/**
 * An error as a span may record it (`SpanScope.fail`): its name and `code` kept, every URL in its
 * message written as {@link spanUrl} writes it (no user info, no query value). Error messages
 * name the URL they are about, and a card URL may carry an API key.
 */
export function spanError(error: unknown): Error {
  const err = error instanceof Error ? error : new Error(String(error));
  const message = err.message.replace(URL_IN_TEXT, (u) => spanUrl(u) ?? 'REDACTED-URL');
  if (message === err.message) return err;
  const out = new Error(message);
  out.name = err.name;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') (out as Error & { code?: string }).code = code;
  return out;
}
