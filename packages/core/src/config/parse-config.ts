/**
 * Parsing and loading `discovery.yaml`: YAML syntax, the schema, then the cross-field rules, with
 * every problem collected and located at its line and column before anything is thrown.
 *
 * @module
 */
import { dirname, resolve } from 'node:path';
import type { z } from 'zod';
import { DiscoveryError, type Problem } from '../errors.js';
import { GOOGLE_AGENT_REGISTRY_DEFAULTS } from '../rules/defaults.js';
import { normalizeOrigin } from '../rules/origins.js';
import { parseStoreSpec, sqliteFilePath } from '../rules/store-spec.js';
import { crossCheck } from './cross-checks.js';
import { fileErrorReason, FileReadError, readBoundedFile } from '../rules/bounded-file.js';
import { describeValue, errorMap, formatPath, unknownKeyMessage, type ConfigPath } from './messages.js';
import { configSchema, SECTIONS, SOURCE_SECTIONS, type SchemaOutput } from './schema.js';
import type { DiscoveryConfig } from './types.js';
import { rememberSource, YamlSource } from './yaml-source.js';

/** Inputs of {@link parseConfig}. */
export interface ParseConfigOptions {
  /** The file name, used in error messages. */
  file?: string;
  /** Directory that relative paths (`tokenFile`, `valueFile`, `jwkFile`) resolve against. Default `process.cwd()`. */
  baseDir?: string;
}

/** Largest configuration file read, in bytes. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/**
 * Parses and validates the text of a `discovery.yaml`. Pure apart from `process.cwd()` when no
 * `baseDir` is given: no file is read and no environment variable is looked at (see
 * {@link resolveSecrets} for that).
 *
 * @returns the configuration with every default filled in and relative paths made absolute, frozen.
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) listing every problem in `problems`,
 *   each with its `path` (`static[1].tags[0]`), a message, and its 1-based `line` and `column`.
 *   YAML syntax errors are reported alone (path `$`), since the rest cannot be read reliably.
 * @example
 * const config = parseConfig(text, { file: 'discovery.yaml', baseDir: '/etc/a2a' });
 * config.cache.defaultTtlMs; // 300000 unless set
 */
export function parseConfig(text: string, options: ParseConfigOptions = {}): DiscoveryConfig {
  const source = YamlSource.parse(text);
  const syntax = source.syntaxProblems();
  if (syntax.length > 0) throw invalid(syntax, options.file);

  let raw: unknown;
  try {
    raw = source.toJS();
  } catch (err) {
    throw invalid([{ path: '$', message: `YAML: ${err instanceof Error ? err.message : String(err)}`, line: 1, column: 1 }], options.file);
  }
  raw = withoutEmptySections(raw ?? {});
  if (!isRecord(raw)) {
    throw invalid([source.problem([], `the configuration must be a mapping of sections (server:, allow:, static:, ...), got ${describeValue(raw)}`)], options.file);
  }

  const knownKeys = new Map<string, string[]>();
  const result = configSchema.safeParse(raw, {
    error: (issue) => {
      if (issue.code === 'unrecognized_keys') {
        const shape = (issue.inst?._zod.def as { shape?: Record<string, unknown> } | undefined)?.shape;
        if (shape !== undefined) knownKeys.set(formatPath(pathOf(issue.path ?? [])), Object.keys(shape));
      }
      return errorMap(issue);
    },
  });
  const schemaProblems = result.success ? [] : result.error.issues.flatMap((issue) => locateIssue(issue, source, knownKeys));
  const crossProblems = crossCheck(raw, source);
  // A cross-field rule says nothing new about a value the schema already refused.
  const refused = schemaProblems.map((p) => p.path);
  const problems = [...schemaProblems, ...crossProblems.filter((p) => !refused.some((r) => covers(r, p.path)))];
  if (problems.length > 0 || !result.success) throw invalid(problems, options.file);

  const config = build(result.data, options.baseDir ?? process.cwd());
  rememberSource(config, source, options.file);
  return config;
}

