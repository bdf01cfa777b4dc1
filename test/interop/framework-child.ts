/**
 * The interop matrix's frameworks that have their own install folder (test-frameworks/<name>/,
 * installed by scripts/ensure-test-deps.sh): their servers and clients run in a child process
 * from that folder. A server prints `READY <url>` once it answers; a client prints one JSON line.
 * Used by frameworks.test.ts (BeeAI, Strands), voltagent.test.ts and orchestrator-clients.test.ts
 * (clients of other frameworks calling the product's own orchestrator).
 */
import assert from 'node:assert/strict';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type Framework = 'beeai' | 'strands' | 'voltagent' | 'mastra-client' | 'reactive-agents-client';


function folder(framework: Framework): string {
  const dir = fileURLToPath(new URL(`../../test-frameworks/${framework}/`, import.meta.url));
  assert.ok(existsSync(`${dir}node_modules`), `${dir}node_modules is missing: run scripts/ensure-test-deps.sh`);
  return dir;
}

export interface ChildPeer {
  /** The URL of its `READY` line: the base URL (BeeAI, Strands) or the card URL (VoltAgent). */
  readonly baseUrl: string;
  output(): string;
  close(): Promise<void>;
}

/** Starts `node server.mjs <mode>` in the framework's folder and waits for its `READY <url>` line. */
export async function startFrameworkServer(framework: Framework, mode: string): Promise<ChildPeer> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['server.mjs', mode], { cwd: folder(framework) });
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

interface ClientAnswer {
  card?: { name: string; protocolVersion?: string };
  reply?: string;
  /** BeeAI only: every text the peer's stream events carried. */
  streamed?: string[];
  /** Mastra only: every request its client made (`<METHOD> <URL>`). */
  calls?: string[];
  /** Mastra's stream only: the task state of the last event. */
  state?: string;
  error?: string;
}

/**
 * Runs `node client.mjs <url> <text> [...more]` in the framework's folder: its A2A client reads the
 * card and sends one message. `env` adds to this process's environment (a secret goes there, not
 * on the command line).
 */
export function runFrameworkClient(framework: Framework, url: string, text: string, more: readonly string[] = [], env: Record<string, string> = {}): Promise<ClientAnswer> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, ['client.mjs', url, text, ...more], { cwd: folder(framework), timeout: 30_000, env: { ...process.env, ...env } }, (err, stdout, stderr) => {
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (line === undefined) reject(new Error(`${framework} client printed no answer (${err?.message ?? 'exit 0'}): ${stdout} ${stderr}`));
      else resolve(JSON.parse(line) as ClientAnswer);
    });
  });
}

