/**
 * The embedded demo (what `npm start` runs): real peers, the service, and the morning of changes on
 * a fast clock. In process for the assertions on state, and once as the CLI a user starts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { dirname } from 'node:path';
import { spawn } from 'node:child_process';
import { runDemo } from '../../packages/service/src/demo/index.js';
import { CLI } from '../helpers/cli.js';

test('the demo publishes A (billing, returns), B (+ warranty), C (returns changed), D (warranty gone) in order; the session pinned to A keeps its tree; the breaking returns release is rolled out to 5 % and rolled back', async () => {
  const lines: string[] = [];
  const demo = await runDemo({ speed: 20, port: 0, out: (l) => lines.push(l) });
  try {
    await demo.scenarioDone;
    // The terminal settles: after the summary, the dashboard URL and the chat hint again; then,
    // while the warranty endpoint keeps failing (retried on backoff), nothing more is printed.
    const over = lines.findIndex((l) => /the morning is over: current snapshot v\d+ \(billing_agent, returns_agent\); failing: http:\/\/127\.0\.0\.1:\d+\/ \(ERR_FETCH_TIMEOUT since \d\d:\d\d:\d\d\)$/.test(l));
    assert.ok(over >= 0, lines.join('\n'));
    const after = lines.slice(over + 1);
    assert.ok(after.some((l) => l === `  dashboard   ${demo.url}/`), after.join('\n'));
    assert.ok(after.some((l) => l.startsWith(`  chat        curl -s ${demo.url}/api/chat `)), after.join('\n'));
    // Both clocks while the scenario plays (the wall clock is the dashboard's).
    assert.ok(lines.slice(0, over + 1).filter((l) => l.startsWith('[')).every((l) => /^\[\d\d:\d\d \(model\) · \d\d:\d\d:\d\d\] /.test(l)), lines.join('\n'));
    const printed = lines.length;
    let failedFetches = 0;
    const off = demo.service.events.subscribe((e) => {
      if (e.type === 'card.result' && (e.outcome === 'stale' || e.outcome === 'failed')) failedFetches++;
    });
    try {
      // Bounded: ten more failed fetches of the hung endpoint (counted, not timed).
      for (let i = 0; i < 400 && failedFetches < 10; i++) await new Promise((r) => setTimeout(r, 25));
    } finally {
      off();
    }
    assert.ok(failedFetches >= 10, `the hung endpoint is retried (${failedFetches} failed fetches)`);
    assert.ok(lines.length - printed <= 2, `quiet after the scenario, but printed:\n${lines.slice(printed).join('\n')}`);
    const history = demo.service.loop.snapshots.history().map((h) => ({ digest: h.digest, agents: h.agents.join(',') }));
    const order = ['billing_agent,returns_agent', 'billing_agent,returns_agent,warranty_agent', 'billing_agent,returns_agent,warranty_agent', 'billing_agent,returns_agent'];
    const tail = history.slice(-4);
    assert.deepEqual(tail.map((h) => h.agents), order, JSON.stringify(history));
    assert.equal(new Set(tail.map((h) => h.digest)).size, 4, 'four different digests');
    const [A] = tail;
    assert.equal(demo.service.trees.digestOf('demo-early'), A!.digest, 'the early session is pinned to A');
    assert.ok(demo.service.loop.snapshots.get(A!.digest), "A's snapshot is retained while the session lives");
    assert.ok(demo.service.trees.builtDigests.includes(A!.digest), "A's tree is still built");
    const turn = await demo.service.sessions.run('demo-early', 'Is serial 123 under warranty?');
    assert.equal(turn.digest, A!.digest);
    assert.notEqual(turn.author, 'warranty_agent', 'A has no warranty agent');
    assert.ok(lines.some((l) => /alert skills-changed: returns_agent/.test(l)));
    assert.ok(lines.some((l) => /new session demo-mid .* → warranty_agent: Warranty here \(A2A 1\.0\)/.test(l)));
    // The returns team's 2.0 drops a skill and fails half its calls: a staged rollout, then an
    // automatic rollback on the figures of the simulated customers' calls.
    const rollout = demo.service.loop.rollouts!.history.at(-1)!;
    assert.equal(rollout.status, 'rolled-back');
    assert.deepEqual(
      rollout.decisions.map((d) => `${d.action} ${d.share}`),
      ['started 5', 'rolled-back 0'],
    );
    assert.deepEqual(
      rollout.changes.map((c) => c.localName),
      ['returns_agent'],
    );
    const C = tail[2]!;
    assert.equal(rollout.baseline, C.digest, 'the rollout was measured against C');
    assert.ok(!history.some((h) => h.digest === rollout.candidate), 'the candidate was never published');
    const candidate = `v${rollout.candidateVersion} ${rollout.candidate.slice(0, 12)}`;
    assert.ok(lines.some((l) => l.includes(`breaking change, not published at once: candidate ${candidate} (returns_agent: `) && /exchange.*\) rolls out by stages, to 5% of new sessions first/.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => /^ {10}demo-customer-\d+ \(v\d+\) → (returns_agent: Returns 2\.0 here|failed: returns_agent answered 500)/.test(l)), 'the sessions on the new version are shown');
    assert.ok(lines.some((l) => /alert rollout-rolled-back: .*returns_agent: turn error rate \d+(\.\d)?% on the candidate \(\d+ of \d+ turns\)/.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => l.includes(`rollout of ${candidate} rolled back: new sessions start on v`)), lines.join('\n'));
    // Pinning: a session on the new version stays there after the rollback; a new one does not.
    const pinned = lines.map((l) => /^ {10}session (demo-customer-\d+) stays on v\d+ (\w{12}) \(pinned\)/.exec(l)).find((m) => m !== null);
    assert.ok(pinned, lines.join('\n'));
    assert.equal(pinned[2], rollout.candidate.slice(0, 12));
    assert.equal(demo.service.trees.digestOf(pinned[1]!), rollout.candidate, 'the session is still pinned to the candidate');
    assert.ok(lines.some((l) => new RegExp(`^ {10}new session demo-customer-\\d+ starts on v\\d+ ${C.digest.slice(0, 12)} → returns_agent: Returns here`).test(l)), lines.join('\n'));
    // The second instance knows no agent: it discovers them through the first one's AI Catalog.
    assert.ok(lines.some((l) => /downstream snapshot v\d+ \w+ \(through the catalog\): billing_agent, returns_agent, warranty_agent$/.test(l)), lines.join('\n'));
    assert.ok(lines.some((l) => /downstream session demo-downstream \(v\d+\) → warranty_agent: Warranty here \(A2A 1\.0\)/.test(l)), lines.join('\n'));
    assert.deepEqual(demo.downstream.loop.status !== undefined && (await demo.downstream.loop.status()).find((e) => e.baseUrl.startsWith(new URL(demo.url).origin) === false && e.names.includes('warranty_agent'))?.sources, ['upstream']);
    // Routing is evaluated on the vocabulary's examples before each publication that changes it.
    const B = tail[1]!;
    assert.ok(lines.some((l) => new RegExp(`routing of candidate v\\d+ ${A!.digest.slice(0, 12)}: 100% of 4 labelled cases routed right`).test(l)), 'A: the warranty examples are skipped');
    assert.ok(lines.some((l) => new RegExp(`routing of candidate v\\d+ ${B.digest.slice(0, 12)}: 100% of 6 labelled cases routed right \\(threshold 90%\\)`).test(l)), 'B: the warranty agent joins');
    assert.deepEqual(demo.service.loop.routingOf(B.digest), { accuracy: 1, minAccuracy: 0.9, passed: true, evaluated: 6 });
    // No setup: the demo keeps its state in an embedded SQLite file in its temporary directory.
    assert.equal(demo.service.store.kind, 'sqlite');
    assert.ok(demo.service.store.status().location.startsWith(dirname(demo.configFile)));
    await demo.service.flushStore();
    assert.ok((await demo.service.store.events()).some((e) => e.type === 'snapshot.published' && e.digest === A!.digest), 'the journal has the publications');
    assert.equal((await demo.service.store.pins()).find((p) => p.sessionId === 'demo-early')?.digest, A!.digest, 'and the pins');
  } finally {
    await demo.close();
  }
});

test('`a2a-discovery demo` prints the dashboard URL, plays the morning and stops cleanly on SIGINT', async () => {
  const child = spawn(process.execPath, [...CLI, 'demo', '--speed', '20', '--port', '0']);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exit = new Promise<number | null>((r) => child.on('exit', r));
  try {
    // A bound, not a timing: the rollback act runs real turns, slower on a loaded machine.
    const deadline = Date.now() + 180_000;
    const settled = /the morning is over[^\n]*\n[^\n]*\n {2}dashboard {3}http:\/\/127\.0\.0\.1:\d+\/\n {2}chat {8}curl /;
    while (!settled.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.match(out, /dashboard {3}http:\/\/127\.0\.0\.1:\d+\//);
    // After the summary, the two lines an operator needs again, where the terminal ends.
    assert.match(out, settled);
    const url = /dashboard {3}(http:\/\/[^/\s]+)\//.exec(out)![1];
    const res = await fetch(`${url}/readyz`);
    assert.equal(res.status, 200);
    child.kill('SIGINT');
    assert.equal(await exit, 0);
  } finally {
    // A failed assertion must not leave the demo running (the test would never end).
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});
