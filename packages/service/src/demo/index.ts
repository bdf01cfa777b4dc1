/**
 * The embedded demo: real A2A peers, a registry catalog and the service, playing the seed's
 * morning of changes.
 *
 * @module
 */
export { runDemo } from './run-demo.js';
export type { DemoOptions, RunningDemo } from './run-demo.js';
export { startAdkDemoAgent, startV1DemoAgent, startDemoCatalog, DemoModel } from './peers.js';
export type { DemoPeer } from './peers.js';
