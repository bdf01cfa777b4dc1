/**
 * `verifyTree`: the post-build check, asked of ADK itself. Transfer resolution in ADK JS is
 * `ctx.agent.rootAgent.findAgent(name)`, a depth-first first match from the root, so a tree is
 * only safe when every node reports this root and `findAgent(name)` finds that very node.
 */
import type { BaseAgent } from '@google/adk';
import type { Problem } from '../errors.js';
import { registryError } from './registry-error.js';

/**
 * Checks a built agent tree with ADK's own `rootAgent` and `findAgent`, and throws one error
 * listing every node that fails. Problem paths are tree paths such as `router/refunds/order_lookup`.
 *
 * - every node's `rootAgent` is `root` (catches an object that belongs to another tree);
 * - every node's `parentAgent` is the agent that lists it in `subAgents`;
 * - `root.findAgent(node.name)` returns the node itself (catches a name shadowed by an earlier
 *   node in depth-first order: a `transfer_to_agent` to it would land elsewhere).
 *
 * @throws {DiscoveryError} `ERR_REGISTRY_INVALID`, stage `build`, with `problems`.
 * @example
 * const root = registry.buildTree('router'); // already verified
 * verifyTree(handBuiltRoot);                  // for trees assembled outside the registry
 */
export function verifyTree(root: BaseAgent): void {
  const problems: Problem[] = [];
  const pathOf = new Map<BaseAgent, string>();
  const order: BaseAgent[] = [];
  // Pre-order, children left to right: the order findAgent searches in.
  const stack: Array<{ agent: BaseAgent; parent: BaseAgent | undefined; path: string }> = [
    { agent: root, parent: undefined, path: root.name },
  ];
  while (stack.length > 0) {
    const { agent, parent, path } = stack.pop()!;
    const seen = pathOf.get(agent);
    if (seen !== undefined) {
      problems.push({ path, message: `the same agent object is already placed at ${seen}` });
      continue;
    }
    pathOf.set(agent, path);
    order.push(agent);
    if (parent !== undefined && agent.parentAgent !== parent) {
      problems.push({
        path,
        message: `is a sub-agent of '${parent.name}' but its parentAgent is ${describe(agent.parentAgent)}`,
      });
    }
    const subs = agent.subAgents;
    for (let i = subs.length - 1; i >= 0; i--) {
      const child = subs[i]!;
      stack.push({ agent: child, parent: agent, path: `${path}/${child.name}` });
    }
  }
  for (const agent of order) {
    const path = pathOf.get(agent)!;
    const reported = agent.rootAgent;
    if (reported !== root) {
      const where = reported === agent ? 'itself' : `'${reported.name}'`;
      problems.push({ path, message: `reports ${where} as its root, not '${root.name}': the object belongs to another tree` });
    }
    const found = root.findAgent(agent.name);
    if (found !== agent) {
      const at = found === undefined ? 'nothing' : (pathOf.get(found) ?? `an agent outside this tree`);
      problems.push({
        path,
        message: `is shadowed: findAgent('${agent.name}') from the root finds ${at}, so a transfer_to_agent to '${agent.name}' lands there`,
      });
    }
  }
  if (problems.length > 0) throw registryError(`Agent tree '${root.name}' failed verification`, problems, 'build');
}

function describe(agent: BaseAgent | undefined): string {
  return agent === undefined ? 'unset' : `'${agent.name}'`;
}
