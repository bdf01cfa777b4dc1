/**
 * A real PostgreSQL for the tests: initialised in a temporary directory as a non-root user
 * (PostgreSQL refuses to run as root), listening only on 127.0.0.1 on a free port, with its
 * socket in that directory; started and stopped by the test. The binaries come from Debian's
 * `postgresql` package (/usr/lib/postgresql/<major>/bin), /usr/local/bin or the PATH;
 * `A2A_TEST_PG_BIN` names another folder. `.ci/run` installs the package; locally, tests that
 * need it are skipped with {@link POSTGRES_SKIP} when the binaries are missing.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { missingError, skipUnlessRequired } from './skip.js';

/** The folder holding initdb, pg_ctl and postgres, or undefined. */
export function postgresBinDir(): string | undefined {
  const candidates: string[] = [];
  if (process.env.A2A_TEST_PG_BIN) candidates.push(process.env.A2A_TEST_PG_BIN);
  try {
    const majors = readdirSync('/usr/lib/postgresql').filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a));
    candidates.push(...majors.map((m) => `/usr/lib/postgresql/${m}/bin`));
  } catch {
    // no Debian package
  }
  candidates.push('/usr/local/bin', ...(process.env.PATH ?? '').split(':').filter(Boolean));
  return candidates.find((d) => ['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(join(d, b))));
}

const MISSING = 'PostgreSQL binaries (initdb, pg_ctl, postgres) not found: install Debian\'s postgresql package (scripts/ensure-test-deps.sh does) or set A2A_TEST_PG_BIN';

/**
 * Why PostgreSQL tests are skipped here, or undefined when they run. Never skipped when
 * `A2A_TEST_REQUIRE_PG=1` or `A2A_TEST_REQUIRE_ALL=1` (.ci/run): a missing PostgreSQL then fails
 * them (helpers/skip.ts).
 */
export const POSTGRES_SKIP: string | undefined = skipUnlessRequired('postgres', postgresBinDir() === undefined ? MISSING : undefined);

export interface TestPostgres {
  /** `postgres://a2a@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  readonly url: string;
  readonly port: number;
  /** A new schema name for one store (so every store starts empty). */
  schema(): string;
  /** Stops the server (fast shutdown: connections are closed). */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and deletes its directory. */
  close(): Promise<void>;
}

const RUN_AS = process.env.A2A_TEST_PG_USER ?? 'a2atest';

/** The uid/gid to run PostgreSQL as: ourselves, or (as root) a non-root user, created if missing. */
function runAs(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, RUN_AS], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', RUN_AS]);
    return { uid: id('-u'), gid: id('-g') };
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function run(bin: string, args: string[], user: { uid: number; gid: number } | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], ...(user && { uid: user.uid, gid: user.gid }), env: { ...process.env, LC_ALL: 'C' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`${bin} ${args.join(' ')} exited ${code}: ${out.slice(-2000)}`))));
  });
}

/** Initialises and starts a PostgreSQL; throws when the binaries are missing (check {@link POSTGRES_SKIP}). */
export async function startPostgres(): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (bin === undefined) throw missingError('postgres', MISSING);
  const user = runAs();
  const dir = await mkdtemp(join(tmpdir(), 'a2ad-pg-'));
  if (user) await chown(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  await run(join(bin, 'initdb'), ['-D', data, '-U', 'a2a', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions'], user);
  let port = 0;
  const log = join(dir, 'postgres.log');
  const start = async () => {
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200`;
    await run(join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-o', options, '-w', '-t', '60', 'start'], user);
  };
  // A free port can be taken between the check and the start: try a few.
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    port = await freePort();
    try {
      await start();
      lastError = undefined;
      break;
    } catch (err) {
      lastError = err;
    }
  }
  if (lastError !== undefined) {
    const text = await readFile(log, 'utf8').catch(() => '');
    await rm(dir, { recursive: true, force: true });
    throw new Error(`PostgreSQL did not start: ${(lastError as Error).message}\n${text.slice(-2000)}`);
  }
  let schemas = 0;
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    await run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', '-t', '60', 'stop'], user);
  };
  return {
    url: `postgres://a2a@127.0.0.1:${port}/postgres`,
    port,
    schema: () => `t${process.pid}_${++schemas}`,
    stop,
    async start() {
      if (running) return;
      await start();
      running = true;
    },
    async close() {
      await stop().catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
