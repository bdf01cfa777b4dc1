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
 * after the morning, the wall clock only.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DiscoveryEvent } from 'a2a-discovery';
import type { AlertEvent } from 'a2a-discovery/internal';
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

const pad = (n: number): string => String(n).padStart(2, '0');
/** The wall clock as the dashboard shows it (local time), to the second. */
function wallClock(ms: number): string {
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// eslint-disable-next-line max-lines-per-function -- PENDING-SPLIT (issue 40): being split now
export async function runDemo(options: DemoOptions = {}): Promise<RunningDemo> {
  const speed = Math.max(0.1, options.speed ?? 1);
  const minute = 1000 / speed;
  const out = options.out ?? ((line: string) => void process.stdout.write(`${line}\n`));
  const peers: DemoPeer[] = [];
  // The demo's peers deliberately run without authentication on loopback; ADK warns about that
  // at every start. The narration says what the demo is; keep ADK's log to errors.
  setAdkLogLevel(AdkLogLevel.ERROR);
  try {
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

    const origins = [billing, returns, warranty].map((p) => new URL(p.baseUrl).origin).concat(catalog.origin);
    // Each tag carries reviewed examples: the router's vocabulary, and the labelled cases every
    // snapshot's routing is evaluated on before it is published (docs/routing.md).
    const vocabulary = [
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
    const configDoc = {
      // The service publishes its snapshot as an AI Catalog; the demo's second instance reads it.
      // It is an A2A agent too (server.a2a, on by default): its card names the routed agents as skills.
      server: { host: '127.0.0.1', port: options.port ?? 7340, catalog: { enabled: true, cacheControl: 'max-age=0', hostName: 'a2a-discovery demo' } },
      allow: origins,
      allowLoopback: true,
      vocabulary,
      needs: vocabulary.map((v) => ({ tag: v.tag, inputModes: ['text/plain'], outputModes: ['text/plain'] })),
      static: [{ name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice, charge and payment questions.', tags: ['billing'], critical: true }],
      sources: { registries: [{ id: 'catalog', url: catalog.url, pollIntervalMs: Math.round(minute) }] },
      health: { enterAfter: 2, leaveAfter: 3, staticEnterAfter: 1 },
      // Cards may be served stale for two (compressed) minutes after their expiry: then an agent
      // that keeps failing leaves the snapshots (a usable stale card keeps it in until then).
      cache: { minTtlMs: 0, backoffBaseMs: Math.round(minute), backoffMaxMs: Math.round(2 * minute), maxStaleMs: Math.round(2 * minute), totalTimeoutMs: Math.max(300, Math.round(minute)) },
      loop: { cycleIntervalMs: Math.max(100, Math.round(minute / 2)), startupTimeoutMs: 5_000 },
      root: { kind: 'routed', name: 'orchestrator', fallback: 'billing_agent' },
      routing: { minAccuracy: 0.9 },
    };
    const dir = join(tmpdir(), `a2a-discovery-demo-${process.pid}`);
    await mkdir(dir, { recursive: true });
    const configFile = join(dir, 'discovery.yaml');
    await writeFile(configFile, `# Generated by a2a-discovery demo: the loopback peers below are started by the demo.\n${stringify(configDoc)}`);

    // The service runs from the generated file, through the same loading and checks as `serve`.
    const config = await loadConfig(configFile);
    const service = await startService({
      ...serviceOptionsFromConfig(config, await resolveSecrets(config)),
      // The narration below is the demo's interface; the log only carries errors.
      logger: options.logger ?? createLogger({ level: 'error' }),
    });

    const url = service.url;
    const first = service.loop.current();
    const clockStart = Date.now();
    // During the scenario: its model clock (10:00 at the start) and the wall clock; after it, or
    // without it, the wall clock only.
    let modelTime = options.scenario !== false;
    const at = () => {
      const now = Date.now();
      if (!modelTime) return wallClock(now);
      const m = Math.floor((now - clockStart) / minute);
      return `${10 + Math.floor(m / 60)}:${pad(m % 60)} (model) · ${wallClock(now)}`;
    };
    const notices = failureNotices({ now: Date.now, reminderMs: REMINDER_MS, clock: wallClock });
    // Endpoints out of snapshots: their failures are narrated as retries, not as stale serving.
    const removed = new Set<string>();
    // Narration starts now (nothing published while the downstream instance starts is missed) and
    // is held until the header below is printed.
    let held: string[] | undefined = first ? [`[${at()}] snapshot v${first.version} ${first.digest.slice(0, 12)}: ${first.agents.map((a) => a.localName).join(', ') || '(no agents)'}`] : [];
    const say = (line: string): void => void (held !== undefined ? held.push(line) : out(line));
    const offNarration = service.events.subscribe((e: DiscoveryEvent) => {
      if (e.type === 'snapshot.published') say(`[${at()}] snapshot v${e.version} ${e.digest.slice(0, 12)}: ${e.agents.join(', ') || '(no agents)'}`);
      else if (e.type === 'alert' && ['skills-changed', 'repeated-failures', 'mass-removal', 'endpoint-changed'].includes((e as AlertEvent).kind)) say(`[${at()}] alert ${e.kind}: ${e.message}`);
      else if (e.type === 'card.result' && (e.outcome === 'stale' || e.outcome === 'failed')) {
        // Said once, then at most every REMINDER_MS while it goes on; a retry on backoff is not news.
        const meanwhile = removed.has(e.endpoint) ? 'out of snapshots, retried on backoff' : e.outcome === 'stale' ? 'its card is served stale' : 'no card to serve, retried on backoff';
        const line = notices.failed({ endpoint: e.endpoint, code: e.code ?? 'error', meanwhile });
        if (line !== undefined) say(`[${at()}] ${line}`);
      } else if (e.type === 'card.result' && e.outcome !== 'invalid') {
        const line = notices.answered(e.endpoint);
        if (line !== undefined) say(`[${at()}] ${line}`);
      } else if (e.type === 'health.changed' && (e.to === 'degraded' || e.to === 'removed')) say(`[${at()}] ${e.endpoint} is ${e.to}`);
      if (e.type === 'health.changed') {
        if (e.to === 'removed') removed.add(e.endpoint);
        else removed.delete(e.endpoint);
      }
      else if (e.type === 'routing.evaluated') {
        say(
          `[${at()}] routing of candidate v${e.version} ${e.digest.slice(0, 12)}: ${(e.accuracy * 100).toFixed(0)}% of ${e.evaluated} labelled cases routed right ` +
            `(threshold ${(e.minAccuracy * 100).toFixed(0)}%)${e.passed ? '' : e.held ? '; held' : '; below the threshold, alert raised'}`,
        );
      } else if (e.type === 'alert' && e.kind === 'routing-accuracy') say(`[${at()}] alert ${e.kind}: ${e.message}`);
    });
    // A second instance that knows no agent: it discovers them through the first one's AI Catalog
    // (with its own allowlist: a catalog never widens it), in memory, with its own reviewed vocabulary.
    const catalogUrl = `${url}/.well-known/ai-catalog.json`;
    const downstream = await startService({
      port: 0,
      policy: { allow: [new URL(url).origin, ...origins], allowLoopback: true },
      vocabulary,
      needs: configDoc.needs,
      aiCatalogs: [{ id: 'upstream', catalogs: [catalogUrl], pollIntervalMs: Math.round(minute / 2) }],
      health: { enterAfter: 1, leaveAfter: 3 },
      cache: configDoc.cache,
      loop: { cycleIntervalMs: Math.max(100, Math.round(minute / 2)), startupTimeoutMs: 5_000 },
      store: 'memory',
      logger: options.logger ?? createLogger({ level: 'error' }),
    }).catch(async (err: unknown) => {
      offNarration();
      await service.close();
      throw err;
    });
    const dashboardLine = `  dashboard   ${url}/`;
    const chatLine = `  chat        curl -s ${url}/api/chat -H 'content-type: application/json' -d '{"sessionId":"me","message":"Is serial 123 under warranty?"}'`;
    out(`a2a-discovery demo`);
    out(dashboardLine);
    out(`  API         ${url}/api/snapshot   ${url}/api/endpoints   ${url}/metrics`);
    out(`  config      ${configFile}`);
    out(`  store       ${service.store.status().location} (SQLite: snapshots, pins, conversations and the journal survive a restart)`);
    out(chatLine);
    out(`  peers       billing ${billing.baseUrl} (A2A 0.3)  returns ${returns.baseUrl} (0.3)  warranty ${warranty.baseUrl} (1.0 only)`);
    out(`  A2A         ${url}/.well-known/agent-card.json  POST ${url}/api/a2a (the orchestrator itself as an A2A agent, 1.0 and 0.3; each contextId a session)`);
    out(`  catalog     ${catalogUrl} (this instance's snapshot as an AI Catalog)`);
    out(`  downstream  ${downstream.url}/ a second instance that discovers the agents through that catalog`);
    if (modelTime) out(`  times       [10:00 (model) · ${wallClock(Date.now())}]: the scenario's clock (${+speed.toFixed(2)} model minute${speed === 1 ? '' : 's'} per second), then the wall clock the dashboard shows`);
    for (const line of held) out(line);
    held = undefined;


    const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
    const waitFor = async (check: () => boolean, limitMs: number) => {
      const end = Date.now() + limitMs;
      while (!check() && Date.now() < end) await sleep(50);
      return check();
    };
    const names = () => service.loop.current()?.agents.map((a) => a.localName) ?? [];

    const offDownstream = downstream.events.subscribe((e: DiscoveryEvent) => {
      if (e.type === 'snapshot.published') out(`[${at()}] downstream snapshot v${e.version} ${e.digest.slice(0, 12)} (through the catalog): ${e.agents.join(', ') || '(no agents)'}`);
    });
    const downstreamNames = () => downstream.loop.current()?.agents.map((a) => a.localName) ?? [];

    const firstDownstream = downstream.loop.current();
    if (firstDownstream) out(`[${at()}] downstream snapshot v${firstDownstream.version} ${firstDownstream.digest.slice(0, 12)} (through the catalog): ${firstDownstream.agents.map((a) => a.localName).join(', ') || '(no agents)'}`);

    const scenarioDone = (async () => {
      if (options.scenario === false) return;
      await waitFor(() => names().includes('returns_agent'), 30 * minute + 10_000);
      const early = await service.sessions.run('demo-early', 'I want to return my headphones');
      out(`[${at()}] session demo-early (v${service.loop.snapshots.get(early.digest)?.version}) → ${early.author}: ${early.reply}`);

      await sleep(Math.max(0, clockStart + 5 * minute - Date.now()));
      out(`[${at()}] the warranty team deploys; the registry catalog lists it`);
      catalog.set([
        { name: 'returns-agent', url: returns.baseUrl, tags: ['returns'] },
        { name: 'warranty-agent', url: warranty.baseUrl, tags: ['warranty'] },
      ]);
      await waitFor(() => names().includes('warranty_agent'), 15 * minute + 10_000);
      const question = 'Is serial 123 under warranty?';
      const mid = await service.sessions.run('demo-mid', question);
      const early2 = await service.sessions.run('demo-early', question);
      out(`[${at()}] "${question}"`);
      out(`          new session demo-mid   (v${service.loop.snapshots.get(mid.digest)?.version}) → ${mid.author}: ${mid.reply}`);
      out(`          pinned session demo-early (v${service.loop.snapshots.get(early2.digest)?.version}) → ${early2.author}: ${early2.reply}`);
      await service.sessions.end('demo-mid');
      if (await waitFor(() => downstreamNames().includes('warranty_agent'), 5 * minute + 10_000)) {
        const remote = await downstream.sessions.run('demo-downstream', question);
        out(`          downstream session demo-downstream (v${downstream.loop.snapshots.get(remote.digest)?.version}) → ${remote.author}: ${remote.reply}`);
        await downstream.sessions.end('demo-downstream');
      } else out(`[${at()}] the downstream instance has not seen warranty_agent yet`);

      await sleep(Math.max(0, clockStart + 20 * minute - Date.now()));
      out(`[${at()}] the returns team adds an "exchange" skill to its card`);
      (returns.card.skills as unknown[]).push({ id: 'exchange', name: 'Exchange an item', description: 'Exchanges an item for another size.', tags: ['returns'] });
      const before = service.loop.current()?.digest;
      await waitFor(() => service.loop.current()?.digest !== before, 10 * minute + 10_000);

      await sleep(Math.max(0, clockStart + 30 * minute - Date.now()));
      out(`[${at()}] the warranty card endpoint stops answering`);
      warranty.setHang(true);
      await waitFor(() => !names().includes('warranty_agent'), 20 * minute + 20_000);

      const late = await service.sessions.run('demo-late', question);
      out(`[${at()}] new session demo-late (v${service.loop.snapshots.get(late.digest)?.version}) → ${late.author}: ${late.reply}`);
      out(`[${at()}] session demo-early is still pinned to v${service.loop.snapshots.get(service.trees.digestOf('demo-early') ?? '')?.version}`);
      const current = service.loop.current();
      const failing = notices.failing().map((f) => `${f.endpoint} (${f.code} since ${wallClock(f.since)})`);
      out(
        `[${at()}] the morning is over: current snapshot v${current?.version} (${current?.agents.map((a) => a.localName).join(', ') || 'no agents'}); ` +
          `failing: ${failing.join(', ') || 'none'}`,
      );
    })()
      .catch((err: unknown) => out(`scenario stopped: ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => {
        // The terminal goes quiet: the wall clock only, and the two lines an operator needs again.
        modelTime = false;
        if (options.scenario === false) return;
        out(`The service keeps running (Ctrl-C to stop). From now on only news is printed: snapshots, alerts, an endpoint that starts failing (again at most every ${REMINDER_MS / 60_000} minutes while it fails) and its recovery.`);
        out(dashboardLine);
        out(chatLine);
      });

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
