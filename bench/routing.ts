/**
 * Routing benchmark (`npm run bench:routing`, #17; see docs/benchmarks.md "Routing"): build and
 * evaluate a 200-agent tree split into 10 domains, on 500 labelled cases, against the same 200
 * agents under one level in the same run.
 *
 * Each measurement runs in a fresh child process (so peak RSS belongs to that scenario alone):
 * 1. select + snapshot: stand-in cards parsed by the real parser, the real matcher, cap and
 *    domain layout, the digest;
 * 2. tree: the ADK tree from the snapshot (remote agents from cached cards, the registry's
 *    checks, verifyTree over every node);
 * 3. evaluation, routed root: 500 cases through the routing plan the RoutedAgents run;
 * 4. evaluation, model root: 500 cases run for real through ADK (InMemoryRunner, a fresh tree
 *    per case) with a scripted BaseLlm over stand-in leaves.
 *
 * Environment: BENCH_ROUNDS (default 5). Prints a table; writes bench/results/routing.json.
 */
import { execFileSync } from 'node:child_process';
import { writeResults } from './lib/results.js';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import type { BaseLlmConnection, LlmRequest, LlmResponse } from '@google/adk';
import { seededRandom } from '../packages/core/src/clock/index.js';
import { envCount } from './lib/env.js';

const AGENTS = 200;
const DOMAINS = 10;
const CASES = 500;

interface ChildResult {
  scenario: 'two-level' | 'one-level';
  agents: number;
  levels: number;
  selectMs: number;
  treeMs: number;
  evalMs: number;
  modelEvalMs: number;
  accuracy: number;
  modelAccuracy: number;
  fallbacks: number;
  rssStartMB: number;
  maxRssMB: number;
  heapUsedMB: number;
}


