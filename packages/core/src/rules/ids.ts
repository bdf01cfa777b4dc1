/**
 * Names our configuration gives things: source ids, agents' local names and reviewed tags. The
 * YAML schema and the sources' own option checks apply these, with one sentence per fault.
 *
 * @module
 */
import { LOCAL_NAME, RESERVED_NAMES } from '../local-name.js';
import { describe, hasControl } from '../text.js';

/** Source ids: 1–64 letters, digits, `.`, `_` or `-`, starting with a letter or digit. */
const SOURCE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The longest reviewed tag, in characters. */
const MAX_TAG_LENGTH = 64;

/**
 * Why a value is not a source id, or undefined when it is one.
 *
 * @example sourceIdProblem('partners') // undefined
 */
export function sourceIdProblem(value: unknown): string | undefined {
  if (typeof value === 'string' && SOURCE_ID.test(value)) return undefined;
  return `must be a source id: 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit, got ${describe(value)}`;
}

/**
 * Why a value cannot be an agent's local name, or undefined when it can: it must match
 * `LOCAL_NAME` (lower snake case, 2–48 characters) and not be a name ADK reserves (`user`).
 * The configuration, the static source and the agent registry all word it so.
 */
export function localNameProblem(value: unknown): string | undefined {
  if (typeof value !== 'string' || !LOCAL_NAME.test(value)) return `must be a local name matching ${LOCAL_NAME.source} (lower snake case, 2-48 characters), got ${describe(value)}`;
  if (RESERVED_NAMES.has(value)) return `"${value}" is reserved by ADK for end-user input`;
  return undefined;
}

/**
 * Why a value cannot be a reviewed tag, or undefined when it can: 1–64 characters, without
 * whitespace, commas or control characters (a tag list is written comma-joined).
 */
export function tagProblem(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '' && value.length <= MAX_TAG_LENGTH && !/[\s,]/.test(value) && !hasControl(value)) return undefined;
  return `must be a tag of 1-${MAX_TAG_LENGTH} characters without spaces or commas, got ${describe(value)}`;
}
