/**
 * `a2a-discovery eval-routing` (#17) on a hand-labelled case file: the keyword router's confusion
 * table, fallbacks, skipped cases and exit codes are exactly what the labels predict. A model
 * root is evaluated through the `BaseLlm` seam over stand-in leaves.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BaseLlm } from '@google/adk';
import type { BaseLlmConnection, LlmRequest, LlmResponse } from '@google/adk';
import { evaluateRouting, parseCases, standInPeers, standInSnapshot } from '../../packages/core/src/routing/index.js';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { runCli } from '../helpers/cli.js';

const CONFIG = `
allow: ["https://billing.example.com", "https://returns.example.com"]
vocabulary:
  - tag: billing
    description: Invoices and charges.
    keywords: [invoice, charge]
  - tag: returns
    description: Product returns and refunds.
    keywords: [return, refund, label]
  - tag: warranty
    description: Warranty and repairs.
    keywords: [warranty, repair, serial]
needs: [{ tag: billing }, { tag: returns }, { tag: warranty }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Billing., tags: [billing], critical: true }
  - { name: returns_agent, url: "https://returns.example.com/", description: Returns., tags: [returns] }
root: { kind: routed, fallback: billing_agent }
`;

const CASES = `
- { message: "Why is there a charge on my invoice?", expect: billing }
- { message: "Print my return label", expect: returns }
- { message: "My laptop needs a repair", expect: warranty }
# refund (returns) and repair (warranty) tie; neither is critical, returns_agent sorts first: misrouted
- { message: "Refund the repair fee", expect: warranty }
# nothing matches: the default agent (billing_agent) answers
- { message: "Hello there", expect: returns_agent }
# not a tag, not an agent: skipped
- { message: "Where is my parcel?", expect: shipping }
`;

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'eval-routing-'));
  await writeFile(join(dir, 'discovery.yaml'), CONFIG);
  await writeFile(join(dir, 'cases.yaml'), CASES);
});
after(() => rm(dir, { recursive: true, force: true }));

describe('eval-routing', () => {
  test('a hand-labelled case file gives the expected confusion table; below 0.9 it exits 1', async () => {
    const run = await runCli(['eval-routing', '--config', join(dir, 'discovery.yaml'), '--cases', join(dir, 'cases.yaml'), '--json']);
    assert.equal(run.code, 1, run.stderr);
    const r = JSON.parse(run.stdout);
    assert.equal(r.source, 'stand-in peers built from the configuration');
    assert.equal(r.levels, 1);
    assert.deepEqual([r.total, r.evaluated, r.correct], [6, 5, 3]);
    assert.equal(r.accuracy, 0.6);
    assert.equal(r.passed, false);
    assert.deepEqual(r.confusion, {
      rows: ['billing', 'returns', 'warranty', 'returns_agent'],
      columns: ['billing_agent', 'returns_agent', 'warranty_agent'],
      counts: {
        billing: { billing_agent: 1 },
        returns: { returns_agent: 1 },
        warranty: { warranty_agent: 1, returns_agent: 1 },
        returns_agent: { billing_agent: 1 },
      },
    });
    assert.deepEqual(
      r.perLabel.map((l: { label: string; correct: number; cases: number }) => [l.label, l.correct, l.cases]),
      [['billing', 1, 1], ['returns', 1, 1], ['warranty', 1, 2], ['returns_agent', 0, 1]],
    );
    assert.deepEqual(r.fallbacks.map((f: { message: string; routedTo: string }) => [f.message, f.routedTo]), [['Hello there', 'billing_agent']]);
    assert.deepEqual(r.mistakes.map((m: { message: string }) => m.message), ['Refund the repair fee', 'Hello there']);
    assert.deepEqual(r.skipped.map((s: { expect: string }) => s.expect), ['shipping']);
  });

  test('text output names the threshold, the confusion table and the fallbacks; a lower threshold passes (exit 0)', async () => {
    const run = await runCli(['eval-routing', '--config', join(dir, 'discovery.yaml'), '--cases', join(dir, 'cases.yaml'), '--min-accuracy', '0.5']);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /accuracy 60\.0% \(3 of 5 cases, 1 skipped\); threshold 50\.0%: pass/);
    assert.match(run.stdout, /confusion \(rows: expected; columns: routed to\):/);
    assert.match(run.stdout, /fallbacks \(1\): no vocabulary matched, the default agent answered\n {2}"Hello there" expects returns_agent → billing_agent/);
    assert.match(run.stdout, /misrouted \(1\):\n {2}"Refund the repair fee" expects warranty → returns_agent/);
  });

  test('usage errors exit 2: no cases at all, a malformed case file', async () => {
    const none = await runCli(['eval-routing', '--config', join(dir, 'discovery.yaml')]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /no cases to evaluate/);
    await writeFile(join(dir, 'bad.yaml'), '- { message: hi }\n- { message: "", expect: billing, extra: 1 }\n');
    const bad = await runCli(['eval-routing', '--config', join(dir, 'discovery.yaml'), '--cases', join(dir, 'bad.yaml')]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /3 problem\(s\); first: \[0\]\.expect/);
  });

  test('a model root runs its real router through the BaseLlm seam, over stand-in leaves', async () => {
    const config = parseConfig(CONFIG.replace('root: { kind: routed, fallback: billing_agent }', 'root: { kind: model, model: fake-router }'));
    const snapshot = standInSnapshot(standInPeers(config), { vocabulary: config.vocabulary, needs: config.needs, maxAgents: 16 });
    const prompts: string[] = [];
    // A "model" that transfers on the first keyword it sees in the user's text, and never to warranty.
    class KeywordLlm extends BaseLlm {
      constructor() {
        super({ model: 'fake-router' });
      }
      override async *generateContentAsync(request: LlmRequest): AsyncGenerator<LlmResponse, void> {
        prompts.push(String(request.config?.systemInstruction ?? ''));
        const text = JSON.stringify(request.contents).toLowerCase();
        const to = /invoice|charge/.test(text) ? 'billing_agent' : /return|refund|repair/.test(text) ? 'returns_agent' : undefined;
        yield to
          ? { content: { role: 'model', parts: [{ functionCall: { name: 'transfer_to_agent', args: { agentName: to } } }] }, turnComplete: true }
          : { content: { role: 'model', parts: [{ text: 'No specialist is available.' }] }, turnComplete: true };
      }
      override connect(): Promise<BaseLlmConnection> {
        return Promise.reject(new Error('no live mode'));
      }
    }
    const report = await evaluateRouting(snapshot, {
      root: { kind: 'model', model: new KeywordLlm() },
      cases: parseCases(CASES),
      tags: config.vocabulary.map((v) => v.tag),
    });
    assert.deepEqual(
      report.results.map((r) => [r.message, r.routedTo ?? null, r.correct]),
      [
        ['Why is there a charge on my invoice?', 'billing_agent', true],
        ['Print my return label', 'returns_agent', true],
        ['My laptop needs a repair', 'returns_agent', false],
        ['Refund the repair fee', 'returns_agent', false],
        ['Hello there', null, false],
      ],
    );
    assert.equal(report.fallbacks.length, 1, 'the model reached no agent for "Hello there"');
    assert.ok(prompts.every((p) => !/card text|Stand-in for/.test(p)), 'no card text reaches the router prompt');
  });
});

describe('eval-routing --url (a running service)', () => {
  let server: Server;
  let base: string;
  const snapshot = {
    version: 7,
    digest: 'd'.repeat(64),
    createdAt: new Date(0).toISOString(),
    agents: [
      { localName: 'billing_agent', description: 'Billing.', tags: ['billing'], critical: true },
      { localName: 'returns_agent', description: 'Returns.', tags: ['returns'], critical: false },
    ],
  };
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/api/snapshot') res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(snapshot));
      else if (req.url?.startsWith('/api/snapshots/')) {
        // A body far past any snapshot: streamed without a length, so only the byte cap can stop it.
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < 64 && res.write(chunk)) sent++;
          if (sent < 64) res.once('drain', pump);
          else res.end('{}');
        };
        pump();
      } else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  test("evaluates the service's current snapshot", async () => {
    const run = await runCli(['eval-routing', '--config', join(dir, 'discovery.yaml'), '--cases', join(dir, 'cases.yaml'), '--url', base, '--json']);
    const r = JSON.parse(run.stdout);
    assert.match(r.source, /current snapshot of http:\/\/127\.0\.0\.1/);
    assert.ok(r.evaluated > 0, run.stderr);
  });

  test('a body larger than any snapshot is refused at the byte cap, with a clear message and a usage exit', async () => {
    const run = await runCli(['eval-routing', '--config', join(dir, 'discovery.yaml'), '--cases', join(dir, 'cases.yaml'), '--url', base, '--digest', 'x', '--json']);
    assert.equal(run.code, 2, run.stdout);
    assert.match(run.stderr, /answered more than 33554432 bytes; that is not a snapshot of this service/);
  });
});
