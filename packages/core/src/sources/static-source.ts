/**
 * The static source: agents listed in configuration. These are the agents an application
 * depends on; their local name, description and tags are reviewed by a person, and `critical`
 * ones are never dropped for health reasons (they are flagged degraded and alerted instead).
 *
 * @module
 */
import type { Clock } from '../clock/index.js';
import { localNameProblem, tagProblem } from '../rules/ids.js';
import { impossibleBaseUrl, impossibleCardUrl, impossibleUrl } from '../rules/urls.js';
import { describe } from '../text.js';
import { FixedListSource, OptionProblems } from './source-core.js';
import { readTransportOptions } from './transport-options.js';
import type { TransportOptions } from './transport-options.js';
import type { EndpointRecord, Source } from './types.js';
import { frozenCopy } from '../rules/frozen.js';

/** One configured agent. Every field is reviewed configuration, never card text. */
export interface StaticAgentConfig {
  /** The local name, `^[a-z][a-z0-9_]{1,47}$`, unique within the source. */
  name: string;
  /**
   * The agent's base URL (absolute `https:`, or `http:` for loopback development); its card is
   * read at `.well-known/agent-card.json` under it (or the A2A 0.2 `.well-known/agent.json`).
   * Give exactly one of `url` and `cardUrl`.
   */
  url?: string;
  /**
   * The card's own URL, for a card published elsewhere than under a base URL, e.g.
   * `https://host/.well-known/finance/agent-card.json`: fetched exactly there (path ending in
   * `.json`, no query or fragment). The endpoint is then keyed by this URL.
   */
  cardUrl?: string;
  /** The reviewed description used for routing (1–1000 characters). */
  description: string;
  /**
   * The reviewed tags it is expected to serve, carried by its card's skills: at least one; no
   * commas or whitespace; ≤ 64 characters each. Give exactly one of `tags` and `routingTags`.
   */
  tags?: readonly string[];
  /**
   * The reviewed tags it is routed by, whatever its card's skills are tagged (ADK's `llm`,
   * Mastra's `tool`): the matcher and the router use these; the card's own tags stay visible
   * but are not required, and its skills are judged on their modes only. Same rules as `tags`.
   */
  routingTags?: readonly string[];
  /** Never dropped for health reasons; flagged degraded and alerted instead. Default false. */
  critical?: boolean;
  /** `false`: call it with `message/send` / `SendMessage` even when its card says streaming. */
  streaming?: boolean;
  /** Extra non-secret headers sent to its interface's origin only (names outside the reserved list). */
  headers?: Readonly<Record<string, string>>;
  /** Bound in ms on connecting plus waiting for the response headers of each call to it. */
  timeoutMs?: number;
  /** Call its card's interface of this tenant (echoed on every call). */
  tenant?: string;
  /**
   * Where the agent really answers when its card's chosen interface names an unroutable host
   * (`http://0.0.0.0:9999`, BeeAI's default; `::`): that one interface's URL is replaced by this
   * one, which the host policy judges like any interface URL. Unused (and reported) when the
   * interface's host is routable. An absolute http(s) URL.
   */
  interfaceUrl?: string;
}

/** Inputs of {@link staticSource}. */
export interface StaticSourceOptions {
  /** Source id. Default `'static'`. */
  id?: string;
  agents: readonly StaticAgentConfig[];
  /** For `updatedAt`. Default the system clock. */
  clock?: Clock;
}

/**
 * A static source. Besides the {@link Source} API it exposes the validated configuration, which
 * is how later stages (the matcher, health) read descriptions, tags and `critical` by local name.
 */
export interface StaticSource extends Source {
  readonly kind: 'static';
  /** The validated entries, frozen, in configuration order. */
  readonly agents: readonly Readonly<StaticAgentConfig>[];
  /** The entry with this local name, if any. */
  agent(name: string): Readonly<StaticAgentConfig> | undefined;
}

const MAX_DESCRIPTION = 1000;

/**
 * Creates the static source. Pure: validates every entry and does no I/O. Its list is known
 * from the start, so `current()` is synced before any refresh, and `refresh()` never fails.
 *
 * Records: `name` = the local name, `baseUrl` = `url` (or `cardUrl`) as configured, `metadata` =
 * `{ description, tags or routingTags (comma-joined, as configured), critical: 'true' | 'false' }` (for display; later stages
 * should read {@link StaticSource.agent}), `transport` = the entry's `streaming`, `headers` (names
 * lower case), `timeoutMs` and `tenant` when any is given.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) listing every problem with its
 *   path (`agents[2].url`, `agents[4].tags[1]`, ...), duplicate names included.
 * @example
 * const source = staticSource({ agents: [{ name: 'billing', url: 'https://billing.example.com/',
 *   description: 'Answers invoice questions.', tags: ['billing'], critical: true }] });
 * source.agent('billing')?.critical; // true
 */
export function staticSource(options: StaticSourceOptions): StaticSource {
  const check = new OptionProblems('static source');
  const opts = (options ?? {}) as Partial<StaticSourceOptions>;
  const id = opts.id === undefined ? 'static' : check.id(opts.id);
  const agents = validateAgents(opts.agents, check);
  check.throwIfAny();
  return new StaticSourceImpl(id, agents, opts.clock);
}

class StaticSourceImpl extends FixedListSource implements StaticSource {
  override readonly kind = 'static' as const;
  readonly agents: readonly Readonly<StaticAgentConfig>[];
  readonly #byName: ReadonlyMap<string, Readonly<StaticAgentConfig>>;

