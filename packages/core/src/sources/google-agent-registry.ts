/**
 * The Google Cloud Agent Registry adapter for the registry source: lists a project's agents
 * (`projects/{project}/locations/{location}/agents`, paged by `pageToken` / `nextPageToken`)
 * with ADK JS's own client, `AgentRegistry` from `@google/adk` (an optional peer, imported on
 * first use), subclassed so that:
 *
 * - every request goes through the registry source's guarded fetcher ({@link RegistryRead}:
 *   allowlist, address checks, no redirects, size and time bounds) instead of the global fetch,
 *   on the configured base URL (default `https://agentregistry.googleapis.com`, plus ADK's API
 *   version path when the URL has none);
 * - credentials come from Google's application default credentials through ADK's own
 *   `getAuthHeaders` (google-auth-library), from a {@link PeerCredentials} asked with the
 *   registry's origin, or from the fetcher's configured per-origin credentials alone. They are
 *   sent to the registry's origin only and never logged.
 *
 * Each registered agent becomes one entry: its stored A2A card (served inline to the card cache)
 * or its first A2A interface URL (ADK's `getConnectionUri`), with provenance in the metadata.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type * as Adk from '@google/adk';
import { DiscoveryError } from '../errors.js';
import type { PeerCredentials } from '../rules/credentials.js';
import { GOOGLE_AGENT_REGISTRY_DEFAULTS } from '../rules/defaults.js';
import { originOf } from '../rules/origins.js';
import { describe, hasControl } from '../text.js';
import type { RegistryClientAdapter, RegistryEntry, RegistryRead, RegistryTokenPage } from './registry-adapter.js';
import { checkOptions, optional, rule } from './source-options.js';

/** Inputs of {@link googleAgentRegistryAdapter}. */
export interface GoogleAgentRegistryOptions {
  /** The Google Cloud project id (or number) whose registry is listed. */
  project: string;
  /** The registry's location, e.g. `global` or `us-central1`. */
  location: string;
  /** The list method's `filter` expression (AIP-160), e.g. `displayName:"billing"`. */
  filter?: string;
  /** Agents asked per page (1–1000). Default 50. */
  pageSize?: number;
  /**
   * What authenticates the requests: `'google'` (default) Google's application default
   * credentials through ADK's `getAuthHeaders` (google-auth-library, cloud-platform scope);
   * `'configured'` only the per-origin credentials the source's fetcher was given; or a
   * {@link PeerCredentials} asked with the registry's origin. Sent to that origin only.
   */
  credentials?: 'google' | 'configured' | PeerCredentials;
}

