/**
 * `a2a-discovery demo`: the whole product on loopback with no external service and no model key.
 * It starts real A2A agents (billing and returns on ADK JS `toA2a`, speaking 0.3; warranty on
 * @a2a-js/sdk 1.x, speaking only 1.0), a registry catalog the discovery sources poll, and the
 * service over a generated configuration, publishing its snapshot as an AI Catalog that a second,
 * downstream instance discovers the agents through; then it plays the seed's "morning of changes"
 * on a compressed clock and keeps running until stopped. After the morning its terminal goes quiet:
 * a summary, the dashboard's URL and the chat hint again, then only what an operator must know
 * (new snapshots and alerts, a failing endpoint once and its recovery once: see notices.ts).
 * Lines carry the scenario's clock and the wall clock the dashboard shows, `[10:07 (model) · 16:42:03]`;
 * after the morning, the wall clock only. This file starts the parts; narration.ts says what
 * happens, scenario.ts plays the morning.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DiscoveryEvent } from 'a2a-discovery';
import { loadConfig, resolveSecrets } from 'a2a-discovery/config';
import type { RunningService } from '../assembly/service.js';
import { startService } from '../assembly/service.js';
import { serviceOptionsFromConfig } from '../assembly/from-config.js';
import type { Logger } from '../telemetry/logger.js';
import { createLogger } from '../telemetry/logger.js';
import { stringify } from 'yaml';
import { LogLevel as AdkLogLevel, setLogLevel as setAdkLogLevel } from '@google/adk';
import type { DemoPeer } from './peers.js';
import { startAdkDemoAgent, startDemoCatalog, startV1DemoAgent } from './peers.js';
import { failureNotices } from './notices.js';
import { DemoClock, downstreamLine, narrateEvents, Narrator, printHeader, snapshotLine, wallClock } from './narration.js';
import { playScenario } from './scenario.js';

export interface DemoOptions {
  /** Scenario minutes per real second. Default 1 (the morning takes about 40 s). */
  speed?: number;
  /** Play the morning of changes. Default true. */
  scenario?: boolean;
  /** Service port; 0 picks a free one. Default 7340. */
  port?: number;
  /** Where the narration goes. */
  out?: (line: string) => void;
  logger?: Logger;
}

export interface RunningDemo {
  readonly url: string;
  readonly service: RunningService;
  /** The second instance, discovering the agents through the first one's AI Catalog. */
  readonly downstream: RunningService;
  readonly configFile: string;
  /** Resolves when the scenario has played (immediately with `scenario: false`). */
  readonly scenarioDone: Promise<void>;
  close(): Promise<void>;
}

const CARD_MAX_AGE_S = 1;
/** A failure that goes on is said again at most this often (wall clock). */
const REMINDER_MS = 5 * 60_000;

/**
 * Each tag carries reviewed examples: the router's vocabulary, and the labelled cases every
 * snapshot's routing is evaluated on before it is published (docs/routing.md).
 */
const VOCABULARY = [
  {
    tag: 'billing',
    description: 'Invoices, charges and payments.',
    keywords: ['invoice', 'charge', 'charged', 'payment', 'bill'],
    examples: ['Why was I charged twice this month?', 'Can I get a copy of invoice 4411?'],
  },
  {
    tag: 'returns',
    description: 'Starts and tracks product returns.',
    keywords: ['return', 'refund', 'label', 'exchange'],
    examples: ['I want to return my headphones', 'Where is the label for my exchange?'],
  },
  {
    tag: 'warranty',
    description: 'Warranty status and claims for hardware.',
    keywords: ['warranty', 'serial', 'guarantee', 'covered', 'repair'],
    examples: ['Is serial 123 under warranty?', 'My laptop needs a repair, is it covered?'],
  },
];

/**
 * Starts the demo: the peers, the service from a generated configuration file, the downstream
 * instance, the narration; then plays the morning in the background (`scenarioDone`). What
 * started is closed again when a later step fails.
 */
