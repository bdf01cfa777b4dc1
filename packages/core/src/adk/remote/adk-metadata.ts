/**
 * ADK's local identifiers in outgoing A2A metadata.
 *
 * ADK JS 2.0's `RemoteA2AAgent` puts `adk_app_name`, `adk_user_id` and `adk_session_id` into
 * the `metadata` of every message it sends (`getA2ASessionMetadata`). They name our application,
 * our user and our session to a peer owned by someone else. Unless the configuration allows it,
 * they are removed before the request leaves (a `beforeRequestCallbacks` entry), and
 * {@link V1RemoteAgent} adds them only when allowed.
 *
 * @module
 */
import type { BeforeA2ARequestCallback, InvocationContext } from '@google/adk';

/** The metadata keys through which ADK leaks local identifiers to a peer. */
export const ADK_IDENTIFIER_METADATA_KEYS: readonly ['adk_app_name', 'adk_user_id', 'adk_session_id'] = Object.freeze([
  'adk_app_name',
  'adk_user_id',
  'adk_session_id',
] as const);

/**
 * Removes the {@link ADK_IDENTIFIER_METADATA_KEYS} from a metadata object in place. Returns
 * `undefined` when nothing else is left, so an empty object is not sent.
 *
 * @example stripAdkIdentifiers({ adk_user_id: 'u1', trace: 'x' }) // { trace: 'x' }
 */
export function stripAdkIdentifiers(metadata: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (metadata === undefined || metadata === null) return undefined;
  for (const key of ADK_IDENTIFIER_METADATA_KEYS) delete metadata[key];
  return Object.keys(metadata).length === 0 ? undefined : metadata;
}

/**
 * A `RemoteA2AAgent` `beforeRequestCallbacks` entry that strips ADK's identifiers from the
 * outgoing message (and from the request-level metadata, should ADK ever set them there).
 */
export const stripAdkMetadataCallback: BeforeA2ARequestCallback = (_ctx, params) => {
  const message = params.message as { metadata?: Record<string, unknown> };
  const stripped = stripAdkIdentifiers(message.metadata);
  if (stripped === undefined) delete message.metadata;
  const request = params as { metadata?: Record<string, unknown> };
  if (request.metadata !== undefined) {
    const rest = stripAdkIdentifiers(request.metadata);
    if (rest === undefined) delete request.metadata;
  }
};

/** The identifiers ADK would send, for {@link V1RemoteAgent} when they are allowed. */
export function adkIdentifierMetadata(ctx: InvocationContext): Record<string, string> {
  return { adk_app_name: ctx.session.appName, adk_user_id: ctx.session.userId, adk_session_id: ctx.session.id };
}
