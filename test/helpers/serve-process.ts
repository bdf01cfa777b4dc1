/**
 * `a2a-discovery serve` as a child process, as a user runs it: started on an ephemeral port with a
 * configuration file, its URL read from the line it prints once listening, its stdout and stderr
 * kept (the last `maxOutputChars` of each; `dropped` counts what was let go), stopped by pid with a
 * bound (SIGTERM, then SIGKILL). `cli` runs another build (the previous release of a rolling
 * upgrade); the default is this checkout's (helpers/cli.ts).
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawn } from 'node:child_process';
import { CLI } from './cli.js';

export interface ServeProcessOptions {
  /** The configuration file (`--config`). */
  config: string;
  /** Arguments after `serve --config <file> --port 0 --log-level <logLevel>`. */
  args?: readonly string[];
  /** The child's whole environment (default: this process's). */
  env?: NodeJS.ProcessEnv;
  /** Arguments for `process.execPath` that start the CLI (default: this checkout's, `CLI`). */
  cli?: readonly string[];
  /** `--log-level` (default `warn`). */
  logLevel?: string;
  /** How long to wait for the URL line before the start fails and the child is killed (default 30 s). */
  startTimeoutMs?: number;
  /** Characters of each stream kept, the latest (default 4 MiB). */
  maxOutputChars?: number;
}

/** How the child ended: its exit code, or the signal that ended it. */
export interface ServeExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServeProcess {
  readonly pid: number;
  /** `http://host:port`, without a trailing slash. */
  readonly url: string;
  /** Settles once the child has ended and its output is all read. */
  readonly exit: Promise<ServeExit>;
  /** True until the child has ended. */
  readonly running: boolean;
  /** Characters dropped from the front of the kept output (0: `stdout()`/`stderr()` are complete). */
  readonly dropped: number;
  stdout(): string;
  stderr(): string;
  /** stdout then stderr. */
  output(): string;
  /** The first line (either stream; already printed or still to come) that `re` matches. Rejects when the child ends first or after `timeoutMs`. */
  waitForLine(re: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  /** Sends `signal` to the child if it still runs; true if it was sent. */
  signal(signal: NodeJS.Signals): boolean;
  /**
   * SIGTERM, then SIGKILL if it has not ended after `graceMs` (default 30 s, beyond serve's default
   * drain); resolves with how it ended. After a `signal('SIGTERM')` of your own, await `exit`
   * instead: a second SIGTERM cuts serve's drain short (exit 143).
   */
  stop(graceMs?: number): Promise<ServeExit>;
}

const SERVING = /serving (http:\/\/[^/\s]+)\//;

/** A tail buffer: the last `max` characters written, with a count of those let go. */
class Tail {
  private text = '';
  dropped = 0;
  constructor(private readonly max: number) {}
  push(chunk: string): void {
    this.text += chunk;
    if (this.text.length > this.max) {
      const cut = this.text.length - this.max;
      this.dropped += cut;
      this.text = this.text.slice(cut);
    }
  }
  toString(): string {
    return this.text;
  }
}

interface LineWaiter {
  re: RegExp;
  streams: ReadonlySet<'stdout' | 'stderr'>;
  resolve(m: RegExpExecArray): void;
}

/** Starts `a2a-discovery serve` and resolves once it prints its URL; on failure the child is killed and the error carries its output. */
export async function startServe(o: ServeProcessOptions): Promise<ServeProcess> {
  const child: ChildProcessWithoutNullStreams = spawn(
    process.execPath,
    [...(o.cli ?? CLI), 'serve', '--config', o.config, '--port', '0', '--log-level', o.logLevel ?? 'warn', ...(o.args ?? [])],
    { env: o.env ?? process.env },
  );
  const max = o.maxOutputChars ?? 4 * 1024 * 1024;
  const kept = { stdout: new Tail(max), stderr: new Tail(max) };
  const partial = { stdout: '', stderr: '' };
  const waiters = new Set<LineWaiter>();
  let ended = false;

  const offer = (stream: 'stdout' | 'stderr', line: string): void => {
    for (const w of waiters) {
      if (!w.streams.has(stream)) continue;
      w.re.lastIndex = 0;
      const m = w.re.exec(line);
      if (m) {
        waiters.delete(w);
        w.resolve(m);
      }
    }
  };
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream].setEncoding('utf8');
    child[stream].on('data', (chunk: string) => {
      kept[stream].push(chunk);
      const lines = (partial[stream] + chunk).split('\n');
      partial[stream] = lines.pop()!;
      for (const line of lines) offer(stream, line);
    });
  }
  const exit = new Promise<ServeExit>((resolve) =>
    child.on('close', (code, signal) => {
      for (const stream of ['stdout', 'stderr'] as const) if (partial[stream] !== '') offer(stream, partial[stream]);
      ended = true;
      resolve({ code, signal });
    }),
  );
  const output = () => kept.stdout.toString() + kept.stderr.toString();
  const describeExit = (e: ServeExit) => (e.signal !== null ? `signal ${e.signal}` : `code ${e.code}`);

  const waitLine = (re: RegExp, timeoutMs: number, streams: ReadonlyArray<'stdout' | 'stderr'>): Promise<RegExpExecArray> => {
    for (const stream of streams) {
      const done = kept[stream].toString().split('\n');
      if (!ended) done.pop(); // a line still being written is offered when it is complete
      for (const line of done) {
        re.lastIndex = 0;
        const m = re.exec(line);
        if (m) return Promise.resolve(m);
      }
    }
    if (ended) return Promise.reject(new Error(`serve ended before printing a line matching ${re}: ${output()}`));
    return new Promise<RegExpExecArray>((resolve, reject) => {
      const waiter: LineWaiter = { re, streams: new Set(streams), resolve: (m) => finish(() => resolve(m)) };
      const timer = setTimeout(() => finish(() => reject(new Error(`no line matching ${re} within ${timeoutMs} ms: ${output()}`))), timeoutMs);
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(waiter);
        settle();
      };
      waiters.add(waiter);
      void exit.then((e) => finish(() => reject(new Error(`serve exited with ${describeExit(e)} before printing a line matching ${re}: ${output()}`))));
    });
  };

  const running = () => child.exitCode === null && child.signalCode === null;
  const signal = (s: NodeJS.Signals) => running() && child.kill(s);
  const stop = async (graceMs = 30_000): Promise<ServeExit> => {
    signal('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((r) => (timer = setTimeout(r, graceMs)));
    await Promise.race([exit, killed.then(() => signal('SIGKILL'))]);
    clearTimeout(timer);
    return exit;
  };

  let url: string;
  try {
    url = (await waitLine(SERVING, o.startTimeoutMs ?? 30_000, ['stdout']))[1]!;
  } catch (err) {
    signal('SIGKILL');
    await exit;
    throw new Error(`serve (pid ${child.pid}) did not start: ${(err as Error).message}`, { cause: err });
  }
  return {
    pid: child.pid!,
    url,
    exit,
    get running() {
      return running();
    },
    get dropped() {
      return kept.stdout.dropped + kept.stderr.dropped;
    },
    stdout: () => kept.stdout.toString(),
    stderr: () => kept.stderr.toString(),
    output,
    waitForLine: (re, timeoutMs = 30_000) => waitLine(re, timeoutMs, ['stdout', 'stderr']),
    signal,
    stop,
  };
}
