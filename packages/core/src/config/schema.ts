/**
 * Internal: the zod schema of `discovery.yaml`, one field at a time. Every object is strict
 * (unknown keys are errors), every default is here, and every field-level rule carries its own
 * sentence. Rules that relate two fields live in cross-checks.ts.
 */
import { OIDC_ALGORITHMS, SIGNATURE_ALGORITHMS } from '../rules/jws.js';
import { isIP } from 'node:net';
import { z } from 'zod';
import { canonicalMode } from '../card/index.js';
import { DRAIN_DEFAULTS, HEAP_DEFAULTS, OIDC_DEFAULTS } from '../rules/defaults.js';
import { CACHE_DEFAULTS, CATALOG_DEFAULTS, HEALTH_DEFAULTS, LOOP_DEFAULTS, REPLICA_DEFAULTS, RETENTION_DEFAULTS, ROLLOUT_DEFAULTS, ROUTING_DEFAULTS, SESSION_DEFAULTS, SOURCE_DEFAULTS } from '../rules/defaults.js';
import { UPSTREAM_DEFAULTS } from '../rules/defaults.js';
import { ARD_SOURCE_DEFAULTS, FEDERATION_DEFAULTS } from '../rules/defaults.js';
import { GOOGLE_AGENT_REGISTRY_DEFAULTS } from '../rules/defaults.js';
import { DNS_SOURCE_DEFAULTS } from '../rules/defaults.js';
import { dnsAidLabelProblem, dnsDomainProblem, parseDnsServer } from '../rules/dns-aid.js';
import { normalizeDomain } from '../rules/domains.js';
import { localNameProblem, sourceIdProblem, tagProblem } from '../rules/ids.js';
import { normalizeOrigin } from '../rules/origins.js';
import { parseStoreSpec } from '../rules/store-spec.js';
import { DEFAULT_MAX_CARD_BYTES, DEFAULT_MAX_CATALOG_BYTES } from '../rules/limits.js';
import { impossibleBaseUrl, impossibleCardUrl, impossibleUrl } from '../rules/urls.js';
import { FETCHER_HEADERS, HTTP_HEADER_NAME, agentHeaderNameProblem, agentHeaderValueProblem, tenantProblem } from '../rules/headers.js';
import { describeValue } from './messages.js';

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?)*\.?$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/;



/** A string matching `pattern`, with one sentence saying what was expected. */
function matching(pattern: RegExp, what: string): z.ZodString {
  return z.string().regex(pattern, { error: (issue) => `must be ${what}, got ${describeValue(issue.input)}` });
}

/** A string that `why` has nothing against. */
function checked(why: (value: string) => string | undefined): z.ZodType<string, string> {
  return z.string().superRefine((value, ctx) => {
    const message = why(value);
    if (message !== undefined) ctx.addIssue({ code: 'custom', message, input: value });
  });
}

function text(max: number): z.ZodType<string, string> {
  return checked((value) => {
    if (value.trim() === '') return 'must not be empty';
    if (value.length > max) return `is ${value.length} characters long; the limit is ${max}`;
    return undefined;
  });
}

const tag = checked(tagProblem);
const localName = checked(localNameProblem);

const envName = matching(ENV_NAME, 'an environment variable name such as A2A_DISCOVERY_TOKEN');
const filePath = text(4096);
const sourceId = checked(sourceIdProblem);
const positiveInt = z.int().positive();
const nonNegativeInt = z.int().nonnegative();

/** The problem of a rule that returns the normalized value or `{ problem }`. */
function problemOf(normalized: string | { problem: string }): string | undefined {
  return typeof normalized === 'string' ? undefined : normalized.problem;
}

const origin = checked((value) => problemOf(normalizeOrigin(value)));

const mode = checked((value) =>
  canonicalMode(value) === undefined ? `${describeValue(value)} is neither a media type (type/subtype) nor a known short form (text, json, data, file, image, audio, video)` : undefined,
);

const serverHost = checked((value) =>
  isIP(value) !== 0 || HOST_NAME.test(value) ? undefined : `must be a host name or IP address to listen on, such as 127.0.0.1, got ${describeValue(value)}`,
);

const domain = checked((value) => problemOf(normalizeDomain(value)));

const tenantHost = checked((value) => {
  const wildcard = value.startsWith('*.');
  const bare = wildcard ? value.slice(2) : value;
  if (HOST_NAME.test(bare) && (!wildcard || bare.includes('.'))) return undefined;
  return `must be a host name such as "agents.example.com" or "*.example.com", got ${describeValue(value)}`;
});

const algorithm = z.string().superRefine((value, ctx) => {
  let message: string | undefined;
  if (value === 'none') message = '"none" means unsigned; it cannot be allowed';
  else if (/^HS\d+$/.test(value)) message = `"${value}" uses a shared secret, so anyone able to verify could also sign; it cannot be allowed`;
  else if (!(SIGNATURE_ALGORITHMS as readonly string[]).includes(value)) message = `must be one of ${SIGNATURE_ALGORITHMS.join(', ')}; got ${describeValue(value)}`;
  if (message !== undefined) ctx.addIssue({ code: 'custom', message, input: value });
});

