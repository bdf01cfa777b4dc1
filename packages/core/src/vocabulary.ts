/**
 * a2a-discovery/vocabulary: the words the library's verdicts, causes, trace controls and lanes
 * are called by (docs/vocabulary.md), as plain data. Nothing here runs: importing this entry loads
 * a few small tables and none of the library, so a command line's `--help`, a form or a chart can
 * list them without loading what decides them. The same names are exported by the root entry and
 * `a2a-discovery/explorer`; they are one table each, defined once.
 *
 * @module
 */
export { ENDPOINT_CAUSES, ENDPOINT_VERDICTS } from './health/endpoint-causes.js';
export type { CauseWords, EndpointCause, EndpointVerdict } from './health/endpoint-causes.js';
export { TIMELINE_STAGES, TIMELINE_STAGE_NAMES, TRACE_CONDITIONS, TRACE_ROLLOUT_TRIGGERS } from './explorer/types.js';
export type { TimelineStage } from './explorer/types.js';
export type { TraceCondition } from './explorer/inputs.js';
export { DNS_AID_DEFAULT_TTL_SECONDS } from './rules/dns-aid.js';