/** Limits of what one agent contributes (the rest of the registry's text is not kept). */
const MAX_TEXT = 200;
const MAX_TAGS = 32;
const RESOURCE = /^projects\/[^/?#\s]+\/locations\/[^/?#\s]+\/agents\/[^/?#\s]+$/;
const PROJECT = /^[a-z0-9][a-z0-9-]{0,62}$/;
const LOCATION = /^[a-z0-9][a-z0-9-]{0,62}$/;

const decoder = new TextDecoder('utf-8', { fatal: true });

type AdkModule = typeof Adk;
let loaded: Promise<AdkModule> | undefined;

/** Imports `@google/adk` once; a clear configuration error when it is not installed. */
async function loadAdk(): Promise<AdkModule> {
  loaded ??= import('@google/adk').catch((err: unknown) => {
    loaded = undefined;
    const code = (err as { code?: unknown } | null)?.code;
    const missing = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
    const message = missing
      ? 'the google-agent-registry adapter needs the optional peer dependency @google/adk (its AgentRegistry client), which is not installed: run npm install @google/adk@^2'
      : `the google-agent-registry adapter could not load @google/adk: ${err instanceof Error ? err.message : String(err)}`;
    throw new DiscoveryError('ERR_CONFIG_INVALID', message, { stage: 'config', cause: err, problems: [{ path: 'registry.kind', message }] });
  });
  return loaded;
}

/**
 * A registry-source adapter for Google Cloud Agent Registry. Pure: checks the options, no I/O;
 * `@google/adk` is imported on the first read.
 *
 * Entries: `name` = the agent's id (the last segment of its resource name); the stored card
 * (`card.type` `A2A_AGENT_CARD`) or else the URL of its first A2A interface; `metadata`:
 * `resource`, `project`, `location`, and when given `displayName`, `version`, `protocolVersions`
 * (comma-joined) and `interfaces` (`<protocolVersion> <binding> <url>`, `; `-joined). A listed agent
 * with neither a card nor an A2A interface is read once more (`get`); one that still has none is
 * dropped with a problem.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for bad options; its reads reject
 *   with it when `@google/adk` is not installed.
 * @example
 * const source = registrySource({
 *   id: 'gcp', url: 'https://agentregistry.googleapis.com', fetcher, artifacts,
 *   adapter: googleAgentRegistryAdapter({ project: 'my-project', location: 'global' }),
 * });
 */
export function googleAgentRegistryAdapter(options: GoogleAgentRegistryOptions): RegistryClientAdapter {
  const { options: o, problems } = checkOptions(GOOGLE_OPTIONS, options);
  if (problems.length > 0) {
    throw new DiscoveryError('ERR_CONFIG_INVALID', `google-agent-registry adapter: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}`, { stage: 'config', problems });
  }
  const settings: Settings = { project: o.project, location: o.location, filter: o.filter, pageSize: o.pageSize ?? GOOGLE_AGENT_REGISTRY_DEFAULTS.pageSize, credentials: o.credentials ?? 'google' };
  const current = new AsyncLocalStorage<RegistryRead>();
  let client: Promise<GuardedClient> | undefined;
  return Object.freeze({
    name: 'google-agent-registry',
    async readPage(pageToken: string | undefined, read: RegistryRead): Promise<RegistryTokenPage> {
      client ??= loadAdk().then((adk) => guardedClient(adk, settings, current));
      const registry = await client;
      return current.run(read, () => readPage(registry, settings, pageToken));
    },
  });
}

/** The options of {@link googleAgentRegistryAdapter}, each with its sentence. */
const GOOGLE_OPTIONS = {
  project: rule<string>((v) => (typeof v === 'string' && PROJECT.test(v) ? undefined : `must be a Google Cloud project id or number, got ${describe(v)}`)),
  location: rule<string>((v) => (typeof v === 'string' && LOCATION.test(v) ? undefined : `must be a location such as "global" or "us-central1", got ${describe(v)}`)),
  filter: optional<string>((v) => (typeof v === 'string' && v.length <= 1000 && !hasControl(v) ? undefined : `must be a filter expression of at most 1000 characters, got ${describe(v)}`)),
  pageSize: optional<number>((v) => (Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 1000 ? undefined : `must be an integer from 1 to 1000, got ${describe(v)}`)),
  credentials: optional<'google' | 'configured' | PeerCredentials>((v) =>
    v === null || v === 'google' || v === 'configured' || typeof (v as Partial<PeerCredentials> | null)?.headers === 'function' ? undefined : `must be "google", "configured" or a PeerCredentials, got ${describe(v)}`,
  ),
};

interface Settings {
  project: string;
  location: string;
  filter: string | undefined;
  pageSize: number;
  credentials: 'google' | 'configured' | PeerCredentials;
}

type GuardedClient = InstanceType<AdkModule['AgentRegistry']>;

/** ADK's client with its two I/O methods on our guarded read. */
function guardedClient(adk: AdkModule, s: Settings, current: AsyncLocalStorage<RegistryRead>): GuardedClient {
  const versionPath = new URL(adk.AGENT_REGISTRY_BASE_URL).pathname;
  class GuardedAgentRegistry extends adk.AgentRegistry {
    override async getAuthHeaders(): Promise<Record<string, string>> {
      if (s.credentials === 'google') {
        try {
          return await super.getAuthHeaders();
        } catch {
          // Neither the library's message nor its error kept: either may quote the credentials.
          throw new DiscoveryError('ERR_FETCH_NETWORK', 'google agent registry: the application default credentials gave no token (google-auth-library); set credentials: configured with a credentials entry for the registry, or see docs/sources.md "Google Cloud Agent Registry"', { stage: 'source' });
        }
      }
      if (s.credentials === 'configured') return {};
      // Asked with the registry's origin only; a URL without one gets none.
      const origin = originOf(readOf(current).url);
      return (origin !== undefined ? await s.credentials.headers(origin) : undefined) ?? {};
    }

    // ADK's path rules (a full resource name, or one under the client's project and location), on
    // the configured base, through the source's fetcher; the answer bounded by its body cap.
    override async makeRequest<T = unknown>(path: string, params?: Record<string, string>): Promise<T> {
      const read = readOf(current);
      const base = apiBase(read.url, versionPath);
      let url = path.startsWith('projects/') ? `${base}/${path}` : `${base}/projects/${this.projectId}/locations/${this.location}/${path}`;
      if (params !== undefined && Object.keys(params).length > 0) url += `?${new URLSearchParams(params).toString()}`;
      const headers = await this.getAuthHeaders();
      const body = await read.get(url, lowerCased(headers));
      return parseJson(body, url) as T;
    }
  }
  return new GuardedAgentRegistry({ projectId: s.project, location: s.location });
}

function readOf(current: AsyncLocalStorage<RegistryRead>): RegistryRead {
  const read = current.getStore();
  if (read === undefined) throw new DiscoveryError('ERR_USAGE', 'the google-agent-registry client is used only inside a registry source read', { stage: 'source' });
  return read;
}

async function readPage(registry: GuardedClient, s: Settings, pageToken: string | undefined): Promise<RegistryTokenPage> {
  const answer = (await registry.listAgents({ pageSize: s.pageSize, ...(s.filter !== undefined && { filterStr: s.filter }), ...(pageToken !== undefined && { pageToken }) })) as unknown;
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw invalid(`a ListAgentsResponse must be an object, got ${describe(answer)}`, '$');
  const { agents, nextPageToken } = answer as { agents?: unknown; nextPageToken?: unknown };
  if (agents !== undefined && !Array.isArray(agents)) throw invalid(`agents must be an array, got ${describe(agents)}`, 'agents');
  if (nextPageToken !== undefined && (typeof nextPageToken !== 'string' || nextPageToken.length > 4096)) throw invalid(`nextPageToken must be a string, got ${describe(nextPageToken)}`, 'nextPageToken');
  const records: RegistryEntry[] = [];
  for (const raw of agents ?? []) {
    let agent = raw as Adk.AgentInfo;
    const name = typeof agent?.['name'] === 'string' ? agent['name'] : undefined;
    if (name !== undefined && RESOURCE.test(name) && cardOf(agent) === undefined && a2aUrl(registry, agent) === undefined) {
      // The list left out what makes the agent reachable: ADK's get reads the whole resource.
      agent = await registry.getAgentInfo(name);
    }
    records.push(entryOf(registry, agent, s));
  }
  return nextPageToken === undefined || nextPageToken === '' ? { records } : { records, nextPageToken };
}

/**
 * One registered agent as an entry. Anything unusable is left for the source to report (an entry
 * without a name or URL is dropped with a problem there).
 */
function entryOf(registry: GuardedClient, agent: Adk.AgentInfo, s: Settings): RegistryEntry {
  if (typeof agent !== 'object' || agent === null) return {} as RegistryEntry;
  const resource = typeof agent['name'] === 'string' && RESOURCE.test(agent['name']) ? agent['name'] : undefined;
  const metadata: Record<string, string> = { project: s.project, location: s.location };
  if (resource !== undefined) metadata['resource'] = resource;
  const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' && !hasControl(v) ? v.slice(0, MAX_TEXT) : undefined);
  const displayName = text(agent.displayName);
  if (displayName !== undefined) metadata['displayName'] = displayName;
  const version = text(agent.version);
  if (version !== undefined) metadata['version'] = version;
  const interfaces: string[] = [];
  const versions = new Set<string>();
  for (const p of Array.isArray(agent.protocols) ? agent.protocols : []) {
    if (p?.type !== 'A2A_AGENT') continue;
    const v = text(p.protocolVersion) ?? '?';
    if (v !== '?') versions.add(v);
    for (const i of Array.isArray(p.interfaces) ? p.interfaces : []) {
      const url = text(i?.url);
      if (url !== undefined) interfaces.push(`${v} ${text(i.protocolBinding) ?? '?'} ${url}`);
    }
  }
  if (versions.size > 0) metadata['protocolVersions'] = [...versions].join(',');
  if (interfaces.length > 0) metadata['interfaces'] = interfaces.slice(0, 8).join('; ');
  const tags = new Set<string>();
  for (const skill of Array.isArray(agent.skills) ? agent.skills : []) {
    for (const tag of Array.isArray(skill?.tags) ? skill.tags : []) {
      if (typeof tag === 'string' && tag !== '' && tag.length <= 64 && !tag.includes(',') && !hasControl(tag) && tags.size < MAX_TAGS) tags.add(tag);
    }
  }
  const entry: RegistryEntry = { name: resource?.slice(resource.lastIndexOf('/') + 1) ?? '', metadata };
  const url = a2aUrl(registry, agent);
  if (url !== undefined) entry.url = url;
  const card = cardOf(agent);
  if (card !== undefined) entry.card = card;
  if (tags.size > 0) entry.tags = [...tags];
  return entry;
}

/** The stored A2A card, when the registry has one. */
function cardOf(agent: Adk.AgentInfo): Readonly<Record<string, unknown>> | undefined {
  const card = agent?.card;
  if (card?.type !== 'A2A_AGENT_CARD') return undefined;
  const content = card.content as unknown;
  return typeof content === 'object' && content !== null && !Array.isArray(content) ? (content as Record<string, unknown>) : undefined;
}

/** The first A2A interface's URL, by ADK's own mapping (`getConnectionUri`). */
function a2aUrl(registry: GuardedClient, agent: Adk.AgentInfo): string | undefined {
  if (typeof agent !== 'object' || agent === null) return undefined;
  const { url } = registry.getConnectionUri(agent, { protocolType: 'A2A_AGENT' as Adk.ProtocolType });
  return typeof url === 'string' && url !== '' ? url : undefined;
}

/** The API base: the configured URL, with ADK's version path when it has no path of its own. */
function apiBase(configured: string, versionPath: string): string {
  const u = new URL(configured);
  const path = u.pathname === '/' ? versionPath : u.pathname;
  return `${u.origin}${path.replace(/\/+$/, '')}`;
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (typeof v === 'string') out[k.toLowerCase()] = v;
  return out;
}

function parseJson(body: Buffer, url: string): unknown {
  try {
    return JSON.parse(decoder.decode(body)) as unknown;
  } catch (err) {
    const message = `not a JSON text: ${err instanceof Error ? err.message : String(err)}`;
    throw new DiscoveryError('ERR_CARD_MALFORMED', `google agent registry answer ${url}: ${message}`, { url, stage: 'source', path: '$', problems: [{ path: '$', message }] });
  }
}

function invalid(message: string, path: string): DiscoveryError {
  return new DiscoveryError('ERR_CARD_INVALID', `google agent registry: ${message}`, { stage: 'source', path, problems: [{ path, message }] });
}