const headerName = checked((value) => {
  if (!HTTP_HEADER_NAME.test(value)) return `must be an HTTP header name such as "authorization", got ${describeValue(value)}`;
  if (FETCHER_HEADERS.has(value.toLowerCase())) return `"${value}" is set by the fetcher itself and cannot be a credential header`;
  return undefined;
});

const headerPrefix = checked((value) => (CONTROL.test(value) ? 'must not contain line breaks or control characters' : undefined));

const labelSelector = checked((value) =>
  value.trim() === '' || value.length > 1024 || CONTROL.test(value) ? `must be a label selector such as "a2a.example.com/agent=true", got ${describeValue(value)}` : undefined,
);

// ---------------------------------------------------------------------------------------------
// Sections

const serverLimits = z.strictObject({
  maxBodyBytes: positiveInt.default(64 * 1024),
  maxTraceBodyBytes: positiveInt.default(256 * 1024),
  maxInspectBodyBytes: positiveInt.default(256 * 1024),
  maxInspections: positiveInt.default(2),
  inspectTimeoutMs: positiveInt.default(20_000),
  inspectMaxEntries: positiveInt.default(5_000),
  inspectMaxDocuments: positiveInt.default(10),
  inspectMaxRequests: positiveInt.default(72),
  inspectMaxAnswerBytes: positiveInt.default(512 * 1024),
  maxStreams: positiveInt.default(64),
  maxStreamsPerClient: positiveInt.default(8),
  streamQueueEvents: positiveInt.default(512),
  streamStallMs: positiveInt.default(30_000),
  maxReplayEvents: positiveInt.default(256),
  headersTimeoutMs: positiveInt.default(10_000),
  requestTimeoutMs: positiveInt.default(30_000),
  keepAliveTimeoutMs: positiveInt.default(5_000),
  // Fair shares: per client (see docs/security.md), beside the global caps.
  maxInspectionsPerClient: positiveInt.default(1),
  maxSessionsPerClient: positiveInt.default(32),
  maxTurnsPerClient: positiveInt.default(2),
  // Fair pools (docs/security.md "Fair pools"): chat turns running at once, all clients together;
  // requests waiting for a slot of a full pool (inspections, turns, searches), and for how long.
  maxTurns: positiveInt.default(64),
  queueLength: z.int().min(0).max(100_000).default(64),
  queueWaitMs: positiveInt.default(10_000),
  // Endpoints whose cache activity is counted at once (the oldest counted goes beyond).
  activityEndpoints: positiveInt.default(10_000),
  // A follower replica shows the leader's lists: how long it waits for them, and how large they may be.
  leaderTimeoutMs: positiveInt.default(5_000),
  leaderMaxBytes: positiveInt.default(32 * 1024 * 1024),
});

/** The service's limits when the configuration sets none: the one place their defaults live. */
export const DEFAULT_SERVER_LIMITS = Object.freeze(serverLimits.parse({}));

/** A `Cache-Control` response header value: comma-separated directives (`max-age=60`, `public`, `no-cache`). */
const cacheControl = checked((value) =>
  value.length <= 256 && !CONTROL.test(value) && /^\s*[A-Za-z][A-Za-z-]*(=([0-9]+|[A-Za-z][A-Za-z-]*|"[^"]*"))?(\s*,\s*[A-Za-z][A-Za-z-]*(=([0-9]+|[A-Za-z][A-Za-z-]*|"[^"]*"))?)*\s*$/.test(value)
    ? undefined
    : `must be a Cache-Control header value such as "max-age=60" or "public, max-age=300" (comma-separated directives, at most 256 characters), got ${describeValue(value)}`,
);

