/**
 * The embedded demo: real A2A peers, a registry catalog and the service, playing the seed's
 * morning of changes.
 *
 * @module
 */
export { runDemo } from './run-demo.js';
export type { RunningDemo } from './run-demo.js';
