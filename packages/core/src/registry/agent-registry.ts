/**
 * `AgentRegistry`: an immutable, validated set of agent specs, and the tree builder that turns a
 * root name into a fresh ADK agent tree.
 *
 * ADK JS checks names only per agent (its identifier rule and `user`); it does not reject
 * duplicate names, not even among siblings, and `transfer_to_agent` resolves a name depth-first
 * from the root. Whole-tree uniqueness is therefore enforced here, before anything runs.
 */
import type { BaseAgent } from '@google/adk';
import type { Problem } from '../errors.js';
import type { AgentSpec } from './agent-spec.js';
import { localNameProblem } from '../rules/ids.js';
import { AGENT_NAME_PATTERN } from './agent-spec.js';
import { registryError } from './registry-error.js';
import { verifyTree } from './verify-tree.js';
import { frozenCopy } from '../rules/frozen.js';

/**
 * A validated registry of {@link AgentSpec}s. Create it with {@link AgentRegistry.of}; it never
 * changes afterwards (make a new one and swap it in with `RegistryHolder`).
 *
 * @example
 * const registry = AgentRegistry.of([router, billing, billingOrderLookup, refunds, refundOrderLookup]);
 * const root = registry.buildTree('router'); // a fresh, verified tree on every call
 * const runner = new InMemoryRunner({ agent: root, appName: 'support' });
 */
export class AgentRegistry {
  readonly #specs: ReadonlyMap<string, AgentSpec>;
  readonly #roots: readonly string[];
  /** Every agent a factory of this registry returned, to refuse one returned twice. */
  readonly #built = new WeakSet<object>();

  private constructor(specs: ReadonlyMap<string, AgentSpec>) {
    this.#specs = specs;
    const children = new Set([...specs.values()].flatMap((s) => s.children));
    this.#roots = Object.freeze([...specs.keys()].filter((n) => !children.has(n)));
  }

  /**
   * Validates the whole registry once and throws one error listing **every** problem:
   * a name not matching {@link AGENT_NAME_PATTERN}, the reserved name `user`, an empty
   * description, a name registered twice, a child that is not registered, a child listed twice
   * by one spec, each cycle (with its path, `a -> b -> a`), and malformed fields (`version` not
   * a string, `kind` not `local`/`remote`, `factory` not a function).
   *
   * One spec may be the child of several parents; that is only a problem when two of them land
   * in one tree, which {@link AgentRegistry.buildTree} refuses.
   *
   * The specs are copied and frozen; later changes to the objects passed in have no effect.
   *
   * @throws {DiscoveryError} `ERR_REGISTRY_INVALID`, stage `config`; `problems` holds one entry
   *   per fault with a path such as `specs[2].children[0]`, and the message lists them all.
   */
  static of(specs: readonly AgentSpec[]): AgentRegistry {
    if (!Array.isArray(specs)) {
      throw registryError('Agent registry invalid', [{ path: '$', message: 'specs must be an array' }], 'config');
    }
    const problems: Problem[] = [];
    const byName = new Map<string, { spec: AgentSpec; index: number }>();
    specs.forEach((spec: unknown, index) => {
      const at = `specs[${index}]`;
      if (typeof spec !== 'object' || spec === null) {
        problems.push({ path: at, message: 'must be an object' });
        return;
      }
      const s = spec as Partial<Record<keyof AgentSpec, unknown>>;
      const name = s.name;
      const label = typeof name === 'string' ? `'${name}'` : 'the spec';
      const nameProblem = localNameProblem(name);
      if (nameProblem !== undefined) problems.push({ path: `${at}.name`, message: nameProblem });
      if (typeof s.description !== 'string' || s.description.trim() === '') {
        problems.push({ path: `${at}.description`, message: `${label} has an empty description (a parent routes on it)` });
      }
      if (typeof s.version !== 'string') {
        problems.push({ path: `${at}.version`, message: `${label}: version must be a string` });
      }
      if (s.kind !== 'local' && s.kind !== 'remote') {
        problems.push({ path: `${at}.kind`, message: `${label}: kind must be 'local' or 'remote'` });
      }
      if (typeof s.factory !== 'function') {
        problems.push({ path: `${at}.factory`, message: `${label}: factory must be a function` });
      }
      if (!Array.isArray(s.children)) {
        problems.push({ path: `${at}.children`, message: `${label}: children must be an array of names` });
      } else {
        const listed = new Set<string>();
        s.children.forEach((child: unknown, j) => {
          if (typeof child !== 'string') {
            problems.push({ path: `${at}.children[${j}]`, message: `${label}: a child must be a registry name (string)` });
          } else if (listed.has(child)) {
            problems.push({ path: `${at}.children[${j}]`, message: `${label} lists child '${child}' twice` });
          } else {
            listed.add(child);
          }
        });
      }
      if (typeof name === 'string') {
        const first = byName.get(name);
        if (first !== undefined) {
          problems.push({ path: `${at}.name`, message: `'${name}' is registered twice (first at specs[${first.index}])` });
        } else {
          byName.set(name, { spec: spec as AgentSpec, index });
        }
      }
    });

    const childrenOf = new Map<string, string[]>();
    for (const [name, { spec, index }] of byName) {
      if (!Array.isArray(spec.children)) continue;
      const known: string[] = [];
      spec.children.forEach((child, j) => {
        if (typeof child !== 'string') return;
        if (byName.has(child)) known.push(child);
        else problems.push({ path: `specs[${index}].children[${j}]`, message: `'${name}' lists unknown child '${child}'` });
      });
      childrenOf.set(name, known);
    }
    for (const cycle of findCycles(childrenOf)) {
      const from = cycle[cycle.length - 2]!;
      const { spec, index } = byName.get(from)!;
      const j = spec.children.indexOf(cycle[cycle.length - 1]!);
      problems.push({ path: `specs[${index}].children[${j}]`, message: `cycle: ${cycle.join(' -> ')}` });
    }

    if (problems.length > 0) throw registryError('Agent registry invalid', problems, 'config');
    const frozen = new Map<string, AgentSpec>();
    for (const [name, { spec }] of byName) {
      frozen.set(name, frozenCopy(spec, { children: Object.freeze([...spec.children]) }));
    }
    return new AgentRegistry(frozen);
  }