/** `server.catalog`: the service's own AI Catalog at /.well-known/ai-catalog.json (docs/service.md). */
const serverCatalog = z.strictObject({
  enabled: z.boolean().default(false),
  cacheControl: cacheControl.default('max-age=60'),
  hostName: checked((value) => (value.trim() === '' || value.length > 256 || CONTROL.test(value) ? `must be a display name of 1-256 characters without line breaks, got ${describeValue(value)}` : undefined)).default('a2a-discovery'),
  // The ARD registry API's base listed in the catalog (an application/ai-registry+json entry): a path of the service or an absolute http(s) URL.
  registryUrl: checked((value) => {
    if (/^\/(?!\/)[^\s#?]*$/.test(value) && value.length <= 1024) return undefined;
    try {
      const url = new URL(value);
      if ((url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' && url.hash === '') return undefined;
    } catch {
      // fall through
    }
    return `must be a path of the service ("/", "/ard/") or an absolute http(s) URL without credentials or fragment, got ${describeValue(value)}`;
  }).default('/api/registry/'),
  // Exactly one of keyFile and keyEnv: cross-checks. The key itself is read by resolveSecrets.
  signing: z
    .strictObject({
      keyFile: filePath.optional(),
      keyEnv: envName.optional(),
      kid: text(256),
      alg: algorithm.default('ES256'),
    })
    .optional(),
});

/**
 * `server.registry`: the ARD registry API over every admitted card (`/api/registry/search`,
 * `/explore`, `/agents`; docs/registry-api.md), its index bound and its request limits, and its federation.
 */
const serverRegistryPeers = z
  .array(z.strictObject({ url: checked(impossibleUrl), name: text(200).optional() }))
  .max(100)
  .default([]);
const serverRegistryFederation = z.strictObject({
  maxRegistries: z.int().min(1).max(100).default(FEDERATION_DEFAULTS.maxRegistries),
  requestTimeoutMs: z.int().min(100).max(60_000).default(FEDERATION_DEFAULTS.requestTimeoutMs),
  timeoutMs: z.int().min(100).max(60_000).default(FEDERATION_DEFAULTS.timeoutMs),
  maxBytes: z.int().min(1_024).max(16_777_216).default(FEDERATION_DEFAULTS.maxBytes),
});
const serverRegistry = z.strictObject({
  enabled: z.boolean().default(true),
  // Answer the registry routes without a token (viewer otherwise, when a token or people are configured).
  anonymous: z.boolean().default(false),
  // The registry as MCP tools at /api/registry/mcp (search_agents, get_agent, explain_selection; docs/mcp.md).
  mcp: z.boolean().default(true),
  // Entries the index holds; admitted cards beyond it are left out (a metric counts them).
  maxEntries: z.int().min(1).max(1_000_000).default(100_000),
  maxBodyBytes: z.int().min(256).max(1_048_576).default(16 * 1024),
  maxTextLength: z.int().min(1).max(10_000).default(512),
  maxFilterKeys: z.int().min(1).max(64).default(16),
  // Values of one request's filter, every key together.
  maxFilterValues: z.int().min(1).max(1_000).default(64),
  maxFacets: z.int().min(1).max(32).default(16),
  // Distinct terms of one query.text (after tokenizing, lower case): each is one scoring pass.
  maxQueryTerms: z.int().min(1).max(256).default(32),
  // Entries one search or explore considers (its text's hits, or every entry without text): a
  // search keeps its best ones, an explore past it is refused.
  maxCandidates: z.int().min(100).max(1_000_000).default(100_000),
  // Searches (first pages) and explores running at once, all clients together and per client,
  // shared fairly (docs/security.md "Fair pools"); a client under its share waits its turn.
  maxSearches: z.int().min(1).max(1_000).default(4),
  maxSearchesPerClient: z.int().min(1).max(1_000).default(2),
  maxPageSize: z.int().min(1).max(100).default(100),
  maxPageTokenBytes: z.int().min(64).max(4_096).default(512),
  // A page token is honoured this long after its first page (the pinned order of a search).
  pageTokenTtlMs: z.int().min(1_000).max(86_400_000).default(600_000),
  // Searches whose order is pinned at once (the oldest is dropped: its token answers 400).
  maxPinnedSearches: z.int().min(1).max(10_000).default(256),
  // Removals the change feed remembers (tombstones), by count and by age.
  maxTombstones: z.int().min(1).max(1_000_000).default(10_000),
  tombstoneTtlMs: z.int().min(60_000).max(30 * 86_400_000).default(7 * 86_400_000),
  // Federation (docs/registry-api.md "Federation"): peer registries (API bases; https, or http on
  // loopback with allowLoopback, judged by the allowlist in cross-checks) and the bounds of a
  // `federation: auto` search.
  peers: serverRegistryPeers,
  federation: serverRegistryFederation.prefault({}),
});

/** The registry's settings when the configuration sets none. */
export const DEFAULT_REGISTRY_SETTINGS = Object.freeze(serverRegistry.parse({}));

/** An issuer or JWKS URL of `server.oidc`: absolute, http(s); https unless loopback with allowLoopback (cross-checks). */
const oidcUrl = checked((value) => {
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' && url.hash === '' ? undefined : `must be an https URL without credentials or fragment, got ${describeValue(value)}`;
  } catch {
    return `must be an absolute https URL, got ${describeValue(value)}`;
  }
});

/** `server.oidc`: people's bearer tokens from an OIDC provider, and the roles they carry (docs/authentication.md). */
const serverOidc = z.strictObject({
  issuer: oidcUrl,
  audience: z.union([text(256), z.array(text(256)).min(1)]),
  jwksUrl: oidcUrl.optional(),
  rolesClaim: matching(/^[A-Za-z0-9_:-]{1,64}(\.[A-Za-z0-9_:-]{1,64}){0,3}$/, 'a claim name, or a dotted path such as realm_access.roles').default(OIDC_DEFAULTS.rolesClaim),
  roles: z.record(text(128), z.enum(['viewer', 'operator', 'admin'])).refine((r) => Object.keys(r).length > 0, 'map at least one claim value to viewer, operator or admin'),
  clockToleranceMs: z.int().min(0).max(300_000).default(OIDC_DEFAULTS.clockToleranceMs),
  algorithms: z.array(z.enum(OIDC_ALGORITHMS)).min(1).optional(),
  // Bounds of one JWKS or discovery document fetch.
  fetchTimeoutMs: z.int().min(100).max(60_000).default(OIDC_DEFAULTS.fetchTimeoutMs),
  maxBytes: z.int().min(1_024).max(1_048_576).default(OIDC_DEFAULTS.maxBytes),
  // After any fetch of the keys, good or failed, none other before this long (a failing provider is not amplified).
  cooldownMs: z.int().min(1_000).max(3_600_000).default(OIDC_DEFAULTS.cooldownMs),
  // Address ranges besides public unicast where the provider may be reached (an in-cluster provider: "10.0.0.0/8").
  allowCidrs: z.array(z.string()).optional(),
});

/**
 * `server.telemetry.traceUrl`: a trace viewer's URL with `{traceId}` where the trace id goes
 * (`https://jaeger.example/trace/{traceId}`); the dashboard links chat turns and snapshots to it.
 */
const traceUrlTemplate = checked((value) => {
  if (!value.includes('{traceId}')) return `must contain {traceId} where the trace id goes, got ${describeValue(value)}`;
  try {
    const url = new URL(value.replaceAll('{traceId}', '0'.repeat(32)));
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' ? undefined : `must be an http(s) URL without credentials, got ${describeValue(value)}`;
  } catch {
    return `must be an absolute http(s) URL such as "https://jaeger.example/trace/{traceId}", got ${describeValue(value)}`;
  }
});

/** `server.telemetry`: what the dashboard shows of OpenTelemetry (docs/observability.md). */
const serverTelemetry = z.strictObject({
  traceUrl: traceUrlTemplate.optional(),
});

/** An IP address or CIDR range (`10.0.0.0/8`, `fd00::/8`, `192.0.2.7`). */
const addressOrRange = checked((value) => {
  const [addr, bits, extra] = value.split('/');
  const max = isIP(addr ?? '') === 4 ? 32 : isIP(addr ?? '') === 6 ? 128 : 0;
  const ok = max > 0 && extra === undefined && (bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max));
  return ok ? undefined : `must be an IP address or CIDR range such as "10.0.0.0/8" or "fd00::/8", got ${describeValue(value)}`;
});

/** `server.a2a`: the orchestrator as an A2A agent (docs/service.md "The service as an A2A agent"). */
const serverA2a = z.strictObject({
  enabled: z.boolean().default(true),
  name: checked((value) => (value.trim() === '' || value.length > 256 || CONTROL.test(value) ? `must be a name of 1-256 characters without line breaks, got ${describeValue(value)}` : undefined)).default('a2a-discovery'),
  description: checked((value) => (value.trim() === '' || value.length > 2_000 ? `must be a description of 1-2000 characters, got ${describeValue(value)}` : undefined)).default(
    'Routes each question to the agent discovery selected for it (its skills: the routed agents or domains) and answers with that agent’s reply.',
  ),
  // Where clients reach the service: an absolute http(s) origin, optionally with a path prefix.
  publicUrl: checked((value) => {
    try {
      const url = new URL(value);
      if ((url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === '' && url.hash === '' && url.search === '') return undefined;
    } catch {
      // fall through
    }
    return `must be an absolute http(s) URL without credentials, query or fragment (where clients reach the service), got ${describeValue(value)}`;
  }).optional(),
  cacheControl: cacheControl.default('max-age=30'),
  maxTasks: z.int().min(1).max(1_000_000).default(1_000),
  // One more entry in the service's own AI Catalog (server.catalog), at its own card. Off: another
  // a2a-discovery reading the catalog would admit both the agents and this orchestrator routing to them.
  listInCatalog: z.boolean().default(false),
});

/** `server.a2a`'s defaults, for services started without a configuration file. */
export const DEFAULT_A2A_SETTINGS = Object.freeze(serverA2a.parse({}));

/** `server.clients`: who a client is for fair shares and pools (docs/security.md "Fair pools"). */
const serverClients = z.strictObject({
  ipv4Prefix: z.int().min(8).max(32).default(32),
  ipv6Prefix: z.int().min(16).max(128).default(64),
  // Proxies whose X-Forwarded-For is believed (the client: the rightmost address not among them).
  trustedProxies: z.array(addressOrRange).max(256).default([]),
});

const server = z.strictObject({
  host: serverHost.default('127.0.0.1'),
  port: z.int().min(0).max(65535).default(7340), // 0 picks a free port
  tokenEnv: envName.optional(),
  tokenFile: filePath.optional(),
  allowedHosts: z.array(serverHost).default([]),
  allowedOrigins: z.array(origin).default([]),
  limits: serverLimits.prefault({}),
  clients: serverClients.prefault({}),
  catalog: serverCatalog.prefault({}),
  registry: serverRegistry.prefault({}),
  a2a: serverA2a.prefault({}),
  oidc: serverOidc.optional(),
  telemetry: serverTelemetry.prefault({}),
  // On SIGTERM, how long chat turns in flight may take to finish (docs/operations.md "Graceful drain").
  drainTimeoutMs: z.int().min(0).max(3_600_000).default(DRAIN_DEFAULTS.drainTimeoutMs),
  // How far serve's V8 heap may grow past what its last full collection kept, % (docs/operations.md "Memory"); 0: V8's own.
  heapGrowthPercent: z.int().min(0).max(HEAP_DEFAULTS.maxHeapGrowthPercent).default(HEAP_DEFAULTS.heapGrowthPercent),
});

/** An OAuth 2.0 scope token (RFC 6749 §3.3). */
const scopeToken = matching(/^[\x21\x23-\x5b\x5d-\x7e]{1,200}$/, 'an OAuth scope such as "agents.read" (no spaces or quotes)');

const credential = z.strictObject({
  /** static (headers from env or a file), oauth2 (client credentials) or google-id-token. */
  type: z.enum(['static', 'oauth2', 'google-id-token']).default('static'),
  origin,
  header: headerName.default('authorization'),
  prefix: headerPrefix.optional(),
  valueEnv: envName.optional(),
  valueFile: filePath.optional(),
  tokenUrl: text(2048).optional(),
  issuer: text(2048).optional(),
  clientId: text(256).optional(),
  clientSecretEnv: envName.optional(),
  clientSecretFile: filePath.optional(),
  scopes: z.array(scopeToken).optional(),
  audience: text(2048).optional(),
  resource: text(2048).optional(),
  auth: z.enum(['basic', 'post']).optional(),
});

const signatures = z.strictObject({
  mode: z.enum(['off', 'if-present', 'required']).default('if-present'),
  algorithms: z.array(algorithm).min(1).optional(),
  keys: z
    .array(
      z.strictObject({
        kid: text(256),
        jwkFile: filePath,
        origins: z.array(origin).min(1).optional(),
      }),
    )
    .default([]),
});

const vocabularyEntry = z.strictObject({
  tag,
  description: text(1000),
  keywords: z.array(text(100)).optional(),
  examples: z.array(text(1000)).optional(),
});

const need = z.strictObject({
  tag,
  inputModes: z.array(mode).min(1).optional(),
  outputModes: z.array(mode).min(1).optional(),
});

const policies = z.strictObject({
  requireStreaming: z.boolean().default(false),
  tenant: z
    .strictObject({
      providers: z.array(text(256)).min(1).optional(),
      hosts: z.array(tenantHost).min(1).optional(),
    })
    .optional(),
  maxAgents: positiveInt.default(16),
  // A lookalike name of an earlier agent from another origin: flagged, or also excluded (docs/security.md).
  lookalikes: z.enum(['flag', 'exclude']).default('flag'),
});

const staticAgent = z.strictObject({
  name: localName,
  // Exactly one of url (a base URL) and cardUrl (the card's own URL): cross-checks.
  url: checked(impossibleBaseUrl).optional(),
  cardUrl: checked(impossibleCardUrl).optional(),
  description: text(1000),
  // Exactly one of tags (carried by the card) and routingTags (whatever the card says): cross-checks.
  tags: z.array(tag).min(1).optional(),
  routingTags: z.array(tag).min(1).optional(),
  critical: z.boolean().default(false),
  // Per-agent transport options, judged by the rule registry records share (sources/transport-options.ts).
  streaming: z.boolean().optional(),
  headers: z
    .record(z.string(), checked((value) => agentHeaderValueProblem(value)))
    .superRefine((headers, ctx) => {
      for (const name of Object.keys(headers)) {
        const message = agentHeaderNameProblem(name);
        if (message !== undefined) ctx.addIssue({ code: 'custom', message, path: [name], input: name });
      }
    })
    .optional(),
  timeoutMs: positiveInt.optional(),
  tenant: checked((value) => tenantProblem(value)).optional(),
  // Replaces an unroutable interface host of its card (card/interface-policy.ts); the allowlist admits it: cross-checks.
  interfaceUrl: checked(impossibleUrl).optional(),
});

const sources = z.strictObject({
  wellKnown: z
    .strictObject({
      id: sourceId,
      domains: z.array(domain).min(1),
      pollIntervalMs: positiveInt.default(SOURCE_DEFAULTS.pollIntervalMs),
      // Read each domain's /.well-known/ai-catalog.json first, its agent card when it has none.
      catalogFirst: z.boolean().default(false),
    })
    .optional(),
  aiCatalogs: z
    .array(
      z.strictObject({
        id: sourceId,
        // At least one of catalogs and domains: cross-checks (with the allowlist).
        catalogs: z.array(checked(impossibleUrl)).default([]),
        domains: z.array(domain).default([]),
        pollIntervalMs: positiveInt.default(SOURCE_DEFAULTS.pollIntervalMs),
        versions: z.record(text(1024), text(256)).default({}),
        maxDepth: positiveInt.default(CATALOG_DEFAULTS.maxDepth),
        maxEntries: positiveInt.default(CATALOG_DEFAULTS.maxEntries),
        maxCatalogs: positiveInt.default(CATALOG_DEFAULTS.maxCatalogs),
        maxBytes: positiveInt.default(DEFAULT_MAX_CATALOG_BYTES),
        signatures: z.enum(['off', 'if-present', 'required']).default('if-present'),
      }),
    )
    .default([]),
  registries: z
    .array(
      z.strictObject({
        id: sourceId,
        // https, or http on loopback with allowLoopback: the allowlist check decides (cross-checks).
        // Required for the simple catalog; a Google Agent Registry defaults it (cross-checks, parse-config).
        url: checked(impossibleUrl).optional(),
        pollIntervalMs: positiveInt.default(SOURCE_DEFAULTS.pollIntervalMs),
        maxPages: positiveInt.default(SOURCE_DEFAULTS.maxPages),
        maxEntries: positiveInt.default(SOURCE_DEFAULTS.maxEntries),
        // The catalog's kind when it is not the simple format (docs/sources.md "Google Cloud Agent Registry").
        registry: z
          .strictObject({
            kind: z.literal('google-agent-registry'),
            project: matching(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a Google Cloud project id or number such as "my-project"'),
            location: matching(/^[a-z0-9][a-z0-9-]{0,62}$/, 'a location such as "global" or "us-central1"'),
            filter: text(1000).optional(),
            pageSize: positiveInt.max(1000).default(GOOGLE_AGENT_REGISTRY_DEFAULTS.pageSize),
            credentials: z.enum(['google', 'configured']).default('google'),
          })
          .optional(),
      }),
    )
    .default([]),
  ard: z
    .array(
      z.strictObject({
        id: sourceId,
        // The registry's API base: https, or http on loopback with allowLoopback (cross-checks).
        url: checked(impossibleUrl),
        query: text(500).optional(),
        filter: z.record(z.string().min(1).max(200), z.unknown()).optional(),
        pollIntervalMs: positiveInt.default(SOURCE_DEFAULTS.pollIntervalMs),
        maxPages: positiveInt.default(ARD_SOURCE_DEFAULTS.maxPages),
        maxEntries: positiveInt.default(ARD_SOURCE_DEFAULTS.maxEntries),
        maxBytes: positiveInt.default(ARD_SOURCE_DEFAULTS.maxBytes),
        timeoutMs: positiveInt.default(ARD_SOURCE_DEFAULTS.timeoutMs),
      }),
    )
    .default([]),
  // DNS-AID and DNS-SD records of domains, read through the given resolvers (docs/sources.md "DNS").
  dns: z
    .array(
      z.strictObject({
        id: sourceId,
        resolvers: z.array(checked((v) => { const s = parseDnsServer(v); return 'problem' in s ? s.problem : undefined; })).min(1),
        domains: z
          .array(
            z.strictObject({
              domain: checked(dnsDomainProblem),
              agents: z.array(checked(dnsAidLabelProblem)).optional(),
              index: z.boolean().optional(),
              dnsSd: z.boolean().default(false),
            }),
          )
          .min(1),
        requireDnssec: z.boolean().default(false),
        scheme: z.enum(['https', 'http']).default('https'),
        timeoutMs: positiveInt.default(DNS_SOURCE_DEFAULTS.timeoutMs),
        retries: nonNegativeInt.max(10).default(DNS_SOURCE_DEFAULTS.retries),
        backoffMs: nonNegativeInt.default(DNS_SOURCE_DEFAULTS.backoffMs),
        udpPayloadSize: z.int().min(512).max(65_535).default(DNS_SOURCE_DEFAULTS.udpPayloadSize),
        maxTcpBytes: z.int().min(512).max(65_535).default(DNS_SOURCE_DEFAULTS.maxTcpBytes),
        maxRecords: positiveInt.default(DNS_SOURCE_DEFAULTS.maxRecords),
        maxAgents: positiveInt.default(DNS_SOURCE_DEFAULTS.maxAgents),
        minRefreshMs: positiveInt.default(DNS_SOURCE_DEFAULTS.minRefreshMs),
        maxRefreshMs: positiveInt.default(DNS_SOURCE_DEFAULTS.maxRefreshMs),
      }),
    )
    .default([]),
  kubernetes: z
    .strictObject({
      id: sourceId,
      namespace: matching(DNS_LABEL, 'a namespace name (a DNS label such as "support")').optional(),
      labelSelector,
      scheme: z.enum(['https', 'http']).default('https'),
      resyncIntervalMs: positiveInt.default(SOURCE_DEFAULTS.resyncIntervalMs),
    })
    .optional(),
});

const health = z.strictObject({
  enterAfter: positiveInt.default(HEALTH_DEFAULTS.enterAfter),
  leaveAfter: positiveInt.default(HEALTH_DEFAULTS.leaveAfter),
  leaveWhileUsable: z.boolean().default(HEALTH_DEFAULTS.leaveWhileUsable),
  staticEnterAfter: positiveInt.default(HEALTH_DEFAULTS.staticEnterAfter),
  callLeaveAfter: positiveInt.default(HEALTH_DEFAULTS.callLeaveAfter),
  activeCheck: z
    .strictObject({
      enabled: z.boolean().default(HEALTH_DEFAULTS.activeCheck.enabled),
      intervalMs: z.int().min(1_000).max(86_400_000).default(HEALTH_DEFAULTS.activeCheck.intervalMs),
      timeoutMs: positiveInt.default(HEALTH_DEFAULTS.activeCheck.timeoutMs),
      maxConcurrent: positiveInt.default(HEALTH_DEFAULTS.activeCheck.maxConcurrent),
    })
    .prefault({}),
});

const percent = z.number().gt(0, 'a share is more than 0 percent').max(100, 'a share is at most 100 percent');
const rollout = z.strictObject({
  trigger: z.enum(['breaking', 'any', 'off']).default(ROLLOUT_DEFAULTS.trigger),
  steps: z
    .array(percent)
    .min(1)
    .max(10)
    .refine((steps) => steps.every((s, i) => i === 0 || s > steps[i - 1]!), 'steps must grow (for example [5, 25, 100])')
    .default([...ROLLOUT_DEFAULTS.steps]),
  holdMs: nonNegativeInt.default(ROLLOUT_DEFAULTS.holdMs),
  minTurns: nonNegativeInt.default(ROLLOUT_DEFAULTS.minTurns),
  minSamples: positiveInt.default(ROLLOUT_DEFAULTS.minSamples),
  maxErrorRateIncrease: z.number().min(0).max(1).default(ROLLOUT_DEFAULTS.maxErrorRateIncrease),
  maxLatencyRatio: z.number().min(1).max(100).default(ROLLOUT_DEFAULTS.maxLatencyRatio),
  minLatencyIncreaseMs: nonNegativeInt.default(ROLLOUT_DEFAULTS.minLatencyIncreaseMs),
});

const cache = z.strictObject({
  defaultTtlMs: positiveInt.default(CACHE_DEFAULTS.defaultTtlMs),
  minTtlMs: nonNegativeInt.default(CACHE_DEFAULTS.minTtlMs),
  maxTtlMs: positiveInt.default(CACHE_DEFAULTS.maxTtlMs),
  maxStaleMs: nonNegativeInt.default(CACHE_DEFAULTS.maxStaleMs),
  backoffBaseMs: positiveInt.default(CACHE_DEFAULTS.backoffBaseMs),
  backoffMaxMs: positiveInt.default(CACHE_DEFAULTS.backoffMaxMs),
  maxConcurrentFetches: positiveInt.default(CACHE_DEFAULTS.maxConcurrentFetches),
  maxConcurrentFetchesDuringTurns: positiveInt.default(CACHE_DEFAULTS.maxConcurrentFetchesDuringTurns),
  maxFetchesPerOrigin: positiveInt.default(CACHE_DEFAULTS.maxFetchesPerOrigin),
  originRequestsPerSecond: z.number().positive().max(1_000_000).default(UPSTREAM_DEFAULTS.originRequestsPerSecond),
  originBurst: positiveInt.default(UPSTREAM_DEFAULTS.originBurst),
  originMaxWaitMs: nonNegativeInt.default(UPSTREAM_DEFAULTS.originMaxWaitMs),
  maxBodyBytes: positiveInt.default(DEFAULT_MAX_CARD_BYTES),
  totalTimeoutMs: positiveInt.default(CACHE_DEFAULTS.totalTimeoutMs),
});

const loop = z.strictObject({
  cycleIntervalMs: positiveInt.default(LOOP_DEFAULTS.cycleIntervalMs),
  resyncIntervalMs: positiveInt.default(LOOP_DEFAULTS.resyncIntervalMs),
  startupTimeoutMs: positiveInt.default(LOOP_DEFAULTS.startupTimeoutMs),
  maxRemovalShare: z.number().min(0).max(1).default(LOOP_DEFAULTS.maxRemovalShare),
  minPublishIntervalMs: nonNegativeInt.default(LOOP_DEFAULTS.minPublishIntervalMs),
  removalGraceMs: nonNegativeInt.default(LOOP_DEFAULTS.removalGraceMs),
});

const root = z.strictObject({
  kind: z.enum(['routed', 'model']).default('routed'),
  name: localName.default('orchestrator'),
  fallback: z.string().optional(),
  model: text(256).optional(),
});

const routingDomain = z.strictObject({
  // A sub-router's agent name: the same rule as local names (cross-checks keep it unique in the tree).
  name: localName,
  description: text(1000),
  tags: z.array(tag).min(1),
  // Most agents under this domain's router; default policies.maxAgents.
  maxAgents: positiveInt.optional(),
});

const routing = z.strictObject({
  minAccuracy: z.number().min(0).max(1).default(ROUTING_DEFAULTS.minAccuracy),
  gate: z.boolean().default(false),
  cases: filePath.optional(),
});

const sessions = z.strictObject({
  idleTimeoutMs: positiveInt.default(SESSION_DEFAULTS.idleTimeoutMs),
  maxSessions: positiveInt.default(SESSION_DEFAULTS.maxSessions),
  allowAdkMetadata: z.boolean().default(false),
  // Conversations: ADK's DatabaseSessionService on the store's database ('store'), or in memory.
  history: z.enum(['store', 'memory']).default('store'),
});

/** Why a `store:` value is not a store description, or undefined (the store reads it with the same rule). */
function impossibleStore(value: string): string | undefined {
  const parsed = parseStoreSpec(value);
  return 'problem' in parsed ? parsed.problem : undefined;
}

const retention = z.strictObject({
  journalMaxEvents: positiveInt.default(RETENTION_DEFAULTS.journalMaxEvents),
  journalMaxEventsPerType: positiveInt.default(RETENTION_DEFAULTS.journalMaxEventsPerType),
  journalMaxAgeMs: positiveInt.default(RETENTION_DEFAULTS.journalMaxAgeMs),
  snapshots: nonNegativeInt.default(RETENTION_DEFAULTS.snapshots),
  snapshotHistory: positiveInt.default(RETENTION_DEFAULTS.snapshotHistory),
});

/** Several replicas on one PostgreSQL store (docs/deployment.md). */
const replica = z.strictObject({
  leaderRetryMs: positiveInt.default(REPLICA_DEFAULTS.leaderRetryMs),
  pollMs: positiveInt.default(REPLICA_DEFAULTS.pollMs),
  leaseMs: positiveInt.default(REPLICA_DEFAULTS.leaseMs),
  // Where the other replicas reach this one's API when it leads; default the URL it listens on (a wildcard bind: this machine's first external address).
  advertiseUrl: checked(impossibleUrl).optional(),
  // Rolling back: migrations of a newer release this build may lead over (docs/operations.md).
  acceptNewerMigrations: z.array(z.string().min(1)).default([]),
  // The replicas' shared key (never written here): followers sign their requests with it (docs/deployment.md "Replica key").
  keyEnv: envName.optional(),
  keyFile: filePath.optional(),
  keyGraceMs: positiveInt.default(REPLICA_DEFAULTS.keyGraceMs),
  authWindowMs: positiveInt.default(REPLICA_DEFAULTS.authWindowMs),
  maxNonces: positiveInt.default(REPLICA_DEFAULTS.maxNonces),
  // The leader URLs a follower may send its signed request to (origins, https://*.name patterns); unset: loopback only.
  leaderUrls: z.array(z.string()).optional(),
});

/** `config:`, how the service treats this file while it runs (docs/operations.md "Reload"). */
const configFile = z.strictObject({
  watch: z.boolean().default(false),
});

/** The whole document. Sections default to `{}` run through their schema, so defaults fill in. */
export const configSchema = z.strictObject({
  server: server.prefault({}),
  allow: z.array(z.string()).default([]),
  allowLoopback: z.boolean().default(false),
  allowCidrs: z.array(z.string()).default([]),
  credentials: z.array(credential).default([]),
  signatures: signatures.prefault({}),
  vocabulary: z.array(vocabularyEntry).default([]),
  needs: z.array(need).default([]),
  policies: policies.prefault({}),
  static: z.array(staticAgent).default([]),
  domains: z.array(routingDomain).default([]),
  routing: routing.prefault({}),
  sources: sources.prefault({}),
  health: health.prefault({}),
  rollout: rollout.prefault({}),
  cache: cache.prefault({}),
  loop: loop.prefault({}),
  root: root.prefault({}),
  sessions: sessions.prefault({}),
  dataDir: filePath.default('data'),
  store: checked(impossibleStore).default('sqlite'),
  storePasswordEnv: envName.optional(),
  storePasswordFile: filePath.optional(),
  retention: retention.prefault({}),
  replica: replica.prefault({}),
  config: configFile.prefault({}),
});

/** The schema's output: the YAML with defaults, before paths are resolved and the root is typed. */
export type SchemaOutput = z.output<typeof configSchema>;

/** Every default of the document (an empty file run through the schema), for rules that read raw YAML. */
export const SCHEMA_DEFAULTS: Readonly<SchemaOutput> = Object.freeze(configSchema.parse({}));

/** Top-level and `sources` sections whose empty value (`server:` alone) means "left out". */
export const SECTIONS: readonly string[] = Object.keys(configSchema.shape);
export const SOURCE_SECTIONS: readonly string[] = Object.keys(sources.shape);