/**
 * Reads and parses a configuration file. Relative paths inside it resolve against its directory.
 *
 * @throws DiscoveryError `ERR_USAGE` when the file cannot be read (missing, a directory, no
 *   permission); `ERR_CONFIG_INVALID` as {@link parseConfig} when its content is wrong or it is
 *   larger than 1 MiB.
 * @example
 * const config = await loadConfig('/etc/a2a/discovery.yaml');
 */
export async function loadConfig(file: string): Promise<DiscoveryConfig> {
  let bytes: Buffer;
  try {
    bytes = await readBoundedFile(file, MAX_CONFIG_BYTES);
  } catch (err) {
    if (err instanceof FileReadError && err.tooLarge) {
      throw invalid([{ path: '$', message: `the file is larger than ${MAX_CONFIG_BYTES} bytes, the most a configuration may be`, line: 1, column: 1 }], file);
    }
    throw new DiscoveryError('ERR_USAGE', `cannot read configuration file ${file}: ${fsReason(err)}`, { stage: 'config', cause: err });
  }
  return parseConfig(bytes.toString('utf8'), { file, baseDir: dirname(resolve(file)) });
}

/** A short reason for a file system error, without the file's content. */
export function fsReason(err: unknown): string {
  return err instanceof FileReadError ? err.message : fileErrorReason(err);
}

