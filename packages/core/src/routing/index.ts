/**
 * Routing that scales and is measured: labelled cases, the evaluation of a snapshot's routers
 * (accuracy overall and per tag, a confusion table, every fallback), stand-in snapshots and
 * leaves, and the publication gate the discovery loop runs. See docs/routing.md.
 *
 * @module
 */
export { casesFromVocabulary, parseCases, loadCases } from './cases.js';
export type { RoutingCase } from './cases.js';
export { evaluateRouting, formatRoutingReport, NO_AGENT } from './evaluate-routing.js';
export type { EvaluateRoutingOptions, EvaluationRoot, RoutingReport, CaseResult, LabelAccuracy } from './evaluate-routing.js';
export { standInSnapshot, standInPeers, standInCandidates, StandInAgent } from './stand-in.js';
export type { StandInPeer, StandInOptions } from './stand-in.js';
