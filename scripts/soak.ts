/**
 * A bounded soak of `a2a-discovery serve` (issue #12; `npm run soak -- --duration 180`; not part of
 * `npm test`). docs/security.md ("Soak") has the figures of a run and how to read them.
 *
 * Three processes, all on loopback:
 *
 * - the peers (this script with `--peers`): the demo's real A2A agents (billing and returns on ADK JS
 *   `toA2a`, warranty on @a2a-js/sdk 1.x) and a registry catalog;
 * - `a2a-discovery serve` over a generated configuration (the built
 *   `packages/service/dist/cli/main.js`, or the sources through tsx with `--from-source`): the
 *   process measured;
 * - this script: the load, the probes and the report.
 *
 * The load, for `--duration` seconds after the service is ready:
 *
 * - `--concurrency` workers, each pausing `--think-ms` between calls, over a weighted mix of
 *   GET /api/snapshot, /api/snapshots, /api/endpoints, /api/endpoints/card, /api/diff, /api/events,
 *   /api/sessions, /metrics, POST /api/chat (conversations of a few turns that are then ended with
 *   DELETE, plus abandoned anonymous sessions left to the idle expiry), POST /api/refresh, and a
 *   few hostile calls (text/plain, foreign Host, foreign Origin, oversized body) that must be refused;
 * - `--readers` SSE clients that read, reconnecting every 20–40 s with Last-Event-ID, and
 *   `--non-readers` SSE clients that never read (the service drops them once their queue is full;
 *   they come back). Clients bind to distinct 127.0.0.x addresses, 8 per address, so the per-client
 *   cap and the overall cap both apply; every 3 s one more stream is attempted from a full address
 *   and one from a fresh address (past the caps: 503);
 * - churn from the peers: every 20 s the catalog lists or unlists the warranty agent, every 30 s the
 *   returns agent's card gains or loses a skill, so snapshots are published and trees are built;
 * - a rotating AI Catalog (issue #24): an allowlisted catalog that lists `--churn-entries` new card
 *   URLs on every poll (the service polls it every second), so endpoints are discovered, fetched
 *   and evicted after `loop.removalGraceMs` (`--removal-grace-ms`) without end;
 * - inspector traffic (issue #24): `--inspect-clients` clients, each from its own address, inspect a
 *   nested AI Catalog (a root listing 5 catalogs of 3 cards: 21 upstream requests) one after the
 *   other, pausing `--inspect-ms` in between.
 *
 * Measured: the service's RSS (VmRSS from /proc/<pid>/status) every `--sample-ms`; its heap and
 * RSS right after a forced full GC (through `serve`'s inspector on 127.0.0.1, a random port) at the
 * start, after warm-up, every `--gc-every` seconds and at the end, since raw RSS follows V8's heap
 * saw-tooth; /healthz latency continuously (one probe every `--healthz-ms` on its own keep-alive
 * connection; probes in flight during a forced GC are reported apart); every response by route and
 * status; the refusal counters from /metrics; the kernel queues behind the non-readers (`ss`); that
 * every stream is released once the clients are gone; and the time `serve` takes to stop on SIGTERM.
 *
 * After the load the catalog stops rotating; once the removal grace has passed, `/api/activity`
 * must list only endpoints `/api/endpoints` still has (the evicted ones are freed).
 *
 * Exit 0 when, from warm-up to the end, RSS grew by at most `--max-growth-mb` and the heap by at
 * most `--max-heap-growth-mb`, RSS from the start (before any load) to the end by at most
 * `--max-start-growth-mb` (all after a forced GC), every /healthz probe was answered 200 within
 * `--healthz-bound-ms`, `/api/activity` listed only current endpoints, every stream was released
 * and `serve` stopped cleanly; 1 otherwise; 2 on a usage error or a run that could not start.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync, fork, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { WebSocket } from 'undici';
import { stringify } from 'yaml';

const HERE = fileURLToPath(import.meta.url);
const ROOT = join(dirname(HERE), '..');
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// The peers' process

interface PeersReady {
  type: 'ready';
  billing: string;
  returns: string;
  warranty: string;
  catalogUrl: string;
  catalogOrigin: string;
  /** The rotating AI Catalog (new card URLs on every read while rotating). */
  churnCatalogUrl: string;
  /** The nested AI Catalog the inspector clients inspect. */
  nestedCatalogUrl: string;
  churnOrigin: string;
}
type PeerCommand = { type: 'warranty'; listed: boolean } | { type: 'exchange'; on: boolean } | { type: 'rotate'; on: boolean } | { type: 'close' };

const AI_CATALOG_TYPE = 'application/ai-catalog+json';
const CARD_TYPE = 'application/a2a-agent-card+json';

/**
 * The churn server: `/churn.json` is an AI Catalog listing `entries` card URLs never seen before on
 * every read while rotating (the same ones once stopped); `/nested.json` lists five catalogs of three
 * cards each (for the inspector); `/cards/<id>.json` is a valid A2A 0.3 card for any id, whose tag no
 * need asks for (the endpoints are discovered, fetched and dropped, never part of a snapshot).
 */
