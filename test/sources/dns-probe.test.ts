/**
 * `a2a-discovery probe dns:<domain|record>` (packages/core/src/probe/probe-dns.ts and the CLI's
 * flags) against a real Knot DNS on loopback: each record with its decision — pinned (the card's
 * SHA-256 equals its capsha256), refused (a differing card, a host off the allowlist) — and one
 * record name probed alone.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { runCli } from '../helpers/cli.js';
import { cardFor } from '../helpers/cards.js';
import { DNS_SKIP, startDnsServer, type TestDnsServer } from '../helpers/dns-server.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';

let cards: JsonServer;
let knot: TestDnsServer;
const sha = (body: object) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

before(async () => {
  if (DNS_SKIP !== undefined) return;
  cards = await startJsonServer();
  const billing = cardFor(cards, 'billing');
  cards.routes.set('/billing/card.json', { body: billing });
  cards.routes.set('/tampered/card.json', { body: cardFor(cards, 'tampered') });
  knot = await startDnsServer({
    zones: [{
      name: 'agents.test',
      text: [
        `_index._agents 300 TXT "agents=billing:a2a,tampered:a2a,evil:a2a"`,
        `_billing._a2a._agents 60 SVCB 1 . key65400="${cards.origin}/billing/card.json" key65401="${sha(billing)}" key65404="finance"`,
        `_tampered._a2a._agents 60 SVCB 1 . key65400="${cards.origin}/tampered/card.json" key65401="${'2'.repeat(64)}"`,
        `_evil._a2a._agents 60 SVCB 1 evil.example. key65400="https://evil.example/card.json"`,
      ].join('\n'),
    }],
  });
});

after(async () => {
  await knot?.close();
  await cards?.close();
});

test('probe dns:<domain> shows each record and its decision: pinned, refused for a differing card, refused for a host off the allowlist', { skip: DNS_SKIP }, async () => {
  const flags = ['--resolver', `${knot.host}:${knot.port}`, '--allow', cards.origin, '--allow-loopback'];
  const run = await runCli(['probe', 'dns:agents.test', ...flags, '--json']);
  assert.equal(run.code, 1, run.stderr);
  const report = JSON.parse(run.stdout) as { accepted: boolean; records: Array<{ record: string; decision: string; code?: string; reason?: string }> };
  assert.equal(report.accepted, false);
  const byRecord = Object.fromEntries(report.records.map((r) => [r.record, r]));
  assert.equal(byRecord['_billing._a2a._agents.agents.test SVCB']?.decision, 'pinned');
  assert.equal(byRecord['_tampered._a2a._agents.agents.test SVCB']?.decision, 'refused');
  assert.equal(byRecord['_tampered._a2a._agents.agents.test SVCB']?.code, 'ERR_DIGEST_MISMATCH');
  assert.equal(byRecord['_evil._a2a._agents.agents.test SVCB']?.decision, 'refused');
  assert.match(byRecord['_evil._a2a._agents.agents.test SVCB']?.reason ?? '', /names https:\/\/evil\.example\/, which the allowlist refuses/);

  const one = await runCli(['probe', 'dns:_billing._a2a._agents.agents.test', ...flags]);
  assert.equal(one.code, 0, one.stdout + one.stderr);
  assert.match(one.stdout, /^ACCEPTED dns:_billing\._a2a\._agents\.agents\.test \(DNS\)\n {2}pinned {3}_billing\._a2a\._agents\.agents\.test SVCB → http:\/\/127\.0\.0\.1:\d+\/billing\/card\.json \(TTL 60s, not validated, realm finance\)\n {11}card SHA-256 [0-9a-f]{64} = capsha256\n$/);

  const usage = await runCli(['probe', 'dns:agents.test', '--allow', cards.origin]);
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /give the resolver to ask with --resolver/);
});
