/**
 * The discovery control loop.
 *
 * @module
 */
export { DiscoveryLoop } from './discovery-loop.js';
export type { DiscoveryLoopOptions, EndpointStatus, SnapshotListener, RoutingVerdict } from './discovery-loop.js';
