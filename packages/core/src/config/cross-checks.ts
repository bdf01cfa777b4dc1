/**
 * Internal: the rules that relate fields to each other (tags against the vocabulary, names against
 * names, URLs against the allowlist, ...). They read the raw YAML data defensively, so they run even
 * when the schema found problems elsewhere, and a file with ten mistakes reports all ten at once.
 * A value of the wrong type is skipped here: the schema already reports it.
 */
import { HostPolicy } from '../fetch/index.js';
import { isDiscoveryError, type Problem } from '../errors.js';
import { formatPath, type ConfigPath } from './messages.js';
import { LOCAL_NAME } from '../local-name.js';
import { CACHE_DEFAULTS, GOOGLE_AGENT_REGISTRY_DEFAULTS } from '../rules/defaults.js';
import { DNS_SOURCE_DEFAULTS } from '../rules/defaults.js';
import { normalizeDomain } from '../rules/domains.js';
import { storeSpecKind } from '../rules/store-spec.js';
import { isLoopbackHost, looksLikeRangeOrigin, normalizeOrigin, originOf, parseRangeOrigin, secureOrLoopback } from '../rules/origins.js';
import { impossibleUrl } from '../rules/urls.js';
import { SCHEMA_DEFAULTS } from './schema.js';
import type { YamlSource } from './yaml-source.js';

type Raw = Record<string, unknown>;

/** The `credentials:` keys that apply to some types only. */
const CREDENTIAL_KEY_TYPES: Readonly<Record<string, readonly string[]>> = {
  header: ['static'],
  prefix: ['static'],
  valueEnv: ['static'],
  valueFile: ['static'],
  tokenUrl: ['oauth2'],
  issuer: ['oauth2'],
  clientId: ['oauth2'],
  clientSecretEnv: ['oauth2'],
  clientSecretFile: ['oauth2'],
  scopes: ['oauth2'],
  resource: ['oauth2'],
  auth: ['oauth2'],
  audience: ['oauth2', 'google-id-token'],
};

/** An identity provider's URL: https, or http for a loopback host under allowLoopback; no userinfo. */
function identityProviderUrlProblem(raw: string, allowLoopback: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'must be an absolute URL such as "https://idp.example.com/oauth/token"';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry a user name or password (the client secret is read from clientSecretEnv or clientSecretFile)';
  const insecure = secureOrLoopback(url, allowLoopback);
  return insecure === undefined ? undefined : `must be https (token requests carry the client secret): ${insecure}`;
}

