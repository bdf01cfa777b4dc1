/**
 * How the interop matrix drives the product as a user does: the built CLI's `probe` (a child
 * process, JSON output) and `serve` (a child process over a generated YAML configuration), then
 * its HTTP API (`GET /api/snapshot`, `POST /api/chat`).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runCli } from '../helpers/cli.js';
import { startServe } from '../helpers/serve-process.js';

export interface ProbeReport {
  accepted: boolean;
  stage: string;
  protocolVersion: string;
  problems: Array<{ path: string; message: string }>;
  warnings: Array<{ path: string; message: string }>;
  skills: Array<{ id: string; tags: string[] }>;
  urls: Array<{ path: string; url: string; role: string; called: boolean; binding?: string; reason?: string }>;
  http?: { status: number; notes?: string[] };
}

/** `a2a-discovery probe <url> --allow-loopback --json`. */
export async function probe(url: string): Promise<{ code: number; report: ProbeReport; stderr: string }> {
  const run = await runCli(['probe', url, '--allow-loopback', '--json']);
  let report: ProbeReport;
  try {
    report = JSON.parse(run.stdout) as ProbeReport;
  } catch {
    throw new Error(`probe printed no JSON (exit ${run.code}): ${run.stdout} ${run.stderr}`);
  }
  return { code: run.code, report, stderr: run.stderr };
}

/** The warning paths of a probe report, sorted: what a test pins exactly. */
export function warningPaths(report: ProbeReport): string[] {
  return report.warnings.map((w) => w.path).sort();
}

export interface StaticAgent {
  name: string;
  url?: string;
  cardUrl?: string;
  description: string;
  /** Exactly one of `tags` (carried by the card) and `routingTags` (whatever the card says). */
  tags?: string[];
  routingTags?: string[];
  /** Where the agent answers when its card's interface names an unroutable host (0.0.0.0, ::). */
  interfaceUrl?: string;
}

export interface VocabularyEntry {
  tag: string;
  description: string;
  keywords: string[];
}

export interface Serving {
  url: string;
  stdout(): string;
  stderr(): string;
  /** Characters of output dropped (the kept output is bounded); 0: `stdout()`/`stderr()` are complete. */
  readonly dropped: number;
  stop(): Promise<number | null>;
}

/** Starts `a2a-discovery serve` on an ephemeral port with a configuration made of these agents. */
export async function serve(agents: StaticAgent[], vocabulary: VocabularyEntry[]): Promise<Serving> {
  const dir = await mkdtemp(join(tmpdir(), 'interop-'));
  const origins = [...new Set(agents.map((a) => new URL(a.url ?? a.cardUrl!).origin))];
  const config = {
    allow: origins,
    allowLoopback: true,
    vocabulary,
    needs: vocabulary.map((v) => ({ tag: v.tag })),
    static: agents,
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 200 },
  };
  const file = join(dir, 'discovery.yaml');
  await writeFile(file, stringify(config));
  try {
    const s = await startServe({ config: file });
    return {
      url: s.url,
      stdout: s.stdout,
      stderr: s.stderr,
      get dropped() {
        return s.dropped;
      },
      stop: async () => {
        const { code } = await s.stop();
        await rm(dir, { recursive: true, force: true });
        return code;
      },
    };
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
}

export interface SnapshotAgent {
  localName: string;
  protocolVersion: string;
  tags: string[];
  /** Present when a static entry's routingTags route it: the card's own skill tags. */
  cardTags?: string[];
  /** Present when a static entry's interfaceUrl replaced an unroutable interface. */
  interfaceRewritten?: { from: string; to: string };
  card: { name: string };
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/**
 * Polls `GET /api/snapshot` until the agent is in it (or the endpoint has a verdict that keeps it
 * out). Bounded by a generous deadline only so that a broken build fails instead of hanging.
 */
export async function admitted(s: Serving, localName: string): Promise<{ agent?: SnapshotAgent; endpoints: unknown[] }> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const snap = await getJson(`${s.url}/api/snapshot`);
    const agents = (snap.body.agents as SnapshotAgent[] | undefined) ?? [];
    const agent = agents.find((a) => a.localName === localName);
    const endpoints = ((await getJson(`${s.url}/api/endpoints`)).body.endpoints as Array<{ verdict?: { verdict: string; localName?: string } }>) ?? [];
    // Settled without the agent: its endpoint has a verdict that keeps it out of every snapshot.
    const refused = endpoints.some((e) => e.verdict?.localName === localName && e.verdict.verdict !== 'selected');
    if (agent || refused || Date.now() > deadline) return { ...(agent && { agent }), endpoints };
    await new Promise((r) => setTimeout(r, 100));
  }
}

export interface ChatResult {
  sessionId: string;
  author?: string;
  reply: string;
  agents?: string[];
  /** 200: the peer's failure in its own words, or null; 502: `agent-failed`. */
  error?: unknown;
  /** 502 `agent-failed`: the agent the turn called, its error, and the HTTP status it answered. */
  agent?: string;
  message?: string;
  agentStatus?: number;
  notices?: string[];
}

/** `POST /api/chat` with a JSON body: 200 with the turn, or 502 `agent-failed` naming the agent that failed. */
export async function chat(s: Serving, sessionId: string, message: string): Promise<{ status: number; body: ChatResult }> {
  const res = await fetch(`${s.url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ sessionId, message }) });
  return { status: res.status, body: (await res.json()) as ChatResult };
}