  /** Registered names, in registration order. */
  names(): string[] {
    return [...this.#specs.keys()];
  }

  /** The (frozen) spec registered under `name`. */
  get(name: string): AgentSpec | undefined {
    return this.#specs.get(name);
  }

  /** Specs that are nobody's child, in registration order: the candidates for `buildTree`. */
  roots(): string[] {
    return [...this.#roots];
  }

  /**
   * Builds a fresh agent tree rooted at `rootName` and verifies it.
   *
   * 1. Plans the tree from the specs and refuses, before any factory runs, every name that
   *    would be placed twice in it (the message suggests a second spec with its own name).
   * 2. Builds children before parents (ADK agents take their sub-agents at construction),
   *    calling each factory exactly once per tree position, so no instance is shared between
   *    builds. Refuses, with the tree path, a factory that throws (ADK's own errors, such as a
   *    second parent, are kept as `cause`), returns something that is not an agent, returns an
   *    agent with another name, returns an agent that already has a parent or that it already
   *    returned in an earlier build, or does not attach the children it was given.
   * 3. Runs {@link verifyTree} on the result.
   *
   * Nothing here performs I/O; remote specs use cached cards.
   *
   * @throws {DiscoveryError} `ERR_REGISTRY_INVALID`, stage `build`, with `problems` whose paths
   *   are tree paths such as `router/refunds/order_lookup`.
   */
  buildTree(rootName: string): BaseAgent {
    const headline = `Cannot build agent tree '${rootName}'`;
    if (!this.#specs.has(rootName)) {
      const roots = this.#roots.length > 0 ? this.#roots.map((r) => `'${r}'`).join(', ') : 'none';
      throw registryError(headline, [{ path: rootName, message: `no spec named '${rootName}' is registered (roots: ${roots})` }], 'build');
    }
    const placementProblems = this.#plan(rootName);
    if (placementProblems.length > 0) throw registryError(headline, placementProblems, 'build');
    const root = this.#build(rootName, rootName, headline);
    verifyTree(root);
    return root;
  }

  /** Walks the specs from the root; every name placed a second time is a problem. */
  #plan(rootName: string): Problem[] {
    const problems: Problem[] = [];
    const placed = new Map<string, string>();
    const visit = (name: string, parent: string | undefined, path: string): void => {
      const first = placed.get(name);
      if (first !== undefined) {
        problems.push({
          path,
          message:
            `'${name}' appears twice in one tree (already at ${first}); a transfer to it would always reach the first. ` +
            `Register a second spec with its own name for this position${suggestion(name, parent)}`,
        });
        return;
      }
      placed.set(name, path);
      for (const child of this.#specs.get(name)!.children) visit(child, name, `${path}/${child}`);
    };
    visit(rootName, undefined, rootName);
    return problems;
  }

  #build(name: string, path: string, headline: string): BaseAgent {
    const spec = this.#specs.get(name)!;
    const children = spec.children.map((child) => this.#build(child, `${path}/${child}`, headline));
    const fail: (message: string, cause?: unknown) => never = (message, cause) => {
      throw registryError(headline, [{ path, message }], 'build', cause);
    };
    let agent: unknown;
    try {
      agent = spec.factory(spec, [...children]);
    } catch (err) {
      const text = err instanceof Error ? err.message : String(err);
      const hint = /already has a parent/.test(text)
        ? ' (an ADK agent can have one parent only: build a new agent on every call instead of reusing one)'
        : '';
      fail(`factory for '${name}' threw: ${text}${hint}`, err);
    }
    if (!isAgent(agent)) return fail(`factory for '${name}' returned ${agent === null ? 'null' : typeof agent}, not an ADK agent`);
    if (agent.name !== name) {
      fail(`factory for '${name}' built an agent named '${agent.name}'; the agent must carry its registry name (transfers resolve by name)`);
    }
    if (agent.parentAgent !== undefined) {
      fail(
        `factory for '${name}' returned an agent that already has a parent ('${agent.parentAgent.name}'), ` +
          'a cached or shared instance; build a new agent on every call',
      );
    }
    if (this.#built.has(agent)) {
      fail(`factory for '${name}' returned the same agent object as in an earlier build; build a new agent on every call`);
    }
    for (const child of children) {
      if (child.parentAgent !== agent) {
        fail(`factory for '${name}' did not attach child '${child.name}'; pass the children it receives as subAgents`);
      }
    }
    this.#built.add(agent);
    return agent;
  }
}

/** `, e.g. 'refunds_order_lookup'` when that name is valid, else nothing. */
function suggestion(name: string, parent: string | undefined): string {
  if (parent === undefined) return '';
  const candidate = `${parent}_${name}`;
  return AGENT_NAME_PATTERN.test(candidate) ? `, e.g. '${candidate}'` : '';
}

function isAgent(value: unknown): value is BaseAgent {
  const v = value as Partial<BaseAgent> | null;
  return (
    typeof v === 'object' && v !== null && typeof v.name === 'string' && Array.isArray(v.subAgents) && typeof v.findAgent === 'function'
  );
}

/**
 * Depth-first search over the child graph (iterative, so a deep registry cannot overflow the
 * stack). Returns one path per back edge found, each closed on its first node: `[a, b, a]`.
 */
function findCycles(childrenOf: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  for (const start of childrenOf.keys()) {
    if (done.has(start)) continue;
    const path: string[] = [start];
    const onPath = new Set<string>([start]);
    const next: number[] = [0];
    while (path.length > 0) {
      const top = path.length - 1;
      const node = path[top]!;
      const kids = childrenOf.get(node) ?? [];
      const i = next[top]!;
      if (i >= kids.length) {
        path.pop();
        next.pop();
        onPath.delete(node);
        done.add(node);
        continue;
      }
      next[top] = i + 1;
      const child = kids[i]!;
      if (onPath.has(child)) {
        cycles.push([...path.slice(path.indexOf(child)), child]);
      } else if (!done.has(child)) {
        path.push(child);
        onPath.add(child);
        next.push(0);
      }
    }
  }
  return cycles;
}