  constructor(id: string, agents: readonly Readonly<StaticAgentConfig>[], clock: Clock | undefined) {
    super(id, 'static', agents.map((a) => toRecord(a, id)), { clock });
    this.agents = agents;
    this.#byName = new Map(agents.map((a) => [a.name, a]));
  }

  agent(name: string): Readonly<StaticAgentConfig> | undefined {
    return this.#byName.get(name);
  }
}

function toRecord(agent: Readonly<StaticAgentConfig>, source: string): EndpointRecord {
  const read = readTransportOptions(agent as Readonly<Record<string, unknown>>, () => undefined);
  // interfaceUrl is a static entry's alone: registry records never carry it.
  const transport = agent.interfaceUrl === undefined ? read : frozenCopy(read ?? {}, { interfaceUrl: agent.interfaceUrl });
  return {
    name: agent.name,
    baseUrl: (agent.url ?? agent.cardUrl) as string,
    source,
    metadata: {
      description: agent.description,
      ...(agent.routingTags !== undefined ? { routingTags: agent.routingTags.join(',') } : { tags: (agent.tags ?? []).join(',') }),
      critical: agent.critical === true ? 'true' : 'false',
    },
    ...(transport !== undefined && { transport }),
  };
}

function validateAgents(value: unknown, check: OptionProblems): readonly Readonly<StaticAgentConfig>[] {
  if (!Array.isArray(value)) {
    check.add('agents', `must be an array of agents, got ${describe(value)}`);
    return [];
  }
  const out: Readonly<StaticAgentConfig>[] = [];
  const firstIndex = new Map<string, number>();
  value.forEach((raw: unknown, i) => {
    const at = `agents[${i}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      check.add(at, `must be an object with name, url (or cardUrl), description and tags (or routingTags), got ${describe(raw)}`);
      return;
    }
    const entry = raw as Record<string, unknown>;
    let ok = true;
    const bad = (field: string, message: string): void => {
      check.add(`${at}.${field}`, message);
      ok = false;
    };

    const { name, url, cardUrl, description, tags, routingTags, critical } = entry;
    const nameProblem = localNameProblem(name);
    const first = typeof name === 'string' ? firstIndex.get(name) : undefined;
    if (nameProblem !== undefined) {
      bad('name', nameProblem);
    } else if (first !== undefined) {
      bad('name', `duplicate local name ${describe(name)}, already used by agents[${first}]`);
    } else {
      firstIndex.set(name as string, i);
    }

    if (url === undefined && cardUrl === undefined) bad('url', 'is required (the base URL), unless cardUrl gives the card URL');
    else if (url !== undefined && cardUrl !== undefined) bad('cardUrl', 'give either url (a base URL) or cardUrl (the card URL), not both');
    else if (url !== undefined) {
      const why = typeof url === 'string' ? impossibleBaseUrl(url) : `must be a string, got ${describe(url)}`;
      if (why !== undefined) bad('url', why);
    } else {
      const why = typeof cardUrl === 'string' ? impossibleCardUrl(cardUrl) : `must be a string, got ${describe(cardUrl)}`;
      if (why !== undefined) bad('cardUrl', why);
    }

    if (typeof description !== 'string' || description.trim() === '') bad('description', `must be a non-empty string, got ${describe(description)}`);
    else if (description.length > MAX_DESCRIPTION) bad('description', `is ${description.length} characters; the limit is ${MAX_DESCRIPTION}`);

    if (tags === undefined && routingTags === undefined) bad('tags', 'is required (the reviewed tags its card carries), unless routingTags gives the tags it is routed by');
    else if (tags !== undefined && routingTags !== undefined) bad('routingTags', 'give either tags (carried by its card) or routingTags (whatever its card says), not both');
    else {
      const [field, list] = tags !== undefined ? ['tags', tags] : ['routingTags', routingTags];
      if (!Array.isArray(list)) bad(field, `must be an array of tag strings, got ${describe(list)}`);
      else if (list.length === 0) bad(field, 'must list at least one reviewed tag');
      else {
        list.forEach((tag: unknown, j) => {
          const problem = tagProblem(tag);
          if (problem !== undefined) bad(`${field}[${j}]`, problem);
        });
      }
    }

    if (critical !== undefined && typeof critical !== 'boolean') bad('critical', `must be true or false, got ${describe(critical)}`);
    const transport: TransportOptions | undefined = readTransportOptions(entry, bad);
    const { interfaceUrl } = entry;
    if (interfaceUrl !== undefined) {
      const why = typeof interfaceUrl === 'string' ? impossibleUrl(interfaceUrl) : `must be a string, got ${describe(interfaceUrl)}`;
      if (why !== undefined) bad('interfaceUrl', why);
    }

    if (!ok) return;
    out.push(
      Object.freeze({
        name: name as string,
        ...(url !== undefined ? { url: url as string } : { cardUrl: cardUrl as string }),
        description: description as string,
        ...(routingTags !== undefined ? { routingTags: Object.freeze([...(routingTags as string[])]) } : { tags: Object.freeze([...(tags as string[])]) }),
        critical: critical === true,
        ...transport,
        ...(interfaceUrl !== undefined && { interfaceUrl: interfaceUrl as string }),
      }),
    );
  });
  return Object.freeze(out);
}