async function child(scenario: ChildResult['scenario']): Promise<ChildResult> {
  const rssStart = process.resourceUsage().maxRSS / 1024;
  const { BaseLlm } = await import('@google/adk');
  const { snapshotTreeBuilder } = await import('../packages/core/src/adk/index.js');
  const { HostPolicy } = await import('../packages/core/src/fetch/index.js');
  const { evaluateRouting, standInSnapshot } = await import('../packages/core/src/routing/index.js');

  const pad = (n: number) => String(n).padStart(3, '0');
  const tags = Array.from({ length: AGENTS }, (_, i) => `topic_${pad(i)}`);
  // Each tag has two reviewed keywords; topics 10k and 10k+1 share their second one (a deliberate ambiguity).
  const keywords = tags.map((_, i) => [`kw${pad(i)}`, i % 10 === 0 ? `shared${pad(i)}` : i % 10 === 1 ? `shared${pad(i - 1)}` : `alt${pad(i)}`]);
  const vocabulary = tags.map((tag, i) => ({ tag, description: `Requests about ${tag}.`, keywords: keywords[i]! }));
  const needs = tags.map((tag) => ({ tag }));
  const peers = tags.map((t, i) => ({ name: `agent_${pad(i)}`, tags: [t] }));
  const perDomain = AGENTS / DOMAINS;
  const domains =
    scenario === 'two-level'
      ? Array.from({ length: DOMAINS }, (_, d) => ({ name: `domain_${d}`, description: `Domain ${d}.`, tags: tags.slice(d * perDomain, (d + 1) * perDomain), maxAgents: perDomain }))
      : [];
  const random = seededRandom(17);
  const cases = Array.from({ length: CASES }, (_, i) => {
    const k = Math.floor(random() * AGENTS);
    const kind = i % 10;
    // 8 in 10 name one topic's own keyword, 1 in 10 only the word two topics share (expecting the
    // second: a tie the router breaks by name, so these are misrouted), 1 in 10 matches nothing.
    const message =
      kind === 9 ? `hello, can somebody help me with case ${i}?` : kind === 8 ? `question about shared${pad(k - (k % 10))} please` : `I have a question about kw${pad(k)} (ticket ${i})`;
    const expect = kind === 9 ? tags[k]! : kind === 8 ? tags[k - (k % 10) + 1]! : tags[k]!;
    return { message, expect, source: 'cases' as const };
  });

  let t = performance.now();
  const snapshot = standInSnapshot(peers, { vocabulary, needs, maxAgents: scenario === 'two-level' ? 16 : AGENTS, domains });
  const selectMs = performance.now() - t;

  const policy = HostPolicy.from({ allow: ['https://*.stand-in.invalid'] });
  const build = snapshotTreeBuilder({ root: { kind: 'routed', hints: vocabulary }, policy });
  t = performance.now();
  const root = build(snapshot);
  const treeMs = performance.now() - t;
  if (root.subAgents.length !== (scenario === 'two-level' ? DOMAINS : AGENTS)) throw new Error('unexpected tree shape');

  t = performance.now();
  const routed = await evaluateRouting(snapshot, { root: { kind: 'routed', hints: vocabulary }, cases, tags });
  const evalMs = performance.now() - t;

  // A scripted "model": transfers to the child whose name or description the user's words point at.
  class ScriptedLlm extends BaseLlm {
    constructor() {
      super({ model: 'bench-router' });
    }
    override async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
      const said = JSON.stringify(request.contents ?? []);
      const m = /kw(\d{3})|alt(\d{3})|shared(\d{3})/.exec(said);
      const n = m ? Number(m[1] ?? m[2] ?? m[3]) : undefined;
      const offered = request.toolsDict['transfer_to_agent'] ? String(request.config?.systemInstruction ?? '') : '';
      let to: string | undefined;
      if (n !== undefined) {
        const agent = `agent_${pad(n)}`;
        to = offered.includes(agent) ? agent : `domain_${Math.floor(n / perDomain)}`;
        if (!offered.includes(to)) to = undefined;
      }
      yield to
        ? { content: { role: 'model', parts: [{ functionCall: { name: 'transfer_to_agent', args: { agentName: to } } }] }, turnComplete: true }
        : { content: { role: 'model', parts: [{ text: 'No specialist is available.' }] }, turnComplete: true };
    }
    override connect(): Promise<BaseLlmConnection> {
      return Promise.reject(new Error('no live mode'));
    }
  }
  t = performance.now();
  const model = await evaluateRouting(snapshot, { root: { kind: 'model', model: new ScriptedLlm() }, cases, tags });
  const modelEvalMs = performance.now() - t;
  await build.close();

  return {
    scenario,
    agents: snapshot.agents.length,
    levels: routed.levels,
    selectMs,
    treeMs,
    evalMs,
    modelEvalMs,
    accuracy: routed.accuracy,
    modelAccuracy: model.accuracy,
    fallbacks: routed.fallbacks.length,
    rssStartMB: rssStart,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
    heapUsedMB: process.memoryUsage().heapUsed / 1024 / 1024,
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const me = fileURLToPath(import.meta.url);
  if (process.argv[2] === '--child') {
    process.stdout.write(JSON.stringify(await child(process.argv[3] as ChildResult['scenario'])));
    return;
  }
  const rounds = envCount('BENCH_ROUNDS', 5, 100);
  const results: ChildResult[] = [];
  for (let r = 0; r < rounds; r++) {
    // Alternate which scenario runs first in each round.
    const order: Array<ChildResult['scenario']> = r % 2 === 0 ? ['two-level', 'one-level'] : ['one-level', 'two-level'];
    for (const scenario of order) {
      const out = execFileSync(process.execPath, ['--import', 'tsx', me, '--child', scenario], { encoding: 'utf8', timeout: 300_000 });
      results.push(JSON.parse(out) as ChildResult);
      process.stderr.write(`round ${r + 1}/${rounds} ${scenario} done\n`);
    }
  }
  const fields: Array<[keyof ChildResult, string]> = [
    ['selectMs', 'select + snapshot (ms)'],
    ['treeMs', 'ADK tree build + checks (ms)'],
    ['evalMs', `evaluate ${CASES} cases, routed (ms)`],
    ['modelEvalMs', `evaluate ${CASES} cases, model via ADK (ms)`],
    ['maxRssMB', 'peak RSS of the process (MB)'],
    ['rssStartMB', 'RSS after start, before work (MB)'],
    ['heapUsedMB', 'heap in use at the end (MB)'],
    ['accuracy', 'accuracy, routed'],
    ['modelAccuracy', 'accuracy, scripted model'],
  ];
  const cell = (s: ChildResult['scenario'], f: keyof ChildResult) => {
    const xs = results.filter((x) => x.scenario === s).map((x) => x[f] as number);
    const d = f.endsWith('ccuracy') ? 3 : 1;
    return `${median(xs).toFixed(d)} [${Math.min(...xs).toFixed(d)}–${Math.max(...xs).toFixed(d)}]`;
  };
  const lines = [
    `Routing: ${AGENTS} agents, ${DOMAINS} domains, ${CASES} cases; median [min–max] of ${rounds} rounds, each a fresh process`,
    `${os.cpus()[0]?.model ?? 'cpu'} ×${os.cpus().length}, Node ${process.version}`,
    '',
    `| measure | two levels (10 × 20) | one level (200) | ratio |`,
    `|---|---|---|---|`,
    ...fields.map(([f, label]) => {
      const a = median(results.filter((x) => x.scenario === 'two-level').map((x) => x[f] as number));
      const b = median(results.filter((x) => x.scenario === 'one-level').map((x) => x[f] as number));
      return `| ${label} | ${cell('two-level', f)} | ${cell('one-level', f)} | ${b === 0 ? '–' : (a / b).toFixed(2)} |`;
    }),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  writeResults('routing.json', { node: process.version, cpus: os.cpus().length, agents: AGENTS, domains: DOMAINS, cases: CASES, rounds, results });
}

await main();