function record(value: unknown): Raw | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Raw) : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function string(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** `[index, value]` for the string items of a list. */
function strings(value: unknown): Array<[number, string]> {
  return list(value).flatMap((item, i): Array<[number, string]> => (typeof item === 'string' ? [[i, item]] : []));
}

/** Every cross-field problem of the raw document `doc`, located in `source`. */
export function crossCheck(doc: Raw, source: YamlSource): Problem[] {
  const problems: Problem[] = [];
  const add = (path: ConfigPath, message: string): void => {
    problems.push(source.problem(path, message));
  };

  // --- allowlist -------------------------------------------------------------------------------
  const allowLoopback = doc.allowLoopback === true;
  const policy = buildPolicy(doc, allowLoopback, add);
  if (Array.isArray(doc.allow) && doc.allow.length === 0 && !allowLoopback) {
    add(['allow'], 'lists no origins, so every host would be refused; list the origins discovery may reach (an empty list is allowed only with allowLoopback: true)');
  } else if (doc.allow === undefined && !allowLoopback) {
    add(['allow'], 'is required: list the origins discovery may reach, such as "https://agents.example.com" (it may be left out only with allowLoopback: true)');
  }
  const admits = (url: string): string | undefined => {
    const verdict = policy.check(url);
    return verdict.allowed ? undefined : verdict.reason;
  };

  // --- store -----------------------------------------------------------------------------------
  const store = string(doc.store)?.trim() ?? SCHEMA_DEFAULTS.store;
  const postgres = storeSpecKind(store) === 'postgres';
  if (doc.storePasswordEnv !== undefined && doc.storePasswordFile !== undefined) add(['storePasswordFile'], 'set only one of storePasswordEnv and storePasswordFile');
  for (const key of ['storePasswordEnv', 'storePasswordFile'] as const) {
    if (doc[key] !== undefined && !postgres) add([key], `is only used with a PostgreSQL store (store: postgres://…), but store is ${JSON.stringify(store)}`);
  }

  // --- replica key and leader URLs (docs/deployment.md "Replica key") --------------------------
  const replica = record(doc.replica);
  if (replica !== undefined) {
    if (replica.keyEnv !== undefined && replica.keyFile !== undefined) add(['replica', 'keyFile'], 'set only one of keyEnv and keyFile');
    for (const key of ['keyEnv', 'keyFile'] as const) {
      if (replica[key] !== undefined && !postgres) add(['replica', key], `is only used by replicas on a PostgreSQL store (store: postgres://…), but store is ${JSON.stringify(store)}`);
    }
    if (Array.isArray(replica.leaderUrls)) {
      // An origin over an address range (`http://10.0.0.0/8:7340`: pods) is judged as one; the
      // rest by the allowlist's own rules: https outside loopback, a wildcard only as the leftmost label.
      const entries = (replica.leaderUrls as unknown[]).map((v, i) => [i, v] as const);
      for (const [i, v] of entries) {
        if (typeof v !== 'string' || !looksLikeRangeOrigin(v)) continue;
        const parsed = parseRangeOrigin(v);
        if ('problem' in parsed) add(['replica', 'leaderUrls', i], parsed.problem);
      }
      const named = entries.filter(([, v]) => typeof v !== 'string' || !looksLikeRangeOrigin(v));
      try {
        HostPolicy.from({ allow: named.map(([, v]) => v as string), allowLoopback: true });
      } catch (err) {
        for (const p of isDiscoveryError(err) ? err.problems : []) {
          const j = Number(/^allow\[(\d+)\]$/.exec(p.path)?.[1]);
          add(Number.isInteger(j) && named[j] !== undefined ? ['replica', 'leaderUrls', named[j][0]] : ['replica', 'leaderUrls'], p.message);
        }
      }
    }
  }

  // --- server ----------------------------------------------------------------------------------
  const server = record(doc.server);
  if (server !== undefined) {
    const host = string(server.host) ?? SCHEMA_DEFAULTS.server.host;
    const oidc = record(server.oidc);
    // People's tokens guard the API as the static token does.
    const hasToken = server.tokenEnv !== undefined || server.tokenFile !== undefined || oidc !== undefined;
    if (server.tokenEnv !== undefined && server.tokenFile !== undefined) {
      add(['server', 'tokenFile'], 'set only one of tokenEnv and tokenFile');
    }
    if (!isLoopbackHost(host) && !hasToken) {
      add(['server', 'host'], `${JSON.stringify(host)} is not a loopback address, so the service needs a bearer token: set server.tokenEnv or server.tokenFile`);
    }
    for (const key of ['issuer', 'jwksUrl'] as const) {
      const value = string(oidc?.[key]);
      if (value === undefined || !URL.canParse(value)) continue;
      const insecure = secureOrLoopback(value, allowLoopback);
      if (insecure !== undefined) add(['server', 'oidc', key], `must be https: ${insecure}, got ${JSON.stringify(value)}`);
    }
    const catalog = record(server.catalog);
    const signing = record(catalog?.signing);
    if (catalog !== undefined && signing !== undefined) {
      if (signing.keyEnv !== undefined && signing.keyFile !== undefined) add(['server', 'catalog', 'signing', 'keyFile'], 'set exactly one of keyFile and keyEnv, not both');
      if (signing.keyEnv === undefined && signing.keyFile === undefined) {
        add(['server', 'catalog', 'signing'], 'needs exactly one of keyFile (a file) or keyEnv (an environment variable) holding the private key; keys are never written in the configuration');
      }
      if (catalog.enabled === undefined || catalog.enabled === false) add(['server', 'catalog', 'signing'], 'is only used when the catalog is served; set server.catalog.enabled: true, or remove signing');
    }
    const registry = record(server.registry);
    if (registry?.enabled === false && registry.anonymous === true) add(['server', 'registry', 'anonymous'], 'opens the registry routes to everyone, but server.registry.enabled is false; remove one of them');
  }

  // --- credentials -----------------------------------------------------------------------------
  const credentialOrigins = new Map<string, number>();
  list(doc.credentials).forEach((item, i) => {
    const entry = record(item);
    if (entry === undefined) return;
    const type = string(entry.type) ?? 'static';
    // An unknown type is the schema's to report; its other keys cannot be judged.
    if (type !== 'static' && type !== 'oauth2' && type !== 'google-id-token') return;
    const [envKey, fileKey] = type === 'oauth2' ? (['clientSecretEnv', 'clientSecretFile'] as const) : (['valueEnv', 'valueFile'] as const);
    if (type !== 'google-id-token') {
      const hasEnv = entry[envKey] !== undefined;
      const hasFile = entry[fileKey] !== undefined;
      if (hasEnv && hasFile) add(['credentials', i, fileKey], `set exactly one of ${envKey} and ${fileKey}, not both`);
      if (!hasEnv && !hasFile) add(['credentials', i], `needs exactly one of ${envKey} (an environment variable) or ${fileKey} (a file); secrets are never written in the configuration`);
    }
    // Each key belongs to one type: a key of another type is a mistake, not something to ignore.
    for (const key of Object.keys(entry)) {
      const owner = CREDENTIAL_KEY_TYPES[key];
      if (owner !== undefined && !owner.includes(type)) add(['credentials', i, key], `applies only to type ${owner.join(' or ')}, but this entry is type ${type}`);
    }
    if (type === 'oauth2') {
      if (entry.clientId === undefined) add(['credentials', i], 'an oauth2 entry needs clientId');
      if ((entry.tokenUrl === undefined) === (entry.issuer === undefined)) add(['credentials', i, ...(entry.issuer !== undefined ? ['issuer'] : [])], 'an oauth2 entry needs exactly one of tokenUrl (the token endpoint) and issuer (discovered from its metadata)');
      for (const key of ['tokenUrl', 'issuer'] as const) {
        const url = string(entry[key]);
        const refusal = url === undefined ? undefined : identityProviderUrlProblem(url, allowLoopback);
        if (refusal !== undefined) add(['credentials', i, key], refusal);
      }
    }
    const raw = string(entry.origin);
    const normalized = raw === undefined ? undefined : normalizeOrigin(raw);
    if (typeof normalized !== 'string') return;
    const first = credentialOrigins.get(normalized);
    if (first !== undefined) add(['credentials', i, 'origin'], `${normalized} already has credentials in credentials[${first}]`);
    else credentialOrigins.set(normalized, i);
    const refusal = admits(normalized);
    if (refusal !== undefined) add(['credentials', i, 'origin'], `${refusal}; credentials are sent only to allowlisted origins`);
  });

  // --- signatures ------------------------------------------------------------------------------
  const signatures = record(doc.signatures);
  if (signatures?.mode === 'required' && list(signatures.keys).length === 0) {
    add(['signatures', 'mode'], 'is "required" but no keys are listed, so every card would be refused; add signatures.keys or use if-present');
  }

  // --- vocabulary and needs --------------------------------------------------------------------
  const vocabulary = new Map<string, number>();
  list(doc.vocabulary).forEach((item, i) => {
    const tag = string(record(item)?.tag);
    if (tag === undefined) return;
    const first = vocabulary.get(tag);
    if (first !== undefined) add(['vocabulary', i, 'tag'], `duplicate tag ${JSON.stringify(tag)}, already defined in vocabulary[${first}]`);
    else vocabulary.set(tag, i);
  });
  const known = [...vocabulary.keys()];
  const outside = (tag: string): string =>
    `${JSON.stringify(tag)} is not in the vocabulary; add it under vocabulary with a reviewed description${known.length > 0 ? ` (known tags: ${known.join(', ')})` : ''}`;
  list(doc.needs).forEach((item, i) => {
    const tag = string(record(item)?.tag);
    if (tag !== undefined && !vocabulary.has(tag)) add(['needs', i, 'tag'], outside(tag));
  });

  // --- root ------------------------------------------------------------------------------------
  const root = record(doc.root) ?? {};
  const rootKind = root.kind ?? SCHEMA_DEFAULTS.root.kind;
  const rootName = string(root.name) ?? SCHEMA_DEFAULTS.root.name;
  if (rootKind === 'model' && root.model === undefined) add(['root', 'model'], 'is required when root.kind is "model" (e.g. gemini-2.5-flash)');
  if (rootKind === 'routed' && root.model !== undefined) add(['root', 'model'], 'is used only with root.kind: model; the routed root needs no model');
  if (rootKind === 'model' && root.fallback !== undefined) add(['root', 'fallback'], 'is used only with root.kind: routed');

  // --- static agents ---------------------------------------------------------------------------
  const isRootName = (name: string): string => `${JSON.stringify(name)} is the root agent's name (root.name); names must be unique in the whole tree`;
  const names = new Map<string, number>();
  list(doc.static).forEach((item, i) => {
    const agent = record(item);
    if (agent === undefined) return;
    const name = string(agent.name);
    if (name !== undefined && LOCAL_NAME.test(name)) {
      const first = names.get(name);
      if (first !== undefined) add(['static', i, 'name'], `duplicate name ${JSON.stringify(name)}, already used by static[${first}]`);
      else names.set(name, i);
      if (name === rootName) add(['static', i, 'name'], isRootName(name));
    }
    for (const field of ['tags', 'routingTags'] as const) {
      strings(agent[field]).forEach(([j, tag]) => {
        if (!vocabulary.has(tag)) add(['static', i, field, j], outside(tag));
      });
    }
    if (agent.tags === undefined && agent.routingTags === undefined) add(['static', i, 'tags'], 'is required (the reviewed tags its card carries), unless routingTags gives the tags it is routed by');
    if (agent.tags !== undefined && agent.routingTags !== undefined) add(['static', i, 'routingTags'], 'give either tags (carried by its card) or routingTags (whatever its card says), not both');
    if (agent.url === undefined && agent.cardUrl === undefined) add(['static', i, 'url'], 'is required (the base URL), unless cardUrl gives the card URL');
    if (agent.url !== undefined && agent.cardUrl !== undefined) add(['static', i, 'cardUrl'], 'give either url (a base URL) or cardUrl (the card URL), not both');
    for (const field of ['url', 'cardUrl', 'interfaceUrl'] as const) {
      const url = string(agent[field]);
      if (url !== undefined && impossibleUrl(url) === undefined) {
        const refusal = admits(url);
        if (refusal !== undefined) add(['static', i, field], `${refusal}; add its origin to allow`);
      }
    }
  });
  const fallback = string(root.fallback);
  if (rootKind === 'routed' && fallback !== undefined && !names.has(fallback)) {
    add(['root', 'fallback'], `${JSON.stringify(fallback)} is not the name of a static agent${names.size > 0 ? ` (static agents: ${[...names.keys()].join(', ')})` : ''}`);
  }

  // --- domains ---------------------------------------------------------------------------------
  // Each domain is a sub-router in every tree: its name is an agent name, unique in the whole tree.
  const domainOf = new Map<string, string>();
  const domainNames = new Map<string, number>();
  const domainList = list(doc.domains);
  domainList.forEach((item, i) => {
    const d = record(item);
    if (d === undefined) return;
    const name = string(d.name);
    if (name !== undefined && LOCAL_NAME.test(name)) {
      const first = domainNames.get(name);
      if (first !== undefined) add(['domains', i, 'name'], `duplicate domain ${JSON.stringify(name)}, already defined in domains[${first}]`);
      else domainNames.set(name, i);
      if (name === rootName) add(['domains', i, 'name'], isRootName(name));
      if (names.has(name)) add(['domains', i, 'name'], `${JSON.stringify(name)} is also static[${names.get(name)}]'s name; a domain's router is an agent, and names must be unique in the whole tree`);
    }
    strings(d.tags).forEach(([j, tag]) => {
      if (!vocabulary.has(tag)) return add(['domains', i, 'tags', j], outside(tag));
      const owner = domainOf.get(tag);
      if (owner !== undefined) add(['domains', i, 'tags', j], `${JSON.stringify(tag)} already belongs to domain ${JSON.stringify(owner)}; a tag belongs to one domain`);
      else domainOf.set(tag, name ?? `domains[${i}]`);
    });
  });
  if (domainList.length > 0) {
    list(doc.needs).forEach((item, i) => {
      const tag = string(record(item)?.tag);
      if (tag !== undefined && vocabulary.has(tag) && !domainOf.has(tag)) {
        add(['needs', i, 'tag'], `${JSON.stringify(tag)} is in no domain, so no sub-router could hold its agents; add it to one of domains[].tags`);
      }
    });
    list(doc.static).forEach((item, i) => {
      const field = record(item)?.routingTags !== undefined ? 'routingTags' : 'tags';
      const tags = strings(record(item)?.[field]).map(([, t]) => t);
      if (tags.length > 0 && tags.every((t) => vocabulary.has(t)) && !tags.some((t) => domainOf.has(t))) {
        add(['static', i, field], `none of ${tags.join(', ')} is in a domain, so this agent would fit under no sub-router; add one of its tags to domains[].tags`);
      }
    });
    const policies = record(doc.policies) ?? {};
    const cap = typeof policies.maxAgents === 'number' ? policies.maxAgents : SCHEMA_DEFAULTS.policies.maxAgents;
    if (domainList.length > cap) add(['domains'], `lists ${domainList.length} domains but the root holds at most policies.maxAgents (${cap}) sub-agents`);
  }
  const routing = record(doc.routing);
  if (routing?.gate === true && list(doc.vocabulary).every((v) => list(record(v)?.examples).length === 0) && routing.cases === undefined) {
    add(['routing', 'gate'], 'is on but there is nothing to evaluate: give vocabulary examples or routing.cases');
  }

  // --- sources ---------------------------------------------------------------------------------
  const sources = record(doc.sources) ?? {};
  const ids = new Map<string, string>([['static', 'the static agents']]);
  const claimId = (path: ConfigPath, id: unknown): void => {
    if (typeof id !== 'string') return;
    const owner = ids.get(id);
    if (owner !== undefined) add(path, `source id ${JSON.stringify(id)} is already used by ${owner}`);
    else ids.set(id, formatPath(path.slice(0, -1)));
  };
  const wellKnown = record(sources.wellKnown);
  if (wellKnown !== undefined) {
    claimId(['sources', 'wellKnown', 'id'], wellKnown.id);
    const seen = new Map<string, number>();
    strings(wellKnown.domains).forEach(([i, raw]) => {
      const host = normalizeDomain(raw);
      if (typeof host !== 'string') return;
      const first = seen.get(host);
      if (first !== undefined) return add(['sources', 'wellKnown', 'domains', i], `duplicate of domains[${first}] (${host})`);
      seen.set(host, i);
      const refusal = admits(`https://${host}/`);
      if (refusal !== undefined) add(['sources', 'wellKnown', 'domains', i], `${refusal}; add https://${host} to allow, or the domain can never be probed`);
    });
  }
  list(sources.aiCatalogs).forEach((item, i) => {
    const catalogSource = record(item);
    if (catalogSource === undefined) return;
    const at: ConfigPath = ['sources', 'aiCatalogs', i];
    claimId([...at, 'id'], catalogSource.id);
    const urls = strings(catalogSource.catalogs);
    const hosts = strings(catalogSource.domains);
    if (urls.length === 0 && hosts.length === 0) add(at, 'give catalogs (catalog URLs) or domains (hosts whose /.well-known/ai-catalog.json is read), or both');
    urls.forEach(([j, url]) => {
      if (impossibleUrl(url) !== undefined) return;
      const refusal = admits(url);
      if (refusal !== undefined) add([...at, 'catalogs', j], `${refusal}; the catalog must be on the allowlist to be read`);
    });
    hosts.forEach(([j, raw]) => {
      const host = normalizeDomain(raw);
      if (typeof host !== 'string') return;
      const refusal = admits(`https://${host}/`);
      if (refusal !== undefined) add([...at, 'domains', j], `${refusal}; add https://${host} to allow, or the host can never be read`);
    });
  });
  list(sources.registries).forEach((item, i) => {
    const registry = record(item);
    if (registry === undefined) return;
    claimId(['sources', 'registries', i, 'id'], registry.id);
    // A Google Agent Registry has a default URL; the simple catalog has none.
    const google = record(registry.registry)?.kind === 'google-agent-registry';
    if (registry.url === undefined && !google) add(['sources', 'registries', i, 'url'], 'the catalog URL is required (or set registry.kind: google-agent-registry)');
    const url = string(registry.url) ?? (google ? GOOGLE_AGENT_REGISTRY_DEFAULTS.url : undefined);
    if (url !== undefined && impossibleUrl(url) === undefined) {
      const refusal = admits(url);
      if (refusal !== undefined) add(['sources', 'registries', i, 'url'], `${refusal}; the catalog must be on the allowlist to be read`);
      // The registry is asked at its origin whatever the URL's path: the credentials entry must be for that origin.
      const origin = originOf(url);
      if (google && record(registry.registry)?.credentials === 'configured' && origin !== undefined && !credentialOrigins.has(origin)) {
        add(['sources', 'registries', i, 'registry', 'credentials'], `is "configured", but no credentials entry has the origin ${origin}: add one, or use credentials: google (application default credentials)`);
      }
    }
  });
  list(sources.ard).forEach((item, i) => {
    const ard = record(item);
    if (ard === undefined) return;
    claimId(['sources', 'ard', i, 'id'], ard.id);
    const url = string(ard.url);
    if (url !== undefined && impossibleUrl(url) === undefined) {
      const refusal = admits(url);
      if (refusal !== undefined) add(['sources', 'ard', i, 'url'], `${refusal}; the registry must be on the allowlist to be read`);
    }
    if (ard.filter !== undefined && ard.query === undefined) add(['sources', 'ard', i, 'filter'], 'a filter applies to a search: give query too');
  });
  list(record(record(doc.server)?.registry)?.peers).forEach((item, i) => {
    const url = string(record(item)?.url);
    if (url === undefined || impossibleUrl(url) !== undefined) return;
    const refusal = admits(url);
    if (refusal !== undefined) add(['server', 'registry', 'peers', i, 'url'], `${refusal}; a peer registry must be on the allowlist to be referred to or asked`);
  });
  list(sources.dns).forEach((item, i) => {
    const dns = record(item);
    if (dns === undefined) return;
    claimId(['sources', 'dns', i, 'id'], dns.id);
    const min = typeof dns.minRefreshMs === 'number' ? dns.minRefreshMs : DNS_SOURCE_DEFAULTS.minRefreshMs;
    const max = typeof dns.maxRefreshMs === 'number' ? dns.maxRefreshMs : DNS_SOURCE_DEFAULTS.maxRefreshMs;
    if (min > max) add(['sources', 'dns', i, dns.minRefreshMs !== undefined ? 'minRefreshMs' : 'maxRefreshMs'], `minRefreshMs (${min}) must not exceed maxRefreshMs (${max})`);
  });
  const kubernetes = record(sources.kubernetes);
  if (kubernetes !== undefined) claimId(['sources', 'kubernetes', 'id'], kubernetes.id);

  const hasAgents =
    list(doc.static).length > 0 || wellKnown !== undefined || list(sources.aiCatalogs).length > 0 || list(sources.registries).length > 0 || list(sources.ard).length > 0 || list(sources.dns).length > 0 || kubernetes !== undefined;
  if (!hasAgents) add([], 'no agent source: list reviewed agents under static, or configure sources.wellKnown, sources.aiCatalogs, sources.registries, sources.ard, sources.dns or sources.kubernetes');

  // --- cache bounds ----------------------------------------------------------------------------
  const cache = record(doc.cache) ?? {};
  const num = (key: 'minTtlMs' | 'maxTtlMs' | 'backoffBaseMs' | 'backoffMaxMs'): number => (typeof cache[key] === 'number' ? (cache[key] as number) : CACHE_DEFAULTS[key]);
  if (num('minTtlMs') > num('maxTtlMs')) add(['cache', cache.minTtlMs !== undefined ? 'minTtlMs' : 'maxTtlMs'], `minTtlMs (${num('minTtlMs')}) must not exceed maxTtlMs (${num('maxTtlMs')})`);
  if (num('backoffBaseMs') > num('backoffMaxMs')) {
    add(['cache', cache.backoffBaseMs !== undefined ? 'backoffBaseMs' : 'backoffMaxMs'], `backoffBaseMs (${num('backoffBaseMs')}) must not exceed backoffMaxMs (${num('backoffMaxMs')})`);
  }

  return problems;
}

/**
 * Builds the allowlist with `HostPolicy.from`, mapping its problems (`allow[2]`, `allowCidrs[0]`)
 * back to the YAML. Bad entries are left out of the policy that is returned, so the URLs that rely
 * only on good entries are still judged.
 */
function buildPolicy(doc: Raw, allowLoopback: boolean, add: (path: ConfigPath, message: string) => void): HostPolicy {
  let allow = strings(doc.allow);
  let cidrs = strings(doc.allowCidrs);
  try {
    return HostPolicy.from({ allow: allow.map(([, v]) => v), allowCidrs: cidrs.map(([, v]) => v), allowLoopback });
  } catch (err) {
    if (!isDiscoveryError(err)) throw err;
    const badAllow = new Set<number>();
    const badCidrs = new Set<number>();
    for (const problem of err.problems) {
      const m = /^(allow|allowCidrs)\[(\d+)\]$/.exec(problem.path);
      if (m === null) continue;
      const key = m[1] as 'allow' | 'allowCidrs';
      const position = Number(m[2]);
      const [index] = (key === 'allow' ? allow : cidrs)[position]!;
      (key === 'allow' ? badAllow : badCidrs).add(position);
      add([key, index], problem.message);
    }
    allow = allow.filter((_, i) => !badAllow.has(i));
    cidrs = cidrs.filter((_, i) => !badCidrs.has(i));
    return HostPolicy.from({ allow: allow.map(([, v]) => v), allowCidrs: cidrs.map(([, v]) => v), allowLoopback });
  }
}
