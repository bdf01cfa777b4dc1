/**
 * Credentials for peers: static headers, OAuth 2.0 client credentials and Google ID tokens, each
 * a {@link PeerCredentials} the guarded connection asks per request origin, and
 * {@link createPeerCredentials} combining them by exact origin.
 *
 * @module
 */
export { createPeerCredentials } from './create-peer-credentials.js';
export type { CreatePeerCredentialsOptions, PeerCredentialEntry } from './create-peer-credentials.js';
export { staticHeaders } from './static-headers.js';
export type { StaticHeadersOptions } from './static-headers.js';
export { oauth2ClientCredentials } from './oauth2-client-credentials.js';
export type { OAuth2ClientCredentialsOptions } from './oauth2-client-credentials.js';
export { googleIdToken } from './google-id-token.js';
export type { GoogleIdTokenOptions, GoogleIdTokenSource } from './google-id-token.js';
export type { TokenRequestOutcome } from './token-cache.js';
