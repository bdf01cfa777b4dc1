/**
 * `a2a-discovery endpoints` (docs/cli.md, docs/vocabulary.md) as an operator runs it against a
 * real service: a real ADK JS peer selected, a card endpoint answering 401 (refused: unauthorized,
 * never "pending" or "failed fetch"), a host the allowlist does not name (refused: allowlist) and
 * a closed port (pending: unreachable). The text names each cause in the vocabulary's words, the
 * JSON is the documented object, `--verdict` filters and refuses a word that is not a verdict.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { ENDPOINT_CAUSES } from '../../packages/core/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { runCli } from '../helpers/cli.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startVerdictFleet } from '../helpers/verdict-fleet.js';
import type { VerdictFleet } from '../helpers/verdict-fleet.js';

let fleet: VerdictFleet;
let denied: JsonServer;
let service: RunningService;

before(async () => {
  fleet = await startVerdictFleet();
  ({ service, denied } = fleet);
});

after(async () => {
  await fleet?.close();
});

interface Line {
  baseUrl: string;
  names: string[];
  verdict: string;
  cause: string | null;
  causeWords: string | null;
  reason: string;
  since: string;
}

test('endpoints: each verdict with its cause in words; a card answering 401 reads refused (unauthorized), not pending', async () => {
  const json = await runCli(['endpoints', '--url', service.url, '--json']);
  assert.equal(json.code, 0, json.stderr);
  const report = JSON.parse(json.stdout) as { service: string; endpoints: Line[] };
  assert.equal(report.service, service.url);
  const by = new Map(report.endpoints.map((e) => [e.names[0], e]));
  assert.deepEqual(Object.keys(by.get('billing_agent')!).sort(), ['baseUrl', 'cause', 'causeWords', 'names', 'reason', 'since', 'verdict']);
  assert.equal(by.get('billing_agent')!.verdict, 'selected');
  assert.equal(by.get('billing_agent')!.cause, null);
  const hr = by.get('hr_agent')!;
  assert.deepEqual([hr.verdict, hr.cause, hr.causeWords], ['refused', 'unauthorized', ENDPOINT_CAUSES.unauthorized.label]);
  assert.match(hr.reason, /answered HTTP 401/);
  assert.doesNotMatch(hr.reason, /failed fetch/);
  const outside = by.get('outside_agent')!;
  assert.deepEqual([outside.verdict, outside.cause, outside.causeWords], ['refused', 'allowlist', 'refused by the allowlist']);
  const fresh = by.get('new_agent')!;
  assert.deepEqual([fresh.verdict, fresh.cause, fresh.causeWords], ['pending', 'unreachable', 'unreachable']);

  // The text: a header, then one line per endpoint with the same words.
  const text = await runCli(['endpoints', '--url', service.url]);
  assert.equal(text.code, 0, text.stderr);
  const lines = text.stdout.trimEnd().split('\n');
  assert.match(lines[0]!, /^VERDICT\s+CAUSE\s+ENDPOINT\s+REASON$/);
  assert.equal(lines.length, 5);
  assert.ok(lines.some((l) => new RegExp(`^refused\\s+unauthorized\\s+${denied.origin.replace(/\./g, '\\.')}/\\s+unauthorized: `).test(l)), text.stdout);
  assert.ok(lines.some((l) => /^refused\s+refused by the allowlist\s+http:\/\/localhost:1\//.test(l)), text.stdout);
});

test('endpoints --verdict filters (repeatable); a word that is not a verdict is a usage error naming them', async () => {
  const refused = await runCli(['endpoints', '--url', service.url, '--verdict', 'refused', '--json']);
  assert.equal(refused.code, 0, refused.stderr);
  assert.deepEqual((JSON.parse(refused.stdout) as { endpoints: Line[] }).endpoints.map((e) => e.names[0]).sort(), ['hr_agent', 'outside_agent']);
  const two = await runCli(['endpoints', '--url', service.url, '--verdict', 'selected', '--verdict', 'pending', '--json']);
  assert.deepEqual((JSON.parse(two.stdout) as { endpoints: Line[] }).endpoints.map((e) => e.names[0]).sort(), ['billing_agent', 'new_agent']);
  const none = await runCli(['endpoints', '--url', service.url, '--verdict', 'held']);
  assert.equal(none.code, 0);
  assert.match(none.stdout, /no endpoint of .* has the verdict held/);
  const bad = await runCli(['endpoints', '--url', service.url, '--verdict', 'failed']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--verdict.*not a verdict; one of selected, degraded, held, pending, refused/);
});
