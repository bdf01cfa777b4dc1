/**
 * Parent side of the service benchmark's processes: the helper children (bench/lib/service-child.ts:
 * the card fleet with its registry, the A2A peer) and `a2a-discovery serve` itself (the built CLI,
 * packages/service/dist, as a user runs it). Every process is stopped by its pid within a bound:
 * a polite request first (IPC `close`, SIGTERM for serve), SIGKILL when it has not exited in time.
 */
import type { ChildProcess } from 'node:child_process';
import { fork, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CardsLayout, CardsReady, CardsStats, PeerReady, PeerTimes, ToChild } from './service-child.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD = fileURLToPath(new URL('./service-child.ts', import.meta.url));
const BUILT_CLI = fileURLToPath(new URL('../../packages/service/dist/cli/main.js', import.meta.url));

/** Every process this run started, for the last-resort cleanup (SIGKILL by pid). */
const started = new Set<ChildProcess>();

const running = (c: ChildProcess) => c.exitCode === null && c.signalCode === null;

/** SIGKILLs every child still running (synchronous: safe in an exit or signal handler). */
export function killAll(): void {
  for (const c of started) if (running(c) && c.pid !== undefined) process.kill(c.pid, 'SIGKILL');
}

/** Stops one child: `polite()` first, SIGKILL by its pid after `boundMs`; resolves once it exited. */
async function stop(child: ChildProcess, polite: () => void, boundMs: number): Promise<void> {
  if (!running(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    polite();
  } catch {
    // The IPC channel or the process is already gone: the kill below settles it.
  }
  const t = setTimeout(() => {
    if (running(child) && child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
  }, boundMs);
  await exited;
  clearTimeout(t);
}

interface Helper<R> {
  ready: R;
  pid: number;
  ask<M extends { type: string }>(m: ToChild, type: M['type'], timeoutMs?: number): Promise<M>;
  close(): Promise<void>;
}

async function forkHelper<R extends { type: 'ready' }>(role: 'cards' | 'peer', layout: unknown, timeoutMs: number): Promise<Helper<R>> {
  const child = fork(CHILD, [role, JSON.stringify(layout ?? {})], { cwd: ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  started.add(child);
  const waiters: Array<(m: { type: string }) => void> = [];
  child.on('message', (m: { type: string }) => waiters.shift()?.(m));
  const next = <M extends { type: string }>(type: string, ms: number): Promise<M> =>
    new Promise<M>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`the ${role} child sent no ${type} message within ${ms} ms`)), ms);
      const onExit = (code: number | null) => reject(new Error(`the ${role} child exited (${code}) before sending ${type}`));
      child.once('exit', onExit);
      waiters.push((m) => {
        clearTimeout(t);
        child.off('exit', onExit);
        if (m.type === type) resolve(m as M);
        else reject(new Error(`the ${role} child: expected ${type}, got ${m.type}`));
      });
    });
  let ready: R;
  try {
    ready = await next<R>('ready', timeoutMs);
  } catch (err) {
    await stop(child, () => child.kill('SIGTERM'), 2_000);
    throw err;
  }
  return {
    ready,
    pid: child.pid!,
    ask<M extends { type: string }>(m: ToChild, type: M['type'], ms = 30_000) {
      const p = next<M>(type, ms);
      child.send(m);
      return p;
    },
    close: () => stop(child, () => child.send({ type: 'close' } satisfies ToChild), 5_000),
  };
}

export interface CardsHandle {
  ready: CardsReady;
  pid: number;
  stats(): Promise<CardsStats>;
  close(): Promise<void>;
}

/** The card fleet and its registry, in their own process. */
export async function startCards(layout: CardsLayout, timeoutMs: number): Promise<CardsHandle> {
  const h = await forkHelper<CardsReady>('cards', layout, timeoutMs);
  return { ready: h.ready, pid: h.pid, stats: () => h.ask<CardsStats>({ type: 'stats' }, 'stats'), close: h.close };
}

export interface PeerHandle {
  ready: PeerReady;
  pid: number;
  /** The peer's own time per turn id since the last call (and resets it). */
  times(): Promise<PeerTimes>;
  close(): Promise<void>;
}

/** The A2A 1.0 peer, in its own process. */
export async function startPeer(timeoutMs: number): Promise<PeerHandle> {
  const h = await forkHelper<PeerReady>('peer', {}, timeoutMs);
  return { ready: h.ready, pid: h.pid, times: () => h.ask<PeerTimes>({ type: 'times' }, 'times'), close: h.close };
}

export interface ServeHandle {
  /** `http://127.0.0.1:<port>` */
  url: string;
  pid: number;
  /** VmRSS of the service process, MB (from /proc). */
  rssMB(): number;
  /** The last lines serve wrote on stderr (for a failure message). */
  tail(): string;
  /** Its CPU time so far (user + system), ms, from /proc. */
  cpuMs(): number;
  /** True while it runs. */
  alive(): boolean;
  /** SIGTERM, SIGKILL after `boundMs`. */
  close(boundMs?: number): Promise<void>;
}

/**
 * Starts `a2a-discovery serve --config <file>` from the built CLI (packages/service/dist; run
 * `npm run build` first) and waits for its "serving http://…" line, within `timeoutMs`.
 */
export async function startServe(configFile: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<ServeHandle> {
  if (!existsSync(BUILT_CLI)) throw new Error(`the built CLI is missing (${BUILT_CLI}): run \`npm run build\` first`);
  // BENCH_SERVICE_PROFILE=<dir>: serve writes a CPU profile of its whole run there when it stops.
  const profileDir = process.env['BENCH_SERVICE_PROFILE'];
  const profile = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
  const child = spawn(process.execPath, [...profile, BUILT_CLI, 'serve', '--config', configFile, '--port', '0', '--log-level', 'warn'], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.add(child);
  let out = '';
  const lines: string[] = [];
  const keep = (d: Buffer) => {
    for (const line of d.toString().split('\n')) {
      if (line.trim() === '') continue;
      lines.push(line);
      if (lines.length > 30) lines.shift();
    }
  };
  child.stdout!.on('data', (d: Buffer) => {
    // The last few kilobytes only: a start that logs much first (a PostgreSQL replica logs the
    // first cycle's warnings before it serves) still shows its "serving" line, however late.
    out = (out + d.toString()).slice(-8_192);
    keep(d);
  });
  child.stderr!.on('data', keep);
  const tail = () => lines.join('\n');
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`serve did not start within ${timeoutMs} ms; its last lines:\n${tail()}`)), timeoutMs);
      const check = () => {
        const m = /serving (http:\/\/[^/\s]+)\//.exec(out);
        if (m) {
          clearTimeout(t);
          resolve(m[1]!);
        }
      };
      child.stdout!.on('data', check);
      child.once('exit', (code, signal) => {
        clearTimeout(t);
        reject(new Error(`serve exited (${code ?? signal}) before it served; its last lines:\n${tail()}`));
      });
    });
  } catch (err) {
    await stop(child, () => child.kill('SIGTERM'), 5_000);
    throw err;
  }
  const pid = child.pid!;
  return {
    url,
    pid,
    rssMB() {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : NaN;
    },
    cpuMs() {
      // /proc/<pid>/stat: utime and stime are fields 14 and 15, in clock ticks (100 a second on Linux).
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    },
    tail,
    alive: () => running(child),
    close: (boundMs = 10_000) => stop(child, () => child.kill('SIGTERM'), boundMs),
  };
}
