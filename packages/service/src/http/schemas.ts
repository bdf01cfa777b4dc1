/**
 * The JSON shapes of the HTTP API, in zod, for the route declarations (route.ts) and so for the
 * OpenAPI document generated from them (`GET /openapi.json`, `docs/openapi.json`). A shape names
 * what a client relies on; objects stay open (`looseObject`) where the service adds members over
 * time, so a client generated from the document keeps working when one appears.
 *
 * @module
 */
import { z } from 'zod';
import { ENDPOINT_CAUSES, ENDPOINT_VERDICTS } from 'a2a-discovery';
import type { EndpointCause, EndpointVerdict } from 'a2a-discovery';

/**
 * Every error the API answers (the registry's ARD errors excepted: {@link ArdErrorSchema}), as RFC
 * 9457 problem details (`application/problem+json`, problem.ts): its members, with the stable
 * `error` code and the `message` beside them.
 */
export const ProblemSchema = z
  .looseObject({
    type: z.string().describe('about:blank: the problem is told by `error`'),
    title: z.string().describe("the HTTP status's phrase"),
    status: z.int(),
    detail: z.string().describe('the message'),
    error: z.string().describe('a stable code, e.g. bad-request, forbidden, not-found, payload-too-large, too-many-requests, ERR_SESSION_INVALID'),
    message: z.string(),
    problems: z.array(z.looseObject({ path: z.string(), message: z.string() })).optional().describe('what was wrong, by JSON path'),
  })
  .meta({ id: 'Problem' });

/** The registry's errors, in ARD's shape (Appendix B). */
export const ArdErrorSchema = z.looseObject({ errorCode: z.string(), message: z.string() }).meta({ id: 'ArdError' });

const Iso = z.string().describe('an RFC 3339 time');

const SnapshotAgentSchema = z
  .looseObject({
    localName: z.string(),
    description: z.string(),
    tags: z.array(z.string()),
    cardTags: z.array(z.string()).optional(),
    interfaceRewritten: z.object({ from: z.string(), to: z.string() }).optional(),
    critical: z.boolean(),
    domain: z.string().optional(),
    baseUrl: z.string(),
    sources: z.array(z.string()),
    protocolVersion: z.string(),
    canonicalSha256: z.string(),
    cardKind: z.enum(['public', 'extended']),
    identity: z.string().optional(),
    degraded: z.boolean(),
    stale: z.boolean(),
    card: z.record(z.string(), z.unknown()).describe("the agent's card as verified (third-party text)"),
  })
  .meta({ id: 'SnapshotAgent' });

export const SnapshotSchema = z
  .looseObject({
    version: z.int(),
    digest: z.string(),
    createdAt: Iso,
    domains: z.unknown().optional(),
    routing: z.looseObject({ accuracy: z.number(), minAccuracy: z.number(), passed: z.boolean(), evaluated: z.int() }).nullable(),
    agents: z.array(SnapshotAgentSchema),
  })
  .meta({ id: 'Snapshot' });

const Replica = z.looseObject({ id: z.string(), role: z.string(), epoch: z.number(), leader: z.unknown() }).nullable();

export const SnapshotsSchema = z
  .looseObject({
    replica: Replica,
    current: z.string().nullable(),
    held: z.unknown(),
    history: z.array(z.looseObject({ version: z.int(), digest: z.string(), createdAt: Iso })),
    retained: z.array(z.unknown()),
  })
  .meta({ id: 'SnapshotHistory' });

const SnapshotRef = z.object({ version: z.int(), digest: z.string() });
const Impact = z.enum(['breaking', 'compatible']).describe('breaking: an orchestrator that worked with the old card may fail with the new one (docs/pipeline.md, "What a change breaks")');
const Reasons = z.array(z.string()).describe('one sentence per finding, breaking ones first, e.g. skill "refunds" removed');

const AgentImpactSchema = z.looseObject({ localName: z.string(), impact: Impact, reasons: Reasons }).meta({ id: 'AgentImpact' });