async function startChurnServer(entries: number): Promise<{ origin: string; rotate(on: boolean): void; close(): Promise<void> }> {
  let generation = 0;
  let rotating = true;
  let origin = '';
  const card = (id: string) => ({
    name: `Churn ${id}`,
    description: `Rotating catalog entry ${id}.`,
    url: `${origin}/cards/${id}/jsonrpc`,
    version: '1.0.0',
    protocolVersion: '0.3.0',
    capabilities: { streaming: false },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [{ id: 'churn', name: 'churn', description: 'Comes and goes.', tags: ['churn'] }],
  });
  const cardEntry = (id: string) => ({ identifier: `urn:air:soak:agent:${id}`, type: CARD_TYPE, url: `${origin}/cards/${id}.json` });
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    let body: unknown;
    let type = 'application/json';
    if (path === '/churn.json') {
      if (rotating) generation++;
      body = { specVersion: '1.0', entries: Array.from({ length: entries }, (_, i) => cardEntry(`g${generation}-${i}`)) };
      type = AI_CATALOG_TYPE;
    } else if (path === '/nested.json') {
      body = { specVersion: '1.0', entries: Array.from({ length: 5 }, (_, i) => ({ identifier: `urn:air:soak:catalog:n${i}`, type: AI_CATALOG_TYPE, url: `${origin}/nested/n${i}.json` })) };
      type = AI_CATALOG_TYPE;
    } else if (/^\/nested\/n\d+\.json$/.test(path)) {
      const n = /n(\d+)/.exec(path)![1];
      body = { specVersion: '1.0', entries: Array.from({ length: 3 }, (_, j) => cardEntry(`n${n}-${j}`)) };
      type = AI_CATALOG_TYPE;
    } else {
      const m = /^\/cards\/([A-Za-z0-9-]+)\.json$/.exec(path);
      if (m) body = card(m[1]!);
    }
    if (body === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': type, 'cache-control': 'no-cache' });
    res.end(JSON.stringify(body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    origin,
    rotate: (on) => (rotating = on),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function runPeers(): Promise<void> {
  const { startAdkDemoAgent, startV1DemoAgent, startDemoCatalog } = await import('../packages/service/src/demo/peers.js');
  const { LogLevel, setLogLevel } = await import('@google/adk');
  setLogLevel(LogLevel.ERROR);
  const maxAgeSeconds = 1;
  const billing = await startAdkDemoAgent({
    name: 'billing',
    cardName: 'Billing Agent',
    skills: [{ id: 'invoices', name: 'Invoices', description: 'Explains invoices and charges.', tags: ['billing'] }],
    reply: (text) => `Billing here. About "${text}": invoice 4411 was charged once.`,
    maxAgeSeconds,
  });
  const returns = await startAdkDemoAgent({
    name: 'returns',
    cardName: 'Returns Agent',
    skills: [{ id: 'start-return', name: 'Start a return', description: 'Starts a product return.', tags: ['returns'] }],
    reply: (text) => `Returns here. About "${text}": return R-1001 is open.`,
    maxAgeSeconds,
  });
  const warranty = await startV1DemoAgent({
    name: 'warranty',
    cardName: 'Warranty Agent',
    skills: [{ id: 'warranty-status', name: 'Warranty status', description: 'Looks up the warranty of a serial number.', tags: ['warranty'] }],
    reply: (text) => `Warranty here (A2A 1.0). About "${text}": serial 123 is covered until 2027-06-30.`,
    maxAgeSeconds,
  });
  const catalog = await startDemoCatalog();
  const churnEntries = Number(process.argv[process.argv.indexOf('--peers') + 1] ?? 20);
  const churn = await startChurnServer(Number.isFinite(churnEntries) ? churnEntries : 20);
  const listing = (withWarranty: boolean) => [
    { name: 'returns-agent', url: returns.baseUrl, tags: ['returns'] },
    ...(withWarranty ? [{ name: 'warranty-agent', url: warranty.baseUrl, tags: ['warranty'] }] : []),
  ];
  catalog.set(listing(true));
  const skills = returns.card.skills as unknown[];
  const exchange = { id: 'exchange', name: 'Exchange an item', description: 'Exchanges an item for another size.', tags: ['returns'] };
  const close = async () => {
    await Promise.allSettled([billing.close(), returns.close(), warranty.close(), catalog.close(), churn.close()]);
    process.exit(0);
  };
  process.on('message', (m: PeerCommand) => {
    if (m.type === 'warranty') catalog.set(listing(m.listed));
    else if (m.type === 'exchange') {
      const i = skills.indexOf(exchange);
      if (m.on && i < 0) skills.push(exchange);
      if (!m.on && i >= 0) skills.splice(i, 1);
    } else if (m.type === 'rotate') churn.rotate(m.on);
    else void close();
  });
  process.on('disconnect', () => void close());
  const ready: PeersReady = { type: 'ready', billing: billing.baseUrl, returns: returns.baseUrl, warranty: warranty.baseUrl, catalogUrl: catalog.url, catalogOrigin: catalog.origin, churnCatalogUrl: `${churn.origin}/churn.json`, nestedCatalogUrl: `${churn.origin}/nested.json`, churnOrigin: churn.origin };
  process.send?.(ready);
}

// ---------------------------------------------------------------------------------------------
// The soak

interface Options {
  duration: number;
  warmup: number;
  concurrency: number;
  thinkMs: number;
  readers: number;
  nonReaders: number;
  sampleMs: number;
  healthzMs: number;
  maxGrowthMb: number;
  maxHeapGrowthMb: number;
  gcEvery: number;
  healthzBoundMs: number;
  idleMs: number;
  churnEntries: number;
  removalGraceMs: number;
  inspectClients: number;
  inspectMs: number;
  maxStartGrowthMb: number;
  fromSource: boolean;
  json?: string;
}

const USAGE = `Usage: npm run soak -- [flags]   (or: node --import tsx scripts/soak.ts [flags])

  --duration <s>          load duration after the service is ready (default 180, at most 3600)
  --minutes <n>           the same in minutes (e.g. --minutes 10, the issue #24 run)
  --warmup <s>            seconds of load before the baseline is taken (default 60)
  --concurrency <n>       API workers (default 4, at most 32)
  --think-ms <ms>         pause of each worker between calls (default 25)
  --readers <n>           SSE clients that read (default 12)
  --non-readers <n>       SSE clients that never read (default 52; readers + non-readers <= 200)
  --sample-ms <ms>        RSS sampling interval (default 2000)
  --healthz-ms <ms>       pause between /healthz probes (default 100)
  --gc-every <s>          force a full GC in serve (through its inspector, on loopback) and read
                          its heap at the start, after warm-up, every <s> seconds and at the end
                          (default 30; 0: no inspector, RSS samples only)
  --max-growth-mb <n>     fail when RSS at the end exceeds RSS after warm-up by more (default 32;
                          both read right after a forced GC unless --gc-every 0)
  --max-heap-growth-mb <n> fail when the heap after GC grew by more from warm-up to the end (default 8)
  --healthz-bound-ms <n>  fail when a /healthz probe takes longer or is not a 200 (default 500)
  --max-start-growth-mb <n> fail when RSS after GC at the end exceeds RSS after GC at the start
                          (before any load) by more (default 50, issue #24)
  --idle-ms <ms>          sessions.idleTimeoutMs of the service (default 30000)
  --churn-entries <n>     new card URLs the rotating AI Catalog lists on each poll (default 20; 0: off)
  --removal-grace-ms <ms> loop.removalGraceMs of the service: evicted endpoints go after it (default 5000)
  --inspect-clients <n>   clients inspecting the nested AI Catalog, each from its own address (default 2)
  --inspect-ms <ms>       pause of each inspector client between inspections (default 500)
  --from-source           run serve from src/ through tsx instead of dist/
  --json <file>           also write the figures as JSON
`;

function parseOptions(): Options | string {
  let values;
  try {
    ({ values } = parseArgs({
      args: process.argv.slice(2),
      options: {
        duration: { type: 'string' },
        minutes: { type: 'string' },
        'max-start-growth-mb': { type: 'string' },
        'churn-entries': { type: 'string' },
        'removal-grace-ms': { type: 'string' },
        'inspect-clients': { type: 'string' },
        'inspect-ms': { type: 'string' },
        warmup: { type: 'string' },
        concurrency: { type: 'string' },
        'think-ms': { type: 'string' },
        readers: { type: 'string' },
        'non-readers': { type: 'string' },
        'sample-ms': { type: 'string' },
        'healthz-ms': { type: 'string' },
        'max-growth-mb': { type: 'string' },
        'max-heap-growth-mb': { type: 'string' },
        'gc-every': { type: 'string' },
        'healthz-bound-ms': { type: 'string' },
        'idle-ms': { type: 'string' },
        'from-source': { type: 'boolean' },
        json: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    return (err as Error).message;
  }
  if (values.help) return '';
  const num = (name: keyof typeof values, fallback: number, min: number, max: number): number => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number from ${min} to ${max}`);
    return n;
  };
  try {
    const o: Options = {
      duration: values.minutes !== undefined ? num('minutes', 3, 0.5, 60) * 60 : num('duration', 180, 10, 3600),
      warmup: num('warmup', 60, 0, 600),
      concurrency: num('concurrency', 4, 1, 32),
      thinkMs: num('think-ms', 25, 0, 10_000),
      readers: num('readers', 12, 0, 200),
      nonReaders: num('non-readers', 52, 0, 200),
      sampleMs: num('sample-ms', 2000, 200, 60_000),
      healthzMs: num('healthz-ms', 100, 10, 10_000),
      maxGrowthMb: num('max-growth-mb', 32, 1, 4096),
      maxHeapGrowthMb: num('max-heap-growth-mb', 8, 0.1, 4096),
      gcEvery: num('gc-every', 30, 0, 3600),
      healthzBoundMs: num('healthz-bound-ms', 500, 1, 60_000),
      idleMs: num('idle-ms', 30_000, 1_000, 3_600_000),
      churnEntries: num('churn-entries', 20, 0, 1_000),
      removalGraceMs: num('removal-grace-ms', 5_000, 0, 600_000),
      inspectClients: num('inspect-clients', 2, 0, 16),
      inspectMs: num('inspect-ms', 500, 0, 60_000),
      maxStartGrowthMb: num('max-start-growth-mb', 50, 1, 4096),
      fromSource: values['from-source'] === true,
      ...(values.json !== undefined && { json: values.json }),
    };
    if (o.readers + o.nonReaders > 200) return 'readers + non-readers must be at most 200';
    if (values.minutes !== undefined && values.duration !== undefined) return 'give --minutes or --duration, not both';
    if (o.warmup >= o.duration) return '--warmup must be shorter than --duration';
    return o;
  } catch (err) {
    return (err as Error).message;
  }
}

// ---- HTTP ------------------------------------------------------------------------------------

interface Reply {
  status: number;
  body: string;
  ms: number;
}

interface CallOptions {
  method?: string;
  path: string;
  headers?: Record<string, string>;
  body?: string;
  agent?: http.Agent | false;
  timeoutMs?: number;
  /** The local address to connect from (a client of its own for the per-client shares). */
  localAddress?: string;
}

function makeCaller(port: number) {
  return (o: CallOptions): Promise<Reply> =>
    new Promise((resolve, reject) => {
      const t0 = performance.now();
      const req = http.request(
        { host: '127.0.0.1', port, method: o.method ?? 'GET', path: o.path, headers: { ...o.headers, ...(o.body !== undefined && { 'content-length': String(Buffer.byteLength(o.body)) }) }, agent: o.agent ?? false, setHost: !(o.headers && 'host' in o.headers), ...(o.localAddress !== undefined && { localAddress: o.localAddress }) },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, ms: performance.now() - t0 }));
          res.on('error', reject);
        },
      );
      req.setTimeout(o.timeoutMs ?? 15_000, () => req.destroy(Object.assign(new Error('client timeout'), { code: 'TIMEOUT' })));
      req.on('error', reject);
      req.end(o.body);
    });
}

/** Counts by route and status (or error code), with latencies. */
class Tally {
  readonly routes = new Map<string, { statuses: Map<string, number>; ms: number[] }>();

  add(route: string, status: number | string, ms?: number): void {
    let r = this.routes.get(route);
    if (!r) this.routes.set(route, (r = { statuses: new Map(), ms: [] }));
    const key = String(status);
    r.statuses.set(key, (r.statuses.get(key) ?? 0) + 1);
    if (ms !== undefined) r.ms.push(ms);
  }

  byStatus(): Map<string, number> {
    const all = new Map<string, number>();
    for (const r of this.routes.values()) for (const [k, n] of r.statuses) all.set(k, (all.get(k) ?? 0) + n);
    return all;
  }

  total(): number {
    let n = 0;
    for (const r of this.routes.values()) for (const v of r.statuses.values()) n += v;
    return n;
  }
}

function errorCode(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return `error:${code ?? (err as Error).message}`;
}

// ---- /proc -----------------------------------------------------------------------------------

interface ProcSample {
  t: number;
  rssKb: number;
  hwmKb: number;
  cpuTicks: number;
}

function readProc(pid: number, t: number): ProcSample | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the command: state is field 3, utime 14, stime 15 (1-based over the whole line).
    const cpuTicks = Number(fields[11]) + Number(fields[12]);
    return { t, rssKb: kb('VmRSS'), hwmKb: kb('VmHWM'), cpuTicks };
  } catch {
    return undefined;
  }
}

// ---- the inspector of serve: a forced full GC and the heap after it -----------------------------

/**
 * A DevTools-protocol session with `serve` (started with `--inspect=127.0.0.1:0`). Raw RSS follows
 * V8's heap growth and shrinking (a saw-tooth of ~100 MiB under this load); after a forced full GC,
 * what remains is what the service retains.
 */
class Inspector {
  #id = 0;
  readonly #pending = new Map<number, (m: { result?: Record<string, unknown>; error?: { message: string } }) => void>();

  private constructor(private readonly ws: WebSocket) {
    ws.addEventListener('message', (e) => {
      const m = JSON.parse(String(e.data)) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
      if (m.id !== undefined) this.#pending.get(m.id)?.(m);
      if (m.id !== undefined) this.#pending.delete(m.id);
    });
  }

  static async connect(url: string): Promise<Inspector> {
    const ws = new WebSocket(url);
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve());
      ws.addEventListener('error', () => reject(new Error(`cannot open the inspector at ${url}`)));
    });
    return new Inspector(ws);
  }

  send(method: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const id = ++this.#id;
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`${method}: no answer within 30 s`));
      }, 30_000);
      this.#pending.set(id, (m) => {
        clearTimeout(timer);
        if (m.error) reject(new Error(`${method}: ${m.error.message}`));
        else resolve(m.result ?? {});
      });
      this.ws.send(JSON.stringify({ id, method }));
    });
  }

  close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return Promise.resolve();
    return new Promise((resolve) => {
      this.ws.addEventListener('close', () => resolve());
      this.ws.close();
      setTimeout(resolve, 2_000).unref();
    });
  }
}

/** Busy and total jiffies of the whole machine (/proc/stat). */
function machineCpu(): { busy: number; total: number } {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    const total = fields.reduce((a, b) => a + b, 0);
    const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return { busy: NaN, total: NaN };
  }
}

// ---- kernel socket queues (ss) ------------------------------------------------------------------

/**
 * Bytes the kernel holds for each connection to `port` from one of `peers`: the service's send queue
 * plus the client's receive queue. A reader that never reads is only seen by the service's stream
 * queue once these are full. Empty when `ss` is not available.
 */
function kernelQueues(port: number, peers: ReadonlySet<string>): number[] {
  let text: string;
  try {
    text = execFileSync('ss', ['-tnH', 'state', 'established', `( sport = :${port} or dport = :${port} )`], { encoding: 'utf8', timeout: 5_000 });
  } catch {
    return [];
  }
  const byConn = new Map<string, number>();
  for (const line of text.split('\n')) {
    const [recvQ, sendQ, local, peer] = line.trim().split(/\s+/);
    if (local === undefined || peer === undefined) continue;
    const localPort = Number(local.slice(local.lastIndexOf(':') + 1));
    // Server side: local is the service, peer the client; client side: the other way round.
    const [client, bytes] = localPort === port ? [peer, Number(sendQ)] : [local, Number(recvQ)];
    if (!peers.has(client.slice(0, client.lastIndexOf(':')))) continue;
    byConn.set(client, (byConn.get(client) ?? 0) + bytes);
  }
  return [...byConn.values()];
}

// ---- statistics --------------------------------------------------------------------------------

function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

function median(xs: readonly number[]): number {
  return quantile([...xs].sort((a, b) => a - b), 0.5);
}

/** Least-squares slope of y over x. */
function slope(points: ReadonlyArray<[number, number]>): number {
  const n = points.length;
  if (n < 2) return NaN;
  const mx = points.reduce((s, p) => s + p[0], 0) / n;
  const my = points.reduce((s, p) => s + p[1], 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? NaN : num / den;
}

const mb = (kb: number) => kb / 1024;
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '-');

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

function parseMetrics(text: string): Map<string, number> {
  const m = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    m.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return m;
}

// ---- SSE clients -------------------------------------------------------------------------------

interface SseStats {
  framesRead: number;
  bytesRead: number;
  byEvent: Map<string, number>;
  /** Streams the service closed (a `dropped` notice, or the socket closed under a non-reader). */
  serverClosed: { reader: number; idle: number };
  plannedReconnects: number;
  resumedWithLastEventId: number;
}

class SseClient {
  #req: http.ClientRequest | undefined;
  #lastId: number | undefined;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  open = false;

  constructor(
    private readonly port: number,
    private readonly kind: 'reader' | 'idle',
    private readonly local: string,
    private readonly tally: Tally,
    private readonly stats: SseStats,
  ) {}

  start(): void {
    this.#connect();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#req?.destroy();
  }

  #later(ms: number): void {
    clearTimeout(this.#timer);
    if (!this.#stopped) this.#timer = setTimeout(() => this.#connect(), ms);
  }

  #connect(): void {
    if (this.#stopped) return;
    const resume = this.kind === 'reader' && this.#lastId !== undefined;
    if (resume) this.stats.resumedWithLastEventId++;
    const route = `GET /api/stream (${this.kind === 'reader' ? 'reader' : 'non-reader'})`;
    const t0 = performance.now();
    let settled = false;
    let ours = false;
    const done = (retryMs: number) => {
      if (settled) return;
      settled = true;
      this.open = false;
      this.#later(retryMs);
    };
    const req = http.request({ host: '127.0.0.1', port: this.port, path: '/api/stream', localAddress: this.local, agent: false, headers: resume ? { 'last-event-id': String(this.#lastId) } : {} });
    this.#req = req;
    req.on('response', (res) => {
      this.tally.add(route, res.statusCode ?? 0, performance.now() - t0);
      if (res.statusCode !== 200) {
        res.resume();
        res.on('end', () => done(2_000 + Math.random() * 2_000));
        return;
      }
      this.open = true;
      res.socket.once('close', () => {
        if (!ours && !this.#stopped) this.stats.serverClosed[this.kind]++;
        done(this.kind === 'reader' ? 500 : 2_000);
      });
      if (this.kind === 'idle') {
        res.pause();
        return;
      }
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => {
        buf += d;
        this.stats.bytesRead += Buffer.byteLength(d);
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let event = 'message';
          for (const line of frame.split('\n')) {
            if (line.startsWith('id: ')) this.#lastId = Number(line.slice(4));
            else if (line.startsWith('event: ')) event = line.slice(7);
          }
          this.stats.framesRead++;
          this.stats.byEvent.set(event, (this.stats.byEvent.get(event) ?? 0) + 1);
        }
      });
      res.on('error', () => undefined);
      // A reader goes away now and then and resumes where it was.
      const planned = setTimeout(() => {
        if (this.#stopped || settled) return;
        ours = true;
        this.stats.plannedReconnects++;
        req.destroy();
      }, 20_000 + Math.random() * 20_000);
      res.socket.once('close', () => clearTimeout(planned));
    });
    req.on('error', (err) => {
      if (!this.#stopped && !ours && !this.open) this.tally.add(route, errorCode(err));
      done(2_000);
    });
    req.end();
  }
}

/** One stream attempt past the caps from `local`; a 200 (a slot was free) is closed at once. */
function overCapAttempt(port: number, local: string, tally: Tally, label: string): Promise<void> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request({ host: '127.0.0.1', port, path: '/api/stream', localAddress: local, agent: false }, (res) => {
      tally.add(`GET /api/stream (extra, ${label})`, res.statusCode ?? 0, performance.now() - t0);
      req.destroy();
      resolve();
    });
    req.setTimeout(5_000, () => req.destroy());
    req.on('error', () => resolve());
    req.end();
  });
}

// ---- the run -----------------------------------------------------------------------------------

async function soak(): Promise<number> {
  const parsed = parseOptions();
  if (typeof parsed === 'string') {
    process.stderr.write(parsed === '' ? USAGE : `${parsed}\n\n${USAGE}`);
    return parsed === '' ? 0 : 2;
  }
  const o = parsed;
  const log = (msg: string) => process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
  const children: ChildProcess[] = [];
  const dir = mkdtempSync(join(os.tmpdir(), 'a2a-soak-'));
  const cleanup = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('SIGINT', () => {
    log('interrupted');
    cleanup();
    process.exit(130);
  });
  // The bound on the whole run, whatever happens.
  const watchdog = setTimeout(() => {
    log('the run overran its bound; stopping');
    cleanup();
    process.exit(2);
  }, (o.duration + 200 + o.removalGraceMs / 1000) * 1000);
  try {
    return await run(o, log, children, dir);
  } finally {
    clearTimeout(watchdog);
    cleanup();
  }
}

async function run(o: Options, log: (msg: string) => void, children: ChildProcess[], dir: string): Promise<number> {
  // 1. The peers.
  const peers = fork(HERE, ['--peers', String(o.churnEntries)], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  children.push(peers);
  const ready = await new Promise<PeersReady>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the peers did not start within 60 s')), 60_000);
    peers.once('message', (m: PeersReady) => {
      clearTimeout(timer);
      resolve(m);
    });
    peers.once('exit', (code) => reject(new Error(`the peers exited with ${code}`)));
  });
  const tell = (c: PeerCommand) => peers.connected && peers.send(c);

  // 2. The service, from a generated configuration.
  const vocabulary = [
    { tag: 'billing', description: 'Invoices, charges and payments.', keywords: ['invoice', 'charge', 'charged', 'payment', 'bill'] },
    { tag: 'returns', description: 'Starts and tracks product returns.', keywords: ['return', 'refund', 'label', 'exchange'] },
    { tag: 'warranty', description: 'Warranty status and claims for hardware.', keywords: ['warranty', 'serial', 'guarantee', 'covered', 'repair'] },
  ];
  const configDoc = {
    // Every request of the soak comes from one address: its per-client shares are raised so the
    // soak measures the service, not the fair-share limits (tested in test/server/fair-shares.test.ts).
    server: { host: '127.0.0.1', port: 0, limits: { maxSessionsPerClient: 10_000, maxTurnsPerClient: 256, maxInspectionsPerClient: 8 } },
    allow: [ready.billing, ready.returns, ready.warranty].map((u) => new URL(u).origin).concat(ready.catalogOrigin, ready.churnOrigin),
    allowLoopback: true,
    vocabulary,
    needs: vocabulary.map((v) => ({ tag: v.tag, inputModes: ['text/plain'], outputModes: ['text/plain'] })),
    static: [{ name: 'billing_agent', url: ready.billing, description: 'Answers invoice, charge and payment questions.', tags: ['billing'], critical: true }],
    sources: {
      registries: [{ id: 'catalog', url: ready.catalogUrl, pollIntervalMs: 1_000 }],
      // The rotating catalog: new card URLs on every poll.
      ...(o.churnEntries > 0 && { aiCatalogs: [{ id: 'churn', catalogs: [ready.churnCatalogUrl], pollIntervalMs: 1_000, maxEntries: Math.max(100, o.churnEntries) }] }),
    },
    health: { enterAfter: 2, leaveAfter: 3, staticEnterAfter: 1 },
    cache: { minTtlMs: 0, backoffBaseMs: 1_000, backoffMaxMs: 2_000, maxStaleMs: 2_000, totalTimeoutMs: 1_000 },
    // Rotated-out endpoints are evicted once this grace has passed.
    loop: { cycleIntervalMs: 500, startupTimeoutMs: 5_000, removalGraceMs: o.removalGraceMs },
    root: { kind: 'routed', name: 'orchestrator', fallback: 'billing_agent' },
    sessions: { idleTimeoutMs: o.idleMs },
  };
  const configFile = join(dir, 'discovery.yaml');
  writeFileSync(configFile, `# Generated by scripts/soak.ts\n${stringify(configDoc)}`);
  const built = join(ROOT, 'packages/service/dist/cli/main.js');
  const fromSource = o.fromSource || !existsSync(built);
  const cli = fromSource ? ['--import', 'tsx', join(ROOT, 'packages/service/src/cli/main.ts')] : [built];
  const inspect = o.gcEvery > 0 ? ['--inspect=127.0.0.1:0'] : [];
  // --trace-gc: V8 prints each collection and its pause on stdout, to tell GC pauses from the rest.
  const spawnT = performance.now();
  const serve = spawn(process.execPath, ['--trace-gc', ...inspect, ...cli, 'serve', '--config', configFile, '--port', '0', '--log-level', 'warn'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(serve);
  let out = '';
  const errLines: string[] = [];
  let warnLines = 0;
  let inspectorUrl: string | undefined;
  const gcs: Array<{ at: number; kind: string; pauseMs: number }> = [];
  let pending = '';
  serve.stdout!.on('data', (d: Buffer) => {
    pending += d.toString();
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      // [pid:0x…]    12345 ms: Mark-Compact 150.2 (160.1) -> 60.3 (158.0) MB, 350.25 / 0.00 ms  (…)
      const gc = /^\[\d+:0x[0-9a-f]+\]\s+(\d+) ms: ([A-Za-z -]+?) [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, ([\d.]+) \//.exec(line);
      if (gc) gcs.push({ at: Number(gc[1]), kind: gc[2]!, pauseMs: Number(gc[3]) });
      else if (out.length < 100_000) out += `${line}\n`;
    }
  });
  serve.stderr!.on('data', (d: Buffer) => {
    for (const line of d.toString().split('\n')) {
      if (line.trim() === '') continue;
      // The inspector's own lines are not the service's.
      const ws = /^Debugger listening on (ws:\/\/\S+)/.exec(line);
      if (ws) inspectorUrl = ws[1];
      if (ws || /^(Debugger (attached|ending)|For help, see)/.test(line)) continue;
      warnLines++;
      errLines.push(line);
      if (errLines.length > 20) errLines.shift();
    }
  });
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exit = new Promise<void>((r) =>
    serve.once('exit', (code, signal) => {
      exited = { code, signal };
      r();
    }),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start within 60 s: ${out} ${errLines.join('\n')}`)), 60_000);
    const check = () => {
      const m = /serving (http:\/\/[^/\s]+)\//.exec(`${out}${pending}`);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    serve.stdout!.on('data', check);
    void exit.then(() => reject(new Error(`serve exited with ${exited?.code}: ${out} ${errLines.join('\n')}`)));
  });
  const port = Number(new URL(url).port);
  const pid = serve.pid!;
  const call = makeCaller(port);
  if (o.gcEvery > 0 && inspectorUrl === undefined) throw new Error('serve printed no inspector address');
  const inspector = o.gcEvery > 0 ? await Inspector.connect(inspectorUrl!) : undefined;
  log(`serve (${fromSource ? 'src via tsx' : 'dist'}) pid ${pid} at ${url}; peers ${[ready.billing, ready.returns, ready.warranty].join(' ')}`);

  // 3. Ready, with the agents in the snapshot.
  const readyBy = Date.now() + 60_000;
  for (;;) {
    const snap = await call({ path: '/api/snapshot' }).catch(() => undefined);
    const agents = snap?.status === 200 ? ((JSON.parse(snap.body) as { agents: unknown[] }).agents?.length ?? 0) : 0;
    if (agents >= 3) break;
    if (Date.now() > readyBy) throw new Error('the service published no snapshot with the three agents within 60 s');
    await sleep(200);
  }
  const rssAtReady = readProc(pid, 0)?.rssKb ?? NaN;
  log(`ready with 3 agents; RSS ${f1(mb(rssAtReady))} MiB; load for ${o.duration} s (warm-up ${o.warmup} s)`);

  // 4. Load, probes, churn.
  const t0 = performance.now();
  const now = () => (performance.now() - t0) / 1000;
  const cpuStart = { machine: machineCpu(), self: process.cpuUsage(), peers: readProc(peers.pid!, 0)?.cpuTicks ?? NaN };
  const endAt = o.duration;
  let stopping = false;
  const tally = new Tally();
  const samples: ProcSample[] = [];
  const sampler = setInterval(() => {
    const s = readProc(pid, now());
    if (s) samples.push(s);
  }, o.sampleMs);
  const first = readProc(pid, 0);
  if (first) samples.push(first);

  // Forced full GCs (with --gc-every): the heap and RSS the service retains.
  interface GcPoint {
    t: number;
    pauseMs: number;
    heapKb: number;
    rssKb: number;
    pinned: number;
    streams: number;
  }
  const gcPoints: GcPoint[] = [];
  const gcWindows: Array<[number, number]> = [];
  const gcPoint = async () => {
    if (!inspector) return;
    const start = now();
    const ts = performance.now();
    await inspector.send('HeapProfiler.collectGarbage');
    const pauseMs = performance.now() - ts;
    gcWindows.push([start, now()]);
    const usage = await inspector.send('Runtime.getHeapUsage');
    const rssKb = readProc(pid, now())?.rssKb ?? NaN;
    const m = await call({ path: '/metrics' }).then((r) => parseMetrics(r.body)).catch(() => new Map<string, number>());
    gcPoints.push({ t: start, pauseMs, heapKb: Number(usage.usedSize) / 1024, rssKb, pinned: m.get('a2a_discovery_pinned_sessions') ?? NaN, streams: m.get('a2a_discovery_sse_streams') ?? NaN });
  };
  await gcPoint();

  // /healthz, continuously, on a connection of its own.
  const health: Array<{ t: number; ms: number }> = [];
  const healthFailures: Array<{ t: number; what: string }> = [];
  const healthAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const prober = (async () => {
    while (!stopping) {
      const t = now();
      try {
        const r = await call({ path: '/healthz', agent: healthAgent, timeoutMs: Math.max(2_000, o.healthzBoundMs * 4) });
        health.push({ t, ms: r.ms });
        if (r.status !== 200) healthFailures.push({ t, what: `status ${r.status}` });
      } catch (err) {
        healthFailures.push({ t, what: errorCode(err) });
      }
      await sleep(o.healthzMs);
    }
  })();

  // SSE clients: 8 per source address (the default maxStreamsPerClient), readers first.
  const sse: SseStats = { framesRead: 0, bytesRead: 0, byEvent: new Map(), serverClosed: { reader: 0, idle: 0 }, plannedReconnects: 0, resumedWithLastEventId: 0 };
  const clients: SseClient[] = [];
  const readerAddresses = Math.ceil(o.readers / 8);
  const addressOf = (i: number) => `127.0.0.${2 + (i < o.readers ? Math.floor(i / 8) : readerAddresses + Math.floor((i - o.readers) / 8))}`;
  for (let i = 0; i < o.readers + o.nonReaders; i++) clients.push(new SseClient(port, i < o.readers ? 'reader' : 'idle', addressOf(i), tally, sse));
  clients.forEach((c, i) => setTimeout(() => c.start(), i * 20));
  const fullAddress = addressOf(0);
  const freshAddress = '127.0.0.250';
  const overCap = setInterval(() => {
    void overCapAttempt(port, fullAddress, tally, 'full address');
    void overCapAttempt(port, freshAddress, tally, 'fresh address');
  }, 3_000);

  // Churn from the peers.
  let warrantyListed = true;
  let exchangeOn = false;
  const churn1 = setInterval(() => tell({ type: 'warranty', listed: (warrantyListed = !warrantyListed) }), 20_000);
  const churn2 = setInterval(() => tell({ type: 'exchange', on: (exchangeOn = !exchangeOn) }), 30_000);

  // API workers.
  const JSON_TYPE = { 'content-type': 'application/json' };
  const apiAgent = new http.Agent({ keepAlive: true, maxSockets: o.concurrency * 2 });
  const questions = ['Why was invoice 4411 charged twice?', 'Is serial 123 under warranty?', 'I want to return my headphones', 'Can I exchange these shoes for another size?', 'hello there'];
  const slots = Array.from({ length: 6 }, (_, i) => ({ i, gen: 0, turns: 0, busy: false, secret: undefined as string | undefined }));
  const TURNS_PER_SESSION = 6;
  const chat = { turns: 0, withError: 0, authors: new Map<string, number>(), ended: 0, anonymous: 0, secrets: 0 };
  const digests: string[] = [];
  let lastSeq = 0;
  const timed = async (route: string, o2: CallOptions) => {
    try {
      const r = await call({ agent: apiAgent, ...o2 });
      tally.add(route, r.status, r.ms);
      return r;
    } catch (err) {
      tally.add(route, errorCode(err));
      return undefined;
    }
  };
  const recordTurn = (r: Reply | undefined): Record<string, unknown> | undefined => {
    if (r?.status !== 200) return undefined;
    const t = JSON.parse(r.body) as Record<string, unknown>;
    chat.turns++;
    if (t.error !== null && t.error !== undefined) chat.withError++;
    const author = typeof t.author === 'string' ? t.author : '(none)';
    chat.authors.set(author, (chat.authors.get(author) ?? 0) + 1);
    if (typeof t.sessionSecret === 'string') chat.secrets++;
    return t;
  };
  const secretHeaders = (secret: string | undefined): Record<string, string> => (secret === undefined ? {} : { 'x-session-secret': secret });
  const actions: Array<[number, () => Promise<unknown>]> = [
    [18, () => timed('GET /api/snapshot', { path: '/api/snapshot' }).then((r) => r?.status === 200 && digests.push((JSON.parse(r.body) as { digest: string }).digest))],
    [5, () => timed('GET /api/snapshots', { path: '/api/snapshots' })],
    [12, () => timed('GET /api/endpoints', { path: '/api/endpoints' })],
    [3, () => timed('GET /api/endpoints/card', { path: `/api/endpoints/card?url=${encodeURIComponent(ready.returns)}` })],
    [3, () => {
      const from = digests[Math.floor(Math.random() * digests.length)];
      return timed('GET /api/diff', { path: from === undefined ? '/api/diff' : `/api/diff?from=${from}` });
    }],
    [12, () =>
      timed('GET /api/events', { path: `/api/events?since=${Math.max(0, lastSeq - 50)}` }).then((r) => {
        if (r?.status !== 200) return;
        const events = (JSON.parse(r.body) as { events: Array<{ seq: number }> }).events;
        lastSeq = events.at(-1)?.seq ?? lastSeq;
      })],
    [3, () => timed('GET /api/sessions', { path: '/api/sessions' })],
    [8, () => timed('GET /metrics', { path: '/metrics' })],
    [5, () => timed('POST /api/refresh', { method: 'POST', path: '/api/refresh', headers: JSON_TYPE, body: '{}' })],
    [22, async () => {
      const message = questions[Math.floor(Math.random() * questions.length)]!;
      const free = slots.filter((s) => !s.busy);
      const slot = Math.random() < 0.15 ? undefined : free[Math.floor(Math.random() * free.length)];
      if (slot === undefined) {
        // An anonymous session, abandoned after one turn: left to the idle expiry.
        chat.anonymous++;
        recordTurn(await timed('POST /api/chat', { method: 'POST', path: '/api/chat', headers: JSON_TYPE, body: JSON.stringify({ message }) }));
        return;
      }
      slot.busy = true;
      try {
        const sessionId = `soak-${slot.i}-${slot.gen}`;
        const body = JSON.stringify({ sessionId, message, ...(slot.secret !== undefined && { sessionSecret: slot.secret }) });
        const t = recordTurn(await timed('POST /api/chat', { method: 'POST', path: '/api/chat', headers: { ...JSON_TYPE, ...secretHeaders(slot.secret) }, body }));
        if (typeof t?.sessionSecret === 'string') slot.secret = t.sessionSecret;
        if (++slot.turns >= TURNS_PER_SESSION) {
          const del = await timed('DELETE /api/sessions/:id', { method: 'DELETE', path: `/api/sessions/${sessionId}`, headers: { ...JSON_TYPE, ...secretHeaders(slot.secret) } });
          if (del?.status === 200) chat.ended++;
          slot.gen++;
          slot.turns = 0;
          slot.secret = undefined;
        }
      } finally {
        slot.busy = false;
      }
    }],
    // Hostile calls: each must be refused.
    [1, () => timed('hostile: POST /api/chat text/plain', { method: 'POST', path: '/api/chat', headers: { 'content-type': 'text/plain' }, body: '{"message":"hi"}' })],
    [1, () => timed('hostile: GET /api/snapshot Host attacker.example', { path: '/api/snapshot', headers: { host: `attacker.example:${port}` } })],
    [1, () => timed('hostile: POST /api/refresh Origin evil.example', { method: 'POST', path: '/api/refresh', headers: { ...JSON_TYPE, origin: 'http://evil.example' }, body: '{}' })],
    [1, () => timed('hostile: POST /api/chat 100 KB body', { method: 'POST', path: '/api/chat', headers: JSON_TYPE, body: JSON.stringify({ message: 'x'.repeat(100_000) }), agent: false })],
  ];
  const totalWeight = actions.reduce((s, [w]) => s + w, 0);
  const pick = () => {
    let x = Math.random() * totalWeight;
    for (const [w, f] of actions) if ((x -= w) < 0) return f;
    return actions[0]![1];
  };
  const workers = Array.from({ length: o.concurrency }, async () => {
    while (!stopping) {
      await pick()();
      if (o.thinkMs > 0) await sleep(o.thinkMs);
    }
  });

  // Inspector clients (issue #24): each from an address of its own (its own fair share), one
  // inspection of the nested catalog after the other.
  const inspections = { made: 0, ok: 0, truncated: 0 };
  const inspectors = Array.from({ length: o.inspectClients }, async (_, i) => {
    const localAddress = `127.0.0.${240 + i}`;
    while (!stopping) {
      const r = await timed('POST /api/inspect (nested AI Catalog)', { method: 'POST', path: '/api/inspect', headers: JSON_TYPE, body: JSON.stringify({ url: ready.nestedCatalogUrl }), agent: false, localAddress, timeoutMs: 30_000 });
      inspections.made++;
      if (r?.status === 200) {
        inspections.ok++;
        if ((JSON.parse(r.body) as { truncated?: boolean }).truncated === true) inspections.truncated++;
      }
      if (o.inspectMs > 0) await sleep(o.inspectMs);
    }
  });

  // Progress, and the end of the load.
  let lastPrint = 0;
  let nextGc = inspector ? o.warmup : Infinity;
  while (now() < endAt && exited === undefined) {
    await sleep(500);
    if (now() >= nextGc) {
      if (now() < endAt - 5) await gcPoint();
      nextGc += o.gcEvery;
    }
    if (now() - lastPrint >= 30) {
      lastPrint = now();
      const s = samples.at(-1);
      log(`+${now().toFixed(0)} s  RSS ${f1(mb(s?.rssKb ?? NaN))} MiB  requests ${tally.total()}  streams open (client side) ${clients.filter((c) => c.open).length}  /healthz max so far ${f1(Math.max(0, ...health.map((h) => h.ms)))} ms`);
    }
  }
  // What the kernel holds for the non-readers, and the last forced GC while the load still runs.
  const idleAddresses = new Set(clients.slice(o.readers).map((_, i) => addressOf(o.readers + i)));
  const cpuEnd = { machine: machineCpu(), self: process.cpuUsage(cpuStart.self), peers: readProc(peers.pid!, 0)?.cpuTicks ?? NaN };
  const nonReaderQueues = kernelQueues(port, idleAddresses).sort((a, b) => a - b);
  if (exited === undefined) await gcPoint();
  const loadSeconds = now();
  stopping = true;
  clearInterval(overCap);
  clearInterval(churn1);
  clearInterval(churn2);
  const crashed = exited !== undefined;
  await Promise.allSettled([...workers, ...inspectors, prober]);
  clearInterval(sampler);
  const last = readProc(pid, now());
  if (last) samples.push(last);
  const atEnd = crashed ? undefined : await call({ path: '/metrics' }).catch(() => undefined);
  const metricsAtEnd = atEnd?.status === 200 ? parseMetrics(atEnd.body) : new Map<string, number>();

  // 5. Every stream released once the clients are gone?
  for (const c of clients) c.stop();
  let streamsAfter = NaN;
  if (!crashed) {
    const by = Date.now() + 5_000;
    for (;;) {
      const m = await call({ path: '/metrics' }).then((r) => parseMetrics(r.body)).catch(() => new Map<string, number>());
      streamsAfter = m.get('a2a_discovery_sse_streams') ?? NaN;
      if (streamsAfter === 0 || Date.now() > by) break;
      await sleep(200);
    }
  }
  // 5b. The rotating catalog stops; once the removal grace has passed, /api/activity must list only
  // endpoints discovery still has (issue #24: the evicted ones' counters are freed).
  const activity = { endpointCount: NaN, listed: NaN, current: NaN, stale: NaN, settledAfterS: NaN, sample: [] as string[] };
  if (!crashed) {
    tell({ type: 'rotate', on: false });
    const tq = performance.now();
    const by = Date.now() + o.removalGraceMs + 20_000;
    await sleep(o.removalGraceMs + 2_000);
    for (;;) {
      const eps = await call({ path: '/api/endpoints' }).then((r) => (JSON.parse(r.body) as { endpoints: Array<{ baseUrl: string }> }).endpoints).catch(() => undefined);
      const listed: string[] = [];
      let count = NaN;
      let after: string | null = null;
      for (let page = 0; page < 100; page++) {
        const q: string = `/api/activity?limit=1000${after === null ? '' : `&after=${encodeURIComponent(after)}`}`;
        const a = await call({ path: q }).then((r) => JSON.parse(r.body) as { endpoints: Array<{ endpoint: string }>; nextAfter: string | null; endpointCount: number }).catch(() => undefined);
        if (a === undefined) break;
        count = a.endpointCount;
        listed.push(...a.endpoints.map((e) => e.endpoint));
        after = a.nextAfter;
        if (after === null) break;
      }
      if (eps !== undefined) {
        const current = new Set(eps.map((e) => e.baseUrl));
        const stale = listed.filter((e) => !current.has(e));
        Object.assign(activity, { endpointCount: count, listed: listed.length, current: current.size, stale: stale.length, sample: stale.slice(0, 3) });
        if (stale.length === 0) {
          activity.settledAfterS = (performance.now() - tq) / 1000;
          break;
        }
      }
      if (Date.now() > by) break;
      await sleep(1_000);
    }
  }
  apiAgent.destroy();
  await inspector?.close();
  healthAgent.destroy();

  // 6. A clean stop on SIGTERM.
  let stopMs = NaN;
  if (!crashed) {
    const ts = performance.now();
    serve.kill('SIGTERM');
    await Promise.race([exit, sleep(10_000)]);
    stopMs = performance.now() - ts;
  }
  tell({ type: 'close' });

  // 7. The figures.
  const after = samples.filter((s) => s.t >= o.warmup);
  const near = (t: number) => samples.filter((s) => Math.abs(s.t - t) <= (o.sampleMs / 1000) * 1.5).map((s) => s.rssKb);
  const rawWarm = median(near(o.warmup));
  const rawEnd = median(after.slice(-3).map((s) => s.rssKb));
  const rssMax = Math.max(...samples.map((s) => s.rssKb));
  const rssMin = Math.min(...after.map((s) => s.rssKb));
  const rssMaxAfter = Math.max(...after.map((s) => s.rssKb));
  const rawSlope = mb(slope(after.map((s) => [s.t / 60, s.rssKb])));
  const hwm = samples.at(-1)?.hwmKb ?? NaN;
  const cpuTicks = (samples.at(-1)?.cpuTicks ?? NaN) - (samples[0]?.cpuTicks ?? NaN);
  const cpuPercent = (cpuTicks / 100 / loadSeconds) * 100;
  const machinePercent = ((cpuEnd.machine.busy - cpuStart.machine.busy) / (cpuEnd.machine.total - cpuStart.machine.total)) * 100;
  const selfPercent = ((cpuEnd.self.user + cpuEnd.self.system) / 1e6 / loadSeconds) * 100;
  const peersPercent = ((cpuEnd.peers - cpuStart.peers) / 100 / loadSeconds) * 100;
  // The service's own collections during the load (from --trace-gc), forced ones left out.
  const inWindow = (t: number, ms: number) => gcWindows.some(([a, b]) => t <= b + 0.1 && t + ms / 1000 >= a - 0.1);
  const ownGcs = gcs.map((g) => ({ ...g, t: (spawnT + g.at - t0) / 1000 })).filter((g) => g.t >= 0 && g.t <= loadSeconds && !inWindow(g.t, g.pauseMs));
  const gcStats = (pred: (kind: string) => boolean) => {
    const xs = ownGcs.filter((g) => pred(g.kind)).map((g) => g.pauseMs);
    return { n: xs.length, max: xs.length > 0 ? Math.max(...xs) : NaN, total: xs.reduce((a, b) => a + b, 0) };
  };
  const scavenges = gcStats((k) => k.includes('Scavenge'));
  const majors = gcStats((k) => !k.includes('Scavenge'));
  const gcAt = (h: { t: number; ms: number }) =>
    ownGcs.filter((g) => g.t <= h.t + h.ms / 1000 + 0.1 && g.t + g.pauseMs / 1000 + 0.1 >= h.t).sort((a, b) => b.pauseMs - a.pauseMs)[0];
  // After forced GCs: the baseline is the first point after warm-up, the end the last one.
  const gcWarm = gcPoints.find((g) => g.t >= o.warmup - 1);
  const gcEnd = gcPoints.length >= 2 ? gcPoints.at(-1) : undefined;
  const gcAfter = gcPoints.filter((g) => g.t >= o.warmup - 1);
  const useGc = gcWarm !== undefined && gcEnd !== undefined && gcEnd !== gcWarm;
  // Issue #24's bound: RSS after GC at the end against RSS after GC at the start (before any load).
  const gcStart = gcPoints[0];
  const startGrowthMb = gcStart !== undefined && gcEnd !== undefined ? mb(gcEnd.rssKb - gcStart.rssKb) : NaN;
  const rssWarm = useGc ? gcWarm.rssKb : rawWarm;
  const rssEnd = useGc ? gcEnd.rssKb : rawEnd;
  const growthMb = mb(rssEnd - rssWarm);
  const heapGrowthMb = useGc ? mb(gcEnd.heapKb - gcWarm.heapKb) : NaN;
  const heapSlope = mb(slope(gcAfter.map((g) => [g.t / 60, g.heapKb])));
  // /healthz probes in flight during a forced GC (ours, not the service's) are reported apart.
  const inGc = (h: { t: number; ms: number }) => gcWindows.some(([a, b]) => h.t <= b + 0.05 && h.t + h.ms / 1000 >= a - 0.05);
  const counted = health.filter((h) => !inGc(h));
  const duringGc = health.filter(inGc);
  const hz = counted.map((h) => h.ms).sort((a, b) => a - b);
  const hzP50 = quantile(hz, 0.5);
  const hzP99 = quantile(hz, 0.99);
  const hzMax = hz.at(-1) ?? NaN;
  const hzOver = counted.filter((h) => h.ms > o.healthzBoundMs);
  const gcHzMax = duringGc.length > 0 ? Math.max(...duringGc.map((h) => h.ms)) : NaN;
  const refusals = [...metricsAtEnd].filter(([k]) => k.startsWith('a2a_discovery_http_refusals_total{')).map(([k, v]) => [/reason="([^"]+)"/.exec(k)?.[1] ?? k, v] as const);
  const metric = (name: string) => metricsAtEnd.get(name) ?? NaN;
  const perReaderKBs = sse.bytesRead / 1024 / Math.max(1, o.readers) / loadSeconds;

  const checks = [
    {
      name: `RSS growth from warm-up to the end${useGc ? ' (each after a forced GC)' : ''} <= ${o.maxGrowthMb} MiB`,
      ok: Number.isFinite(growthMb) && growthMb <= o.maxGrowthMb,
      got: `${f1(mb(rssWarm))} -> ${f1(mb(rssEnd))} MiB (${growthMb >= 0 ? '+' : ''}${f1(growthMb)})`,
    },
    ...(useGc
      ? [{ name: `heap after GC growth from warm-up to the end <= ${o.maxHeapGrowthMb} MiB`, ok: Number.isFinite(heapGrowthMb) && heapGrowthMb <= o.maxHeapGrowthMb, got: `${f1(mb(gcWarm.heapKb))} -> ${f1(mb(gcEnd.heapKb))} MiB (${heapGrowthMb >= 0 ? '+' : ''}${f1(heapGrowthMb)})` }]
      : []),
    ...(gcStart !== undefined && gcEnd !== undefined
      ? [{ name: `RSS after GC from the start (before load) to the end <= ${o.maxStartGrowthMb} MiB`, ok: Number.isFinite(startGrowthMb) && startGrowthMb <= o.maxStartGrowthMb, got: `${f1(mb(gcStart.rssKb))} -> ${f1(mb(gcEnd.rssKb))} MiB (${startGrowthMb >= 0 ? '+' : ''}${f1(startGrowthMb)})` }]
      : []),
    {
      name: '/api/activity lists only current endpoints once the rotation stopped and the removal grace passed',
      ok: activity.stale === 0,
      got: `${activity.listed} listed (endpointCount ${activity.endpointCount}), ${activity.current} current, ${activity.stale} not current${activity.sample.length > 0 ? ` e.g. ${activity.sample.join(' ')}` : ''}${Number.isFinite(activity.settledAfterS) ? `; settled ${f1(activity.settledAfterS)} s after the rotation stopped` : ''}`,
    },
    { name: `/healthz always 200 within ${o.healthzBoundMs} ms`, ok: hzOver.length === 0 && healthFailures.length === 0 && hz.length > 0, got: `max ${f1(hzMax)} ms, ${hzOver.length} over, ${healthFailures.length} failed` },
    { name: 'every stream released after the clients left', ok: streamsAfter === 0, got: `a2a_discovery_sse_streams ${streamsAfter}` },
    { name: 'serve ran throughout and stopped on SIGTERM with 0', ok: !crashed && exited?.code === 0, got: crashed ? `exited during the run (${exited?.code ?? exited?.signal})` : `exit ${exited?.code ?? exited?.signal ?? 'none'} in ${f1(stopMs)} ms` },
  ];

  const lines: string[] = [];
  const p = (s = '') => lines.push(s);
  p(`a2a-discovery soak: ${f1(loadSeconds)} s of load (warm-up ${o.warmup} s), ${o.concurrency} workers (think ${o.thinkMs} ms), ${o.readers} SSE readers + ${o.nonReaders} non-readers, sessions idle after ${o.idleMs / 1000} s`);
  p(`issue #24 load: a rotating AI Catalog of ${o.churnEntries} new card URLs per 1 s poll (removal grace ${o.removalGraceMs / 1000} s), ${o.inspectClients} inspector clients (pause ${o.inspectMs} ms) on a nested catalog`);
  p(`machine: ${os.cpus().length} vCPU (${os.cpus()[0]?.model.trim() ?? '?'}), ${f1(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, serve from ${fromSource ? 'src (tsx)' : 'dist'}${inspector ? ' with --inspect (forced GCs)' : ''}`);
  p();
  p(table([
    ['RSS of serve, sampled every ' + o.sampleMs / 1000 + ' s (MiB)', 'value'],
    ['at ready (before load)', f1(mb(rssAtReady))],
    [`at warm-up (t=${o.warmup} s)`, f1(mb(rawWarm))],
    ['at the end', f1(mb(rawEnd))],
    ['min / max after warm-up', `${f1(mb(rssMin))} / ${f1(mb(rssMaxAfter))}`],
    ['max overall / VmHWM', `${f1(mb(rssMax))} / ${f1(mb(hwm))}`],
    ['slope after warm-up (MiB/min)', rawSlope.toFixed(2)],
  ]));
  p();
  p(`CPU during the load (% of one core): serve ${f1(cpuPercent)}, this script ${f1(selfPercent)}, peers ${f1(peersPercent)}; the machine was ${f1(machinePercent)}% busy (all ${os.cpus().length} vCPU)`);
  p(`serve's own GC during the load (--trace-gc, forced ones left out): ${scavenges.n} scavenges (max ${f1(scavenges.max)} ms), ${majors.n} mark-compacts (max ${f1(majors.max)} ms, total ${f1(majors.total)} ms)`);
  if (gcPoints.length > 0) {
    p();
    p(table([
      ['forced full GC at', 'pause ms', 'heap MiB', 'RSS MiB', 'pinned sessions', 'SSE streams'],
      ...gcPoints.map((g) => [`+${g.t.toFixed(0)} s`, g.pauseMs.toFixed(0), f1(mb(g.heapKb)), f1(mb(g.rssKb)), String(g.pinned), String(g.streams)]),
    ]));
    p(`heap after GC, slope after warm-up: ${heapSlope.toFixed(2)} MiB/min`);
  }
  p();
  p(table([
    ['/healthz', 'value'],
    ['probes', String(hz.length)],
    ['p50 (ms)', hzP50.toFixed(2)],
    ['p99 (ms)', hzP99.toFixed(2)],
    ['max (ms)', hzMax.toFixed(2)],
    [`over ${o.healthzBoundMs} ms / failed`, `${hzOver.length} / ${healthFailures.length}`],
    ...(duringGc.length > 0 ? [['in flight during a forced GC (apart)', `${duringGc.length}, max ${f1(gcHzMax)} ms`]] : []),
  ]));
  p();
  const routeRows = [['route', 'count', 'statuses', 'p50 ms', 'p99 ms']];
  for (const [route, r] of [...tally.routes].sort((a, b) => a[0].localeCompare(b[0]))) {
    const sorted = [...r.ms].sort((a, b) => a - b);
    const n = [...r.statuses.values()].reduce((s, v) => s + v, 0);
    routeRows.push([route, String(n), [...r.statuses].map(([k, v]) => `${k}×${v}`).join(' '), f1(quantile(sorted, 0.5)), f1(quantile(sorted, 0.99))]);
  }
  p(table(routeRows));
  p();
  p(`requests by status: ${[...tally.byStatus()].sort().map(([k, v]) => `${k}: ${v}`).join(', ')} (total ${tally.total()}, ${f1(tally.total() / loadSeconds)}/s)`);
  p(`chat: ${chat.turns} turns (${chat.withError} with an error), authors ${[...chat.authors].map(([k, v]) => `${k} ${v}`).join(', ')}; ${chat.ended} sessions ended, ${chat.anonymous} abandoned${chat.secrets > 0 ? `, ${chat.secrets} replies carried a sessionSecret` : ''}`);
  p(`SSE: ${sse.framesRead} frames read (${[...sse.byEvent].sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${v}`).join(', ')}), ${f1(perReaderKBs)} KiB/s per reader; closed by the service: readers ${sse.serverClosed.reader}, non-readers ${sse.serverClosed.idle}; planned reconnects ${sse.plannedReconnects}, resumed with Last-Event-ID ${sse.resumedWithLastEventId}`);
  if (nonReaderQueues.length > 0) {
    p(`non-readers at the end: ${nonReaderQueues.length} connections, kernel queues (service send + client receive) median ${f1(median(nonReaderQueues) / 1024)} KiB, max ${f1((nonReaderQueues.at(-1) ?? NaN) / 1024)} KiB, total ${f1(nonReaderQueues.reduce((a, b) => a + b, 0) / 2 ** 20)} MiB`);
  }
  p(`inspections: ${inspections.made} made, ${inspections.ok} answered 200 (${inspections.truncated} truncated); endpoints discovered (a2a_discovery_activity counters) at the end of the load: ${metric('a2a_discovery_activity_endpoints')}, dropped past the bound ${metric('a2a_discovery_activity_endpoints_dropped')}`);
  if (gcStart !== undefined && gcEnd !== undefined) p(`RSS after GC: start (before load) ${f1(mb(gcStart.rssKb))} MiB, end ${f1(mb(gcEnd.rssKb))} MiB; heap after GC ${f1(mb(gcStart.heapKb))} -> ${f1(mb(gcEnd.heapKb))} MiB`);
  p(`refusals (a2a_discovery_http_refusals_total): ${refusals.length === 0 ? 'none' : refusals.map(([k, v]) => `${k} ${v}`).join(', ')}`);
  p(`service at the end: sse_streams ${metric('a2a_discovery_sse_streams')}, pinned_sessions ${metric('a2a_discovery_pinned_sessions')}, retained_snapshots ${metric('a2a_discovery_retained_snapshots')}, snapshot_version ${metric('a2a_discovery_snapshot_version')}, tree_evictions ${metric('a2a_discovery_tree_evictions_total')}; stderr lines (warn and up) ${warnLines}`);
  if (healthFailures.length > 0) p(`/healthz failures: ${healthFailures.slice(0, 5).map((h) => `+${h.t.toFixed(1)} s ${h.what}`).join(', ')}`);
  const slowest = [...counted].sort((a, b) => b.ms - a.ms).slice(0, 5);
  p(`slowest /healthz: ${slowest.map((h) => { const g = gcAt(h); return `${h.ms.toFixed(1)} ms at +${h.t.toFixed(0)} s${g ? ` (${g.kind} ${f1(g.pauseMs)} ms)` : ''}`; }).join(', ')}`);
  p(`RSS timeline (MiB): ${thin(samples, 13).map((s) => `+${s.t.toFixed(0)}:${f1(mb(s.rssKb))}`).join(' ')}`);
  if (errLines.length > 0) p(`last stderr lines of serve:\n  ${errLines.slice(-5).join('\n  ')}`);
  p();
  for (const c of checks) p(`${c.ok ? 'PASS' : 'FAIL'}  ${c.name}: ${c.got}`);
  process.stdout.write(`${lines.join('\n')}\n`);

  if (o.json !== undefined) {
    writeFileSync(
      o.json,
      `${JSON.stringify(
        {
          options: o,
          machine: { cpus: os.cpus().length, model: os.cpus()[0]?.model, memGiB: os.totalmem() / 2 ** 30, node: process.version, serve: fromSource ? 'src' : 'dist' },
          loadSeconds,
          rssMiB: { ready: mb(rssAtReady), warm: mb(rawWarm), end: mb(rawEnd), minAfterWarmup: mb(rssMin), maxAfterWarmup: mb(rssMaxAfter), max: mb(rssMax), hwm: mb(hwm), slopePerMin: rawSlope },
          gc: gcPoints.map((g) => ({ t: g.t, pauseMs: g.pauseMs, heapMiB: mb(g.heapKb), rssMiB: mb(g.rssKb), pinned: g.pinned, streams: g.streams })),
          heapSlopePerMin: heapSlope,
          cpuPercent: { serve: cpuPercent, soak: selfPercent, peers: peersPercent, machineBusy: machinePercent },
          serveGc: { scavenges, markCompacts: majors },
          healthzMs: { probes: hz.length, p50: hzP50, p99: hzP99, max: hzMax, over: hzOver.length, failed: healthFailures.length, duringForcedGc: duringGc.length, duringForcedGcMax: gcHzMax },
          statuses: Object.fromEntries(tally.byStatus()),
          routes: Object.fromEntries([...tally.routes].map(([k, r]) => [k, Object.fromEntries(r.statuses)])),
          refusals: Object.fromEntries(refusals),
          chat: { ...chat, authors: Object.fromEntries(chat.authors) },
          inspections,
          activity,
          rssAfterGcMiB: { start: gcStart === undefined ? null : mb(gcStart.rssKb), end: gcEnd === undefined ? null : mb(gcEnd.rssKb), growthFromStart: startGrowthMb },
          sse: { ...sse, byEvent: Object.fromEntries(sse.byEvent), perReaderKiBs: perReaderKBs, nonReaderKernelQueueBytes: nonReaderQueues },
          samples: samples.map((s) => ({ t: s.t, rssMiB: mb(s.rssKb) })),
          checks,
        },
        null,
        2,
      )}\n`,
    );
  }
  return checks.every((c) => c.ok) ? 0 : 1;
}

function thin<T>(xs: readonly T[], n: number): T[] {
  if (xs.length <= n) return [...xs];
  return Array.from({ length: n }, (_, i) => xs[Math.round((i * (xs.length - 1)) / (n - 1))]!);
}

if (process.argv.includes('--peers')) {
  await runPeers();
} else {
  // Leftover sockets or timers must not keep a finished run alive.
  process.exit(await soak());
}
