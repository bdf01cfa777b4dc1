/**
 * The interop matrix's frameworks that cannot share the root install run in a child process from
 * their own install folder, test-frameworks/<name>/ (package.json, package-lock.json, .npmrc; see
 * docs/dependencies.md), which scripts/ensure-test-deps.sh installs with `npm ci`:
 *
 * - `server.mjs <mode>` serves the framework's A2A agent and prints `READY <url>` once listening;
 * - `client.mjs <url> <text> [...]` has the framework's A2A client read a card and send one
 *   message, and prints one JSON line (`ClientAnswer`).
 *
 * Used by frameworks.test.ts (the frameworks against the product's peers and the product against
 * them) and orchestrator-clients.test.ts (their clients against the product's own A2A endpoint).
 */
import assert from 'node:assert/strict';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A folder under test-frameworks/. */
export type Framework = 'beeai' | 'strands' | 'mastra-client' | 'reactive-agents-client';

/** The framework's install folder (with a trailing slash); fails the test when it is not installed. */
export function frameworkFolder(framework: Framework): string {
  const dir = fileURLToPath(new URL(`../../test-frameworks/${framework}/`, import.meta.url));
  assert.ok(existsSync(`${dir}node_modules`), `${dir}node_modules is missing: run scripts/ensure-test-deps.sh`);
  return dir;
}

export interface ChildPeer {
  readonly baseUrl: string;
  output(): string;
  close(): Promise<void>;
}

/** Starts `node server.mjs <mode>` in the framework's folder and waits for its `READY <url>` line. */
export async function startFrameworkServer(framework: Framework, mode: string): Promise<ChildPeer> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['server.mjs', mode], { cwd: frameworkFolder(framework) });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exit;
  };
  try {
    const baseUrl = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${framework} server not ready in 30 s: ${out}`)), 30_000);
      child.stdout.on('data', () => {
        const m = /^READY (http:\/\/\S+)$/m.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      void exit.then(() => {
        clearTimeout(timer);
        reject(new Error(`${framework} server exited: ${out}`));
      });
    });
    return { baseUrl, output: () => out, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** What a `client.mjs` prints. */
export interface ClientAnswer {
  card?: { name: string; protocolVersion?: string };
  reply?: string;
  /** BeeAI only: every text the peer's stream events carried. */
  streamed?: string[];
  /** Mastra only: every request its client made (`<METHOD> <URL>`). */
  calls?: string[];
  error?: string;
}

/**
 * Runs `node client.mjs <url> <text> [...more]` in the framework's folder: its A2A client reads the
 * card and sends one message. `env` adds to this process's environment (a secret goes there, not
 * on the command line).
 */
export function runFrameworkClient(framework: Framework, url: string, text: string, more: readonly string[] = [], env: Record<string, string> = {}): Promise<ClientAnswer> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['client.mjs', url, text, ...more], { cwd: frameworkFolder(framework), timeout: 30_000, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (line === undefined) reject(new Error(`${framework} client printed no answer (${err?.message ?? 'exit 0'}): ${stdout} ${stderr}`));
      else resolve(JSON.parse(line) as ClientAnswer);
    });
  });
}
