/**
 * The service: HTTP API, SSE feed, metrics and dashboard over the discovery loop and the trees.
 *
 * @module
 */
export { startService } from './assembly/service.js';
export type { ServiceOptions, RunningService } from './assembly/service.js';
export type { Federation, FederationPeer } from './registry/federation.js';
export { serviceOptionsFromConfig } from './assembly/from-config.js';
export { createApp } from './http/app.js';
export type { AppOptions } from './http/context.js';
export type { CatalogSigning } from './http/routes/ai-catalog-route.js';
export type { A2aSettings } from './http/a2a/routes.js';
export { createLogger } from './telemetry/logger.js';
// OpenTelemetry from the OTEL_* variables, for an application that embeds startService (serve starts it itself).
export { startTelemetry } from './telemetry/telemetry.js';
export type { Telemetry, TelemetrySettings } from './telemetry/telemetry.js';
export { createMetrics } from './telemetry/metrics.js';
export { SnapshotArchive } from './assembly/snapshot-archive.js';