export const DiffSchema = z
  .looseObject({
    from: SnapshotRef.optional().describe('absent: everything in `to` is added'),
    to: SnapshotRef,
    added: z.array(z.string()).describe('local names'),
    removed: z.array(z.string()).describe('local names'),
    changed: z.array(
      z.looseObject({
        localName: z.string(),
        skillsAdded: z.array(z.string()),
        skillsRemoved: z.array(z.string()),
        skillsModified: z.array(z.string()).describe('skills whose tags or modes changed'),
        endpointChanged: z.object({ from: z.array(z.string()), to: z.array(z.string()) }).optional(),
        securityChanged: z.boolean(),
        versionChanged: z.object({ from: z.string(), to: z.string() }).optional(),
        textChanged: z.boolean(),
        impact: Impact,
        reasons: Reasons,
      }),
    ),
    breaking: z.array(z.string()).describe('local names of the agents whose change is breaking (removed agents included), sorted'),
    impacts: z.array(AgentImpactSchema).describe('the verdict on every added, removed and changed agent, sorted by local name'),
  })
  .meta({ id: 'SnapshotDiff' });

export const WhoamiSchema = z
  .looseObject({
    kind: z.string(),
    sub: z.string().optional(),
    name: z.string().nullable().optional(),
    role: z.enum(['viewer', 'operator', 'admin']).nullable(),
    can: z.looseObject({ read: z.boolean(), refresh: z.boolean(), inspect: z.boolean(), chat: z.boolean(), trace: z.boolean(), confirm: z.boolean(), othersSessions: z.boolean() }),
    traceUrl: z.string().optional(),
  })
  .meta({ id: 'Whoami' });

export const HealthzSchema = z.object({ ok: z.literal(true) }).meta({ id: 'Healthz' });
export const ReadyzSchema = z.looseObject({ ready: z.boolean(), version: z.int().optional(), reason: z.string().optional(), draining: z.boolean().optional() }).meta({ id: 'Readyz' });

/** Every endpoint's one verdict, with its cause in the vocabulary of docs/vocabulary.md. */
const EndpointStateSchema = z
  .looseObject({
    verdict: z.enum(Object.keys(ENDPOINT_VERDICTS) as [EndpointVerdict, ...EndpointVerdict[]]).describe('docs/vocabulary.md, "Verdicts"'),
    reason: z.string().describe('why, in a sentence naming the cause (a URL, a JSON path, a digest, a status)'),
    cause: z.enum(Object.keys(ENDPOINT_CAUSES) as [EndpointCause, ...EndpointCause[]]).optional().describe('docs/vocabulary.md, "Causes": set when a refusal, a failure or the matcher explains the verdict'),
    since: z.number().describe('epoch ms when the endpoint entered this verdict'),
  })
  .meta({ id: 'EndpointState' });

export const EndpointsSchema = z
  .looseObject({
    endpoints: z.array(z.looseObject({ baseUrl: z.string(), sources: z.array(z.string()), names: z.array(z.string()), admitted: z.boolean(), state: EndpointStateSchema })),
    servedBy: z.string().optional(),
  })
  .meta({ id: 'Endpoints' });

/** `GET /api/endpoints/card`'s query. */
export const CardQuerySchema = z.object({ url: z.string({ error: 'query parameter url is required' }).min(1, 'query parameter url is required').describe("the endpoint's base URL") });
/** `GET /api/diff`'s query. */
export const DiffQuerySchema = z.object({ from: z.string().optional().describe('a digest; absent: everything is new'), to: z.string().optional().describe('a digest; default the current snapshot') });
/** `GET /api/journal`'s query (its values checked by parseJournalQuery, telemetry/journal.ts). */
export const JournalQuerySchema = z.object({ before: z.string().optional(), limit: z.string().optional(), types: z.string().optional() });
/** `GET /api/activity`'s query (its values checked by parseActivityQuery, telemetry/journal.ts). */
export const ActivityQuerySchema = z.object({ from: z.string().optional(), bucketMs: z.string().optional(), limit: z.string().optional(), after: z.string().optional() });
export const CachedCardSchema = z.looseObject({}).meta({ id: 'CachedCard' });
export const SourcesSchema = z.looseObject({ sources: z.array(z.looseObject({})) }).meta({ id: 'Sources' });

export const SessionsSchema = z
  .looseObject({
    sessions: z.array(z.looseObject({ sessionId: z.string(), owned: z.boolean() })),
    others: z.int(),
    builtDigests: z.array(z.string()),
    retained: z.array(z.unknown()),
  })
  .meta({ id: 'Sessions' });

/** `GET /api/events`'s query. */
export const EventsQuerySchema = z.object({
  since: z
    .string()
    .regex(/^\d{1,15}$/, { error: (i) => `query parameter since must be a non-negative integer (an event's seq), got ${JSON.stringify(String(i.input).slice(0, 40))}` })
    .optional()
    .describe("the seq after which events are answered (default: from the oldest kept)"),
});
export const EventsSchema = z.looseObject({ events: z.array(z.looseObject({ seq: z.int(), type: z.string() })) }).meta({ id: 'Events' });
export const JournalPageSchema = z.looseObject({ streamSeq: z.number() }).meta({ id: 'JournalPage' });
export const ActivitySchema = z.looseObject({}).meta({ id: 'Activity' });