export async function runDemo(options: DemoOptions = {}): Promise<RunningDemo> {
  const speed = Math.max(0.1, options.speed ?? 1);
  const minute = 1000 / speed;
  const out = options.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const peers: DemoPeer[] = [];
  // The demo's peers deliberately run without authentication on loopback; ADK warns about that
  // at every start. The narration says what the demo is; keep ADK's log to errors.
  setAdkLogLevel(AdkLogLevel.ERROR);
  try {
    const started = await startPeers(peers);
    const { billing, returns, warranty, catalog } = started;
    const configDoc = demoConfig(started, options.port ?? 7340, minute);
    const dir = join(tmpdir(), `a2a-discovery-demo-${process.pid}`);
    const configFile = await writeDemoConfig(dir, configDoc);
    // The service runs from the generated file, through the same loading and checks as `serve`.
    const config = await loadConfig(configFile);
    const service = await startService({
      ...serviceOptionsFromConfig(config, await resolveSecrets(config)),
      // The narration below is the demo's interface; the log only carries errors.
      logger: options.logger ?? createLogger({ level: 'error' }),
    });

    const url = service.url;
    const first = service.loop.current();
    const clock = new DemoClock(minute, options.scenario !== false);
    const notices = failureNotices({ now: Date.now, reminderMs: REMINDER_MS, clock: wallClock });
    // Narration starts now (nothing published while the downstream instance starts is missed) and
    // is held until the header below is printed.
    const narrator = new Narrator(out);
    if (first) narrator.say(snapshotLine(clock.at(), first, first.agents.map((a) => a.localName)));
    const offNarration = narrateEvents(service.events, { clock, say: (line) => narrator.say(line), notices, version: (digest) => `v${service.loop.snapshots.get(digest)?.version ?? '?'}` });
    const catalogUrl = `${url}/.well-known/ai-catalog.json`;
    const downstream = await startDownstream(catalogUrl, configDoc, minute, options.logger).catch(async (err: unknown) => {
      offNarration();
      await service.close();
      throw err;
    });
    printHeader(out, { service, downstream, configFile, catalogUrl, peers: { billing: billing.baseUrl, returns: returns.baseUrl, warranty: warranty.baseUrl }, clock, speed });
    narrator.release();

    const offDownstream = downstream.events.subscribe((e: DiscoveryEvent) => {
      if (e.type === 'snapshot.published') out(downstreamLine(clock.at(), e, e.agents));
    });
    const firstDownstream = downstream.loop.current();
    if (firstDownstream) out(downstreamLine(clock.at(), firstDownstream, firstDownstream.agents.map((a) => a.localName)));

    const scenarioDone = playScenario({ service, downstream, catalog, returns, warranty, clock, out, notices, reminderMs: REMINDER_MS }, options.scenario !== false);
    return {
      url,
      service,
      downstream,
      configFile,
      scenarioDone,
      async close() {
        offNarration();
        offDownstream();
        warranty.setHang(false);
        await downstream.close();
        await service.close();
        await Promise.allSettled(peers.map((p) => p.close()));
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await Promise.allSettled(peers.map((p) => p.close()));
    throw err;
  }
}

/** The demo's loopback peers, each added to `peers` as it starts (to be closed): three agents and the registry catalog. */
async function startPeers(peers: DemoPeer[]) {
  const billing = await startAdkDemoAgent({
    name: 'billing',
    cardName: 'Billing Agent',
    skills: [{ id: 'invoices', name: 'Invoices', description: 'Explains invoices and charges.', tags: ['billing'] }],
    reply: (text) => `Billing here. About "${text}": invoice 4411 was charged once, on 3 November.`,
    maxAgeSeconds: CARD_MAX_AGE_S,
  });
  peers.push(billing);
  const returns = await startAdkDemoAgent({
    name: 'returns',
    cardName: 'Returns Agent',
    skills: [{ id: 'start-return', name: 'Start a return', description: 'Starts a product return.', tags: ['returns'] }],
    reply: (text) => `Returns here. About "${text}": I opened return R-1001; print the label from your account.`,
    maxAgeSeconds: CARD_MAX_AGE_S,
    // Version 2.0, deployed beside it under /v2: without the "exchange" skill (a breaking change),
    // and failing every second call; the scenario releases it at 10:22.
    release: {
      skills: [{ id: 'start-return', name: 'Start a return', description: 'Starts a product return.', tags: ['returns'] }],
      reply: (text) => `Returns 2.0 here. About "${text}": return R-2001 is open; the label is in your account.`,
      failEvery: 2,
    },
  });
  peers.push(returns);
  const warranty = await startV1DemoAgent({
    name: 'warranty',
    cardName: 'Warranty Agent',
    skills: [{ id: 'warranty-status', name: 'Warranty status', description: 'Looks up the warranty of a serial number.', tags: ['warranty'] }],
    reply: (text) => `Warranty here (A2A 1.0). About "${text}": serial 123 is covered until 2027-06-30.`,
    maxAgeSeconds: CARD_MAX_AGE_S,
  });
  peers.push(warranty);
  const catalog = await startDemoCatalog();
  peers.push({ name: 'catalog', baseUrl: catalog.url, port: 0, setHang: () => undefined, close: () => catalog.close() });
  catalog.set([{ name: 'returns-agent', url: returns.baseUrl, tags: ['returns'] }]);
  return { billing, returns, warranty, catalog };
}

/** The configuration the demo's service runs from, over its peers, with the timings of `minute` real milliseconds per model minute. */
function demoConfig(peers: Awaited<ReturnType<typeof startPeers>>, port: number, minute: number) {
  const { billing, returns, warranty, catalog } = peers;
  const origins = [billing, returns, warranty].map((p) => new URL(p.baseUrl).origin).concat(catalog.origin);
  return {
    // The service publishes its snapshot as an AI Catalog; the demo's second instance reads it.
    // It is an A2A agent too (server.a2a, on by default): its card names the routed agents as skills.
    server: { host: '127.0.0.1', port, catalog: { enabled: true, cacheControl: 'max-age=0', hostName: 'a2a-discovery demo' } },
    allow: origins,
    allowLoopback: true,
    vocabulary: VOCABULARY,
    needs: VOCABULARY.map((v) => ({ tag: v.tag, inputModes: ['text/plain'], outputModes: ['text/plain'] })),
    static: [{ name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice, charge and payment questions.', tags: ['billing'], critical: true }],
    sources: { registries: [{ id: 'catalog', url: catalog.url, pollIntervalMs: Math.round(minute) }] },
    health: { enterAfter: 2, leaveAfter: 3, staticEnterAfter: 1 },
    // Cards may be served stale for two (compressed) minutes after their expiry: then an agent
    // that keeps failing leaves the snapshots (a usable stale card keeps it in until then).
    cache: { minTtlMs: 0, backoffBaseMs: Math.round(minute), backoffMaxMs: Math.round(2 * minute), maxStaleMs: Math.round(2 * minute), totalTimeoutMs: Math.max(300, Math.round(minute)) },
    loop: { cycleIntervalMs: Math.max(100, Math.round(minute / 2)), startupTimeoutMs: 5_000 },
    root: { kind: 'routed', name: 'orchestrator', fallback: 'billing_agent' },
    routing: { minAccuracy: 0.9 },
    // A breaking change reaches 5 % of new sessions first; its calls are judged after 5 turns of
    // the changed agent (few, so the demo's customers need about a hundred sessions), and a step
    // lasts at least five model minutes and 20 turns.
    rollout: { steps: [5, 25, 100], holdMs: Math.round(5 * minute), minTurns: 20, minSamples: 5 },
  };
}

/** Writes the configuration as YAML into `dir` (made if missing); returns the file's path. */
async function writeDemoConfig(dir: string, configDoc: ReturnType<typeof demoConfig>): Promise<string> {
  await mkdir(dir, { recursive: true });
  const configFile = join(dir, 'discovery.yaml');
  await writeFile(configFile, `# Generated by a2a-discovery demo: the loopback peers below are started by the demo.\n${stringify(configDoc)}`);
  return configFile;
}

/**
 * A second instance that knows no agent: it discovers them through the first one's AI Catalog
 * (with its own allowlist: a catalog never widens it), in memory, with its own reviewed vocabulary.
 */
function startDownstream(catalogUrl: string, configDoc: ReturnType<typeof demoConfig>, minute: number, logger: Logger | undefined): Promise<RunningService> {
  return startService({
    port: 0,
    policy: { allow: [new URL(catalogUrl).origin, ...configDoc.allow], allowLoopback: true },
    vocabulary: VOCABULARY,
    needs: configDoc.needs,
    aiCatalogs: [{ id: 'upstream', catalogs: [catalogUrl], pollIntervalMs: Math.round(minute / 2) }],
    health: { enterAfter: 1, leaveAfter: 3 },
    cache: configDoc.cache,
    loop: { cycleIntervalMs: Math.max(100, Math.round(minute / 2)), startupTimeoutMs: 5_000 },
    store: 'memory',
    logger: logger ?? createLogger({ level: 'error' }),
  });
}
