/**
 * The discovery control loop.
 *
 * @module
 */
export { DiscoveryLoop } from './discovery-loop.js';
export type { DiscoveryLoopOptions, LoopReconfiguration } from './discovery-loop.js';
export { ENDPOINT_VERDICTS } from '../health/endpoint-causes.js';
export type { EndpointVerdict } from '../health/endpoint-causes.js';
export type { EndpointStatus } from './endpoint-views.js';
export type { SnapshotListener } from './publisher.js';
export type { RoutingVerdict } from './routing-gate.js';
export type {  LookalikePolicy } from '../rules/lookalike.js';
