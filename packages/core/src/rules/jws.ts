/**
 * JWS algorithms, one list each: what a card signature may use (the verifier, the configuration's
 * `signatures.algorithms`) and what a person's OIDC token may use (the service's `server.oidc`).
 * Only asymmetric algorithms: `none` and every HMAC (`HS*`) can never be allowed, since a shared
 * secret would let anyone who can verify also sign.
 *
 * @module
 */

/** Algorithms a card signature may use (RFC 7518 names, and `Ed25519` from the JOSE registry). */
export const SIGNATURE_ALGORITHMS = Object.freeze(['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'] as const);

/** Those accepted when the configuration names none. */
export const DEFAULT_SIGNATURE_ALGORITHMS: readonly string[] = Object.freeze(['ES256', 'ES384', 'EdDSA', 'RS256', 'PS256']);

/** Algorithms a person's OIDC token may be signed with (all accepted when `server.oidc.algorithms` names none). */
export const OIDC_ALGORITHMS = Object.freeze(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const);