function invalid(problems: readonly Problem[], file: string | undefined): DiscoveryError {
  const sorted = [...problems].sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity) || (a.column ?? 0) - (b.column ?? 0));
  const first = sorted[0];
  const where = file === undefined ? 'configuration' : `configuration ${file}`;
  const summary = first === undefined ? 'is invalid' : `has ${sorted.length} problem(s); first: ${first.path}: ${first.message}`;
  return new DiscoveryError('ERR_CONFIG_INVALID', `${where} ${summary}`, {
    stage: 'config',
    ...(first !== undefined && { path: first.path }),
    problems: sorted,
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `server:` with nothing under it means the section was left out, as it would in most tools. */
function withoutEmptySections(raw: unknown): unknown {
  if (!isRecord(raw)) return raw;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (value === null && SECTIONS.includes(key)) continue;
    out[key] = key === 'sources' && isRecord(value) ? Object.fromEntries(Object.entries(value).filter(([k, v]) => !(v === null && SOURCE_SECTIONS.includes(k)))) : value;
  }
  return out;
}

function pathOf(path: readonly PropertyKey[]): ConfigPath {
  return path.filter((p): p is string | number => typeof p !== 'symbol');
}

/** One problem per issue; one per key for unknown keys, located at the key. */
function locateIssue(issue: z.core.$ZodIssue, source: YamlSource, knownKeys: ReadonlyMap<string, string[]>): Problem[] {
  const path = pathOf(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const known = knownKeys.get(formatPath(path)) ?? [];
    return issue.keys.map((key) => source.problem([...path, key], unknownKeyMessage(key, known), { key: true }));
  }
  return [source.problem(path, issue.message)];
}

/** True when the problem at `ancestor` is at `path` or contains it. */
function covers(ancestor: string, path: string): boolean {
  return ancestor === path || ancestor === '$' || path.startsWith(`${ancestor}.`) || path.startsWith(`${ancestor}[`);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/** `sqlite` and relative SQLite paths resolved under the data directory; other stores as written. */
function storeIn(store: string, dataDir: string): string {
  const spec = parseStoreSpec(store);
  return 'kind' in spec && spec.kind === 'sqlite' ? `sqlite:${sqliteFilePath(spec.file, dataDir)}` : store;
}

/** The schema output as the public configuration: paths absolute, origins normalized, root typed. */
function build(out: SchemaOutput, baseDir: string): DiscoveryConfig {
  const file = (p: string): string => resolve(baseDir, p);
  const origin = (o: string): string => {
    const normalized = normalizeOrigin(o);
    return typeof normalized === 'string' ? normalized : o;
  };
  const { server, signatures, policies, sources, root } = out;
  const config: DiscoveryConfig = {
    server: {
      host: server.host,
      port: server.port,
      ...(server.tokenEnv !== undefined && { tokenEnv: server.tokenEnv }),
      ...(server.tokenFile !== undefined && { tokenFile: file(server.tokenFile) }),
      allowedHosts: server.allowedHosts,
      allowedOrigins: server.allowedOrigins.map(origin),
      limits: { ...server.limits },
      clients: { ...server.clients, trustedProxies: [...server.clients.trustedProxies] },
      drainTimeoutMs: server.drainTimeoutMs,
      heapGrowthPercent: server.heapGrowthPercent,
      registry: { ...server.registry, peers: server.registry.peers.map((p) => ({ ...p })), federation: { ...server.registry.federation } },
      a2a: { ...server.a2a, cacheControl: server.a2a.cacheControl.trim(), ...(server.a2a.publicUrl !== undefined && { publicUrl: server.a2a.publicUrl.replace(/\/$/, '') }) },
      catalog: {
        enabled: server.catalog.enabled,
        cacheControl: server.catalog.cacheControl.trim(),
        hostName: server.catalog.hostName,
        registryUrl: server.catalog.registryUrl,
        ...(server.catalog.signing !== undefined && {
          signing: {
            ...(server.catalog.signing.keyFile !== undefined && { keyFile: file(server.catalog.signing.keyFile) }),
            ...(server.catalog.signing.keyEnv !== undefined && { keyEnv: server.catalog.signing.keyEnv }),
            kid: server.catalog.signing.kid,
            alg: server.catalog.signing.alg,
          },
        }),
      },
      ...(server.oidc !== undefined && { oidc: { ...server.oidc, roles: { ...server.oidc.roles } } }),
      telemetry: { ...(server.telemetry.traceUrl !== undefined && { traceUrl: server.telemetry.traceUrl }) },
    },
    allow: out.allow,
    allowLoopback: out.allowLoopback,
    allowCidrs: out.allowCidrs,
    credentials: out.credentials.map((c) => ({
      ...(c.type !== 'static' && { type: c.type }),
      origin: origin(c.origin),
      header: c.header.toLowerCase(),
      ...(c.prefix !== undefined && { prefix: c.prefix }),
      ...(c.valueEnv !== undefined && { valueEnv: c.valueEnv }),
      ...(c.valueFile !== undefined && { valueFile: file(c.valueFile) }),
      ...(c.tokenUrl !== undefined && { tokenUrl: c.tokenUrl }),
      ...(c.issuer !== undefined && { issuer: c.issuer }),
      ...(c.clientId !== undefined && { clientId: c.clientId }),
      ...(c.clientSecretEnv !== undefined && { clientSecretEnv: c.clientSecretEnv }),
      ...(c.clientSecretFile !== undefined && { clientSecretFile: file(c.clientSecretFile) }),
      ...(c.scopes !== undefined && { scopes: c.scopes }),
      ...(c.audience !== undefined && { audience: c.audience }),
      ...(c.resource !== undefined && { resource: c.resource }),
      ...(c.auth !== undefined && { auth: c.auth }),
    })),
    signatures: {
      mode: signatures.mode,
      ...(signatures.algorithms !== undefined && { algorithms: signatures.algorithms }),
      keys: signatures.keys.map((k) => ({ kid: k.kid, jwkFile: file(k.jwkFile), ...(k.origins !== undefined && { origins: k.origins.map(origin) }) })),
    },
    vocabulary: out.vocabulary.map((v) => ({
      tag: v.tag,
      description: v.description,
      ...(v.keywords !== undefined && { keywords: v.keywords }),
      ...(v.examples !== undefined && { examples: v.examples }),
    })),
    needs: out.needs.map((n) => ({
      tag: n.tag,
      ...(n.inputModes !== undefined && { inputModes: n.inputModes }),
      ...(n.outputModes !== undefined && { outputModes: n.outputModes }),
    })),
    policies: {
      requireStreaming: policies.requireStreaming,
      ...(policies.tenant !== undefined && {
        tenant: {
          ...(policies.tenant.providers !== undefined && { providers: policies.tenant.providers }),
          ...(policies.tenant.hosts !== undefined && { hosts: policies.tenant.hosts }),
        },
      }),
      maxAgents: policies.maxAgents,
      lookalikes: policies.lookalikes,
    },
    static: out.static.map((a) => ({
      name: a.name,
      ...(a.cardUrl !== undefined ? { cardUrl: a.cardUrl } : { url: a.url as string }),
      description: a.description,
      // Exactly one of them (cross-checks).
      ...(a.routingTags !== undefined ? { routingTags: a.routingTags } : { tags: a.tags ?? [] }),
      critical: a.critical,
      // Per-agent transport options, only when given.
      ...(a.streaming !== undefined && { streaming: a.streaming }),
      ...(a.headers !== undefined && { headers: a.headers }),
      ...(a.timeoutMs !== undefined && { timeoutMs: a.timeoutMs }),
      ...(a.tenant !== undefined && { tenant: a.tenant }),
      ...(a.interfaceUrl !== undefined && { interfaceUrl: a.interfaceUrl }),
    })),
    domains: out.domains.map((d) => ({ name: d.name, description: d.description, tags: d.tags, maxAgents: d.maxAgents ?? policies.maxAgents })),
    routing: {
      minAccuracy: out.routing.minAccuracy,
      gate: out.routing.gate,
      ...(out.routing.cases !== undefined && { cases: file(out.routing.cases) }),
    },
    sources: {
      ...(sources.wellKnown !== undefined && { wellKnown: { ...sources.wellKnown } }),
      aiCatalogs: sources.aiCatalogs.map((c) => ({ ...c, catalogs: [...c.catalogs], domains: [...c.domains], versions: { ...c.versions } })),
      registries: sources.registries.map(({ registry, ...r }) => ({
        ...r,
        url: r.url ?? GOOGLE_AGENT_REGISTRY_DEFAULTS.url,
        ...(registry !== undefined && { registry: { ...registry } }),
      })),
      ard: sources.ard.map((a) => ({ ...a, ...(a.filter !== undefined && { filter: { ...a.filter } }) })),
      dns: sources.dns.map((d) => ({ ...d, resolvers: [...d.resolvers], domains: d.domains.map((x) => ({ ...x, ...(x.agents !== undefined && { agents: [...x.agents] }) })) })),
      ...(sources.kubernetes !== undefined && { kubernetes: { ...sources.kubernetes } }),
    },
    health: { ...out.health, activeCheck: { ...out.health.activeCheck } },
    rollout: { ...out.rollout, steps: [...out.rollout.steps] },
    cache: { ...out.cache },
    loop: { ...out.loop },
    root:
      root.kind === 'model'
        ? { kind: 'model', name: root.name, model: root.model ?? '' }
        : { kind: 'routed', name: root.name, ...(root.fallback !== undefined && { fallback: root.fallback }) },
    sessions: { ...out.sessions },
    dataDir: file(out.dataDir),
    store: storeIn(out.store.trim(), file(out.dataDir)),
    ...(out.storePasswordEnv !== undefined && { storePasswordEnv: out.storePasswordEnv }),
    ...(out.storePasswordFile !== undefined && { storePasswordFile: file(out.storePasswordFile) }),
    retention: { ...out.retention },
    replica: {
      ...out.replica,
      ...(out.replica.keyFile !== undefined && { keyFile: file(out.replica.keyFile) }),
      ...(out.replica.leaderUrls !== undefined && { leaderUrls: [...out.replica.leaderUrls] }),
    },
    config: { ...out.config },
  };
  return deepFreeze(config);
}
