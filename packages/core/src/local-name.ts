/**
 * Local names: the names our configuration gives agents in a tree. ADK transfer targets are typed
 * by the model, so there is one spelling, lower snake case, 2–48 characters; `user` is reserved by
 * ADK for the end user's messages. The one definition every stage checks against.
 */

/** `^[a-z][a-z0-9_]{1,47}$`. */
export const LOCAL_NAME = /^[a-z][a-z0-9_]{1,47}$/;

/** ADK reserves this author name for end-user input in the event stream. */
export const RESERVED_AGENT_NAME = 'user';

/** Names ADK reserves ({@link RESERVED_AGENT_NAME}: the author of the end user's messages). */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([RESERVED_AGENT_NAME]);

/** Whether `name` can name an agent: matches {@link LOCAL_NAME} and is not reserved. */
export function isLocalName(name: unknown): name is string {
  return typeof name === 'string' && LOCAL_NAME.test(name) && !RESERVED_NAMES.has(name);
}
