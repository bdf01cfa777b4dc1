/**
 * The discovery-trace explorer: the seed's interactive teaching model (sequential discovery
 * attempts against one endpoint) run by the library's own card cache, validator and matcher on
 * a virtual clock against a scripted endpoint; with scripted calls, the agent's health decided by
 * the library's `CallHealth` and `HealthTracker`; with a rollout, the staged rollout of card v2
 * decided by the library's `Rollouts`. `runTrace` gives self-describing plain data for
 * the CLI (`a2a-discovery trace`) and for a web page.
 *
 * @module
 */
export { runTrace, traceCacheSettings } from './run-trace.js';
export { TRACE_SCHEMA, TIMELINE_STAGES, TIMELINE_STAGE_NAMES, TRACE_CONDITIONS, TRACE_ROLLOUT_TRIGGERS } from './types.js';
export { rejectedAt } from './rejected-at.js';
export type {
  TraceAction,
  TraceRejectStage,
  TraceTrigger,
  TraceAttempt,
  TraceStats,
  TimelineStage,
  TraceEvent,
  TraceCacheState,
  TraceFreshness,
  TraceLibrarySettings,
  TraceModel,
  TraceResult,
  TraceHealth,
  TraceHealthStep,
  TraceRollout,
  TraceRolloutDecision,
  TraceRolloutStep,
  TraceRolloutSample,
} from './types.js';
export {
  DEFAULT_TRACE_INPUTS,
  TRACE_CONDITION_LABELS,
  TRACE_INPUT_LABELS,
  TRACE_LIMITS,
  resolveTraceInputs,
  traceInputText,
} from './inputs.js';
export type { TraceCondition, TraceInputs } from './inputs.js';
export { attributeChanges, compareTraces, tradeOffOf, COMPARED_ATTEMPT_FIELDS, DECISION_FIELDS, MAX_SINGLE_CHANGES } from './compare.js';
export type { TraceChange, AttemptChanges, StatChange, TraceAttribution, TraceComparison, SingleChangeEffect } from './compare.js';
export {
  ScriptedEndpoint,
  modeledCardBody,
  malformedBody,
  CARD_BYTES,
  CARD_VERSION_FIELD,
  TRACE_BASE_URL,
  TRACE_ORIGIN,
  TRACE_TAG,
  SIMULATED_CREDENTIAL,
} from './scripted-endpoint.js';
export type { ScriptedEndpointOptions, ScriptedExchange, CardVersionLabel } from './scripted-endpoint.js';