export const ReloadSchema = z.looseObject({ applied: z.literal(true), sha256: z.string(), changed: z.array(z.string()), version: z.int() }).meta({ id: 'ReloadApplied' });
export const PublishedSchema = z.looseObject({ version: z.int(), digest: z.string().nullable() }).meta({ id: 'Published' });
export const ConfirmedSchema = z.looseObject({ confirmed: z.unknown(), version: z.int(), digest: z.string().nullable(), held: z.unknown() }).meta({ id: 'Confirmed' });

const CHAT_BODY = 'a JSON body {"message": "...", "sessionId"?: "..."} is required';
export const ChatRequestSchema = z
  .looseObject({
    message: z.string({ error: CHAT_BODY }).refine((m) => m.trim() !== '', CHAT_BODY).describe('the user message (at most 4,000 characters are used)'),
    sessionId: z.unknown().optional().describe('continue this session (a string of the session id pattern); omit to start one'),
    snapshot: z.string({ error: 'snapshot must be a retained snapshot digest (a string)' }).optional().describe("a new session's snapshot (a retained digest)"),
  })
  .meta({ id: 'ChatRequest' });
export const ChatReplySchema = z.looseObject({ sessionId: z.string(), digest: z.string(), reply: z.string().optional() }).meta({ id: 'ChatReply' });
export const SessionUpgradeSchema = z.looseObject({}).meta({ id: 'SessionUpgrade' });
export const UpgradeRequestSchema = z
  .looseObject({ force: z.boolean({ error: 'force must be true or false' }).optional().describe('move the session even when an agent it used left') })
  .meta({ id: 'UpgradeRequest' });
export const EndedSchema = z.object({ ended: z.literal(true) }).meta({ id: 'SessionEnded' });

export const TraceSchema = z.looseObject({}).meta({ id: 'Trace' });
const InlineJson = z.union([z.string(), z.looseObject({})], { error: 'must be the JSON text or the JSON object' });
export const InspectRequestSchema = z
  .looseObject({
    url: z.string({ error: '"url" must be a string' }).optional().describe('a base or card URL'),
    card: InlineJson.optional().describe('an agent card (JSON text or object)'),
    catalog: InlineJson.optional().describe('an AI Catalog (JSON text or object)'),
  })
  .meta({ id: 'InspectRequest' });
export const InspectResultSchema = z.looseObject({}).meta({ id: 'InspectResult' });

/** A JSON object body whose members the route reads itself. */
export const AnyObjectSchema = z.looseObject({});

const RolloutState = z
  .looseObject({
    id: z.string(),
    candidate: z.string(),
    baseline: z.string(),
    step: z.int(),
    share: z.number(),
    status: z.enum(['running', 'held', 'promoted', 'rolled-back', 'superseded', 'withdrawn']),
    changes: z.array(z.looseObject({ localName: z.string(), impact: z.enum(['breaking', 'compatible']), reasons: z.array(z.string()), version: z.string() })),
    decisions: z.array(z.looseObject({ at: z.number(), action: z.string(), by: z.string(), reason: z.string(), step: z.int(), share: z.number() })),
  })
  .meta({ id: 'RolloutState' });
export const RolloutSchema = z
  .looseObject({
    enabled: z.boolean(),
    active: RolloutState.nullable(),
    figures: z.looseObject({ candidate: z.record(z.string(), z.unknown()), baseline: z.record(z.string(), z.unknown()), stepTurns: z.int() }).nullable(),
    history: z.array(RolloutState),
    quarantined: z.array(z.looseObject({ localName: z.string(), version: z.string() })),
  })
  .meta({ id: 'Rollouts' });
export const RolloutDecidedSchema = z.looseObject({ decision: z.enum(['hold', 'resume', 'promote', 'rollback']), rollout: RolloutState, current: z.string().nullable() }).meta({ id: 'RolloutDecided' });
export const CallHealthSchema = z
  .looseObject({ agents: z.array(z.looseObject({ baseUrl: z.string(), agent: z.string(), consecutiveFailures: z.int(), all: z.looseObject({ calls: z.int(), errors: z.int(), errorRate: z.number() }) })) })
  .meta({ id: 'CallHealth' });
