/**
 * The service: HTTP API, SSE feed, metrics and dashboard over the discovery loop and the trees.
 *
 * @module
 */
export { startService } from './service.js';
export type { ServiceOptions, RunningService } from './service.js';
export type { Federation, FederationPeer } from '../registry/federation.js';
export { serviceOptionsFromConfig } from './from-config.js';
export { createApp, snapshotJson } from './app.js';
export type { AppOptions } from './app.js';
export type { CatalogSigning } from './ai-catalog-route.js';
export type { A2aSettings } from './a2a/routes.js';
export { createLogger, logEvents } from './logger.js';
// OpenTelemetry from the OTEL_* variables, for an application that embeds startService (serve starts it itself).
export { startTelemetry } from './telemetry.js';
export type { Telemetry, TelemetrySettings } from './telemetry.js';
export { createMetrics } from './metrics.js';
export { EventBuffer } from './event-buffer.js';
export { SnapshotArchive } from './snapshot-archive.js';
