/**
 * The JSON shapes of the HTTP API, in zod, for the route declarations (route.ts) and so for the
 * OpenAPI document generated from them (`GET /openapi.json`, `docs/openapi.json`). A shape names
 * what a client relies on; objects stay open (`looseObject`) where the service adds members over
 * time, so a client generated from the document keeps working when one appears.
 *
 * @module
 */
import { z } from 'zod';

/** Every error the API answers (the registry's ARD errors excepted: {@link ArdErrorSchema}): a stable `error` code and a message. */
export const ProblemSchema = z
  .looseObject({
    error: z.string().describe('a stable code, e.g. bad-request, forbidden, not-found, payload-too-large, too-many-requests'),
    message: z.string().optional(),
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

export const DiffSchema = z.looseObject({}).meta({ id: 'SnapshotDiff' });

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

export const EndpointsSchema = z
  .looseObject({
    endpoints: z.array(z.looseObject({ baseUrl: z.string(), sources: z.array(z.string()), names: z.array(z.string()), admitted: z.boolean(), state: z.looseObject({ verdict: z.string() }) })),
    servedBy: z.string().optional(),
  })
  .meta({ id: 'Endpoints' });

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

export const EventsSchema = z.looseObject({ events: z.array(z.looseObject({ seq: z.int(), type: z.string() })) }).meta({ id: 'Events' });
export const JournalPageSchema = z.looseObject({ streamSeq: z.number() }).meta({ id: 'JournalPage' });
export const ActivitySchema = z.looseObject({}).meta({ id: 'Activity' });

export const ReloadSchema = z.looseObject({ applied: z.literal(true), sha256: z.string(), changed: z.array(z.string()), version: z.int() }).meta({ id: 'ReloadApplied' });
export const PublishedSchema = z.looseObject({ version: z.int(), digest: z.string().nullable() }).meta({ id: 'Published' });
export const ConfirmedSchema = z.looseObject({ confirmed: z.unknown(), version: z.int(), digest: z.string().nullable(), held: z.unknown() }).meta({ id: 'Confirmed' });

export const ChatRequestSchema = z
  .looseObject({
    message: z.string().describe('the user message (at most 4,000 characters are used)'),
    sessionId: z.string().optional().describe('continue this session; omit to start one'),
    snapshot: z.string().optional().describe("a new session's snapshot (a retained digest)"),
  })
  .meta({ id: 'ChatRequest' });
export const ChatReplySchema = z.looseObject({ sessionId: z.string(), digest: z.string(), reply: z.string().optional() }).meta({ id: 'ChatReply' });
export const SessionUpgradeSchema = z.looseObject({}).meta({ id: 'SessionUpgrade' });
export const EndedSchema = z.object({ ended: z.literal(true) }).meta({ id: 'SessionEnded' });

export const TraceSchema = z.looseObject({}).meta({ id: 'Trace' });
export const InspectRequestSchema = z
  .looseObject({ url: z.string().optional(), card: z.string().optional(), catalog: z.string().optional() })
  .meta({ id: 'InspectRequest' });
export const InspectResultSchema = z.looseObject({}).meta({ id: 'InspectResult' });

/** A JSON object body whose members the route reads itself. */
export const AnyObjectSchema = z.looseObject({});
