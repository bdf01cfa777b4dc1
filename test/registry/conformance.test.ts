/**
 * The ARD specification's own conformance tool (`conformance/bin/conformance-test` of
 * ards-project/ard-spec, Python 3, no dependencies; copied as a fixture with its commit named)
 * probes the service's registry API as a client of the spec would: `GET /agents`, `POST /search`,
 * `POST /explore`, each answer checked against the spec's shapes (ListResponse `items`,
 * SearchResponse `results`, facets). A real service over real A2A peers (ADK JS `toA2a`, A2A 0.3;
 * @a2a-js/sdk 1.x, A2A 1.0) must pass with no error and no warning.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startTwoAgentService, type TwoAgentService } from '../helpers/two-agent-service.js';

const TOOL = fileURLToPath(new URL('./fixtures/ard-conformance-test', import.meta.url));

let env: TwoAgentService;

before(async () => {
  env = await startTwoAgentService();
});

after(() => env?.close());

function runTool(args: string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile('python3', [TOOL, ...args], { timeout: 60_000, env: { ...process.env, NO_COLOR: '1' } }, (err, stdout, stderr) => {
      // eslint-disable-next-line no-control-regex
      const out = `${stdout}${stderr}`.replace(/\u001b\[[0-9;]*m/g, '');
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 99) : 0, out });
    });
  });
}

test('the ARD conformance tool finds the registry API conformant: no error, no warning', async () => {
  assert.equal(env.service.loop.current()?.agents.length, 2, 'both agents admitted, so the list and search have entries');
  const { code, out } = await runTool(['registry', `${env.service.url}/api/registry`]);
  assert.match(out, /GET \/agents response contains valid 'items' list \(2 items\)/, out);
  assert.match(out, /POST \/search returned valid results list/, out);
  assert.match(out, /POST \/explore returned valid facets object/, out);
  assert.match(out, /CONFORMANCE STATUS: PASS\nValidated with 0 critical specification errors and 0 warnings\./, out);
  assert.equal(code, 0, out);
});
