/**
 * Merging, deduplication and admission of endpoint records.
 *
 * @module
 */
export { resolveEndpoints } from './resolve-endpoints.js';
export type { AdmittedEndpoint, RefusedRecord, ResolveResult } from './resolve-endpoints.js';
