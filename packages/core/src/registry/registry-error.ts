/**
 * The one way this module fails: `ERR_REGISTRY_INVALID` with every problem in `problems` and,
 * one per line, in the message, so a deploy log shows the whole list. @internal
 */
import { DiscoveryError } from '../errors.js';
import type { Problem, Stage } from '../errors.js';

/** Builds the error; `problems` must not be empty. @internal */
export function registryError(headline: string, problems: readonly Problem[], stage: Stage, cause?: unknown): DiscoveryError {
  const lines = problems.map((p) => `  ${p.path}: ${p.message}`).join('\n');
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return new DiscoveryError('ERR_REGISTRY_INVALID', `${headline} (${count}):\n${lines}`, {
    stage,
    problems,
    ...(problems[0] !== undefined && { path: problems[0].path }),
    ...(cause !== undefined && { cause }),
  });
}
