/**
 * `RegistryHolder`: the registry currently in service, replaced only by a registry that
 * validated and built every root. A spec error blocks the change, never the service.
 *
 * Running sessions keep the tree they started with (their stored events name its agents); pin
 * each session to the `version` it started on and keep one runner per live version until its
 * sessions drain.
 */
import type { BaseAgent } from '@google/adk';
import { isDiscoveryError } from '../errors.js';
import type { Problem, Stage } from '../errors.js';
import { AgentRegistry } from './agent-registry.js';
import type { AgentSpec } from './agent-spec.js';
import { registryError } from './registry-error.js';

/** What {@link RegistryHolder.swap} returns: the new version and its freshly built roots. */
export interface RegistrySwapResult {
  readonly version: number;
  /** One verified tree per root name, in the order given. */
  readonly roots: Map<string, BaseAgent>;
}

/**
 * Holds the registry in service and its version (starting at 1). Swaps are synchronous, so a
 * reader never sees a half-installed registry.
 *
 * @example
 * const holder = new RegistryHolder(AgentRegistry.of(specs), ['router']);
 * try {
 *   const { version, roots } = holder.swap(nextSpecs);
 *   runners.set(version, new Runner({ agent: roots.get('router')!, appName: `support-v${version}`, sessionService }));
 * } catch (err) {
 *   // err.problems lists every fault; holder.current and holder.version are unchanged
 * }
 */
export class RegistryHolder {
  #current: AgentRegistry;
  #version = 1;
  #rootNames: readonly string[];

  /**
   * Checks the initial registry the same way as {@link RegistryHolder.swap}: every root in
   * `rootNames` must build (the trees are built once and dropped; nothing performs I/O).
   *
   * @throws {DiscoveryError} `ERR_REGISTRY_INVALID`, stage `build`, listing every problem.
   */
  constructor(initial: AgentRegistry, rootNames: string[]) {
    buildRoots(initial, rootNames, 'Initial agent registry rejected');
    this.#current = initial;
    this.#rootNames = Object.freeze([...rootNames]);
  }

  /** The registry in service. */
  get current(): AgentRegistry {
    return this.#current;
  }

  /** The version of the registry in service: 1 for the initial one, plus one per swap. */
  get version(): number {
    return this.#version;
  }

  /** The root names every registry in this holder must build. */
  get rootNames(): readonly string[] {
    return this.#rootNames;
  }

  /**
   * Validates `next` (when given specs), builds every root (the current root names unless
   * `rootNames` is given), and only then puts it in service with the next version number.
   * On any failure it throws and the current registry and version stay in place.
   *
   * @throws {DiscoveryError} `ERR_REGISTRY_INVALID` (stage `config` for invalid specs, `build`
   *   for a root that fails to build) listing every problem across all roots; `cause` is the
   *   underlying error (an `AggregateError` when several roots failed).
   */
  swap(next: AgentRegistry | readonly AgentSpec[], rootNames: string[] = [...this.#rootNames]): RegistrySwapResult {
    const headline = `Agent registry version ${this.#version + 1} rejected; version ${this.#version} stays in service`;
    let registry: AgentRegistry;
    if (next instanceof AgentRegistry) {
      registry = next;
    } else {
      try {
        registry = AgentRegistry.of(next);
      } catch (err) {
        throw rewrap(headline, err, 'config');
      }
    }
    const roots = buildRoots(registry, rootNames, headline);
    this.#current = registry;
    this.#rootNames = Object.freeze([...rootNames]);
    this.#version += 1;
    return { version: this.#version, roots };
  }
}

function buildRoots(registry: AgentRegistry, rootNames: readonly string[], headline: string): Map<string, BaseAgent> {
  if (!Array.isArray(rootNames) || rootNames.length === 0) {
    throw registryError(headline, [{ path: '$', message: 'at least one root name is required' }], 'build');
  }
  const problems: Problem[] = [];
  const causes: unknown[] = [];
  const roots = new Map<string, BaseAgent>();
  for (const name of rootNames) {
    if (roots.has(name)) {
      problems.push({ path: name, message: `root '${name}' is listed twice` });
      continue;
    }
    try {
      roots.set(name, registry.buildTree(name));
    } catch (err) {
      causes.push(err);
      problems.push(...problemsOf(err, name));
    }
  }
  if (problems.length > 0) {
    const cause = causes.length === 1 ? causes[0] : causes.length > 1 ? new AggregateError(causes, 'several roots failed to build') : undefined;
    throw registryError(headline, problems, 'build', cause);
  }
  return roots;
}

function problemsOf(err: unknown, path: string): readonly Problem[] {
  if (isDiscoveryError(err) && err.problems.length > 0) return err.problems;
  return [{ path, message: err instanceof Error ? err.message : String(err) }];
}

function rewrap(headline: string, err: unknown, stage: Stage): unknown {
  if (!isDiscoveryError(err)) return err;
  return registryError(headline, problemsOf(err, '$'), err.stage ?? stage, err);
}
