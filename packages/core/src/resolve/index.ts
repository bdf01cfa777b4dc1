/**
 * Merging, deduplication and admission of endpoint records.
 *
 * @module
 */
export { resolveEndpoints } from './resolve-endpoints.js';
export type { AdmittedEndpoint, RefusedRecord,  } from './resolve-endpoints.js';
