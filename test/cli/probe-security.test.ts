/**
 * `a2a-discovery probe` shows a card's security schemes, whether the configuration's
 * `credentials:` (`--config`) can satisfy them, and the chosen interface with its tenant (issue
 * 23). Real peers: an @a2a-js/sdk 1.3 card requiring OAuth 2.0 client credentials, an ADK (0.3)
 * card requiring an API key; static header credentials with a prefix. No secret is printed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import type { CliRun } from '../helpers/cli.js';
import { runCli } from '../helpers/cli.js';
import { startApiKeyPeer, startOauth2Peer } from '../helpers/secured-peers.js';

let oauth: RunningPeer;
let keyed: RunningPeer;
let dir: string;
const SECRETS = { PROBE_BEARER: 'sekrit-bearer-1', PROBE_KEY: 'sekrit-key-2' };

before(async () => {
  oauth = await startOauth2Peer();
  keyed = await startApiKeyPeer();
  dir = await mkdtemp(join(tmpdir(), 'probe-security-'));
});
after(async () => {
  await Promise.all([oauth?.close(), keyed?.close()]);
  await rm(dir, { recursive: true, force: true });
});

const origin = (p: RunningPeer): string => new URL(p.baseUrl).origin;

/** A configuration whose `credentials:` present a bearer token to the oauth2 peer and an API key to the 0.3 peer. */
async function config(): Promise<string> {
  const file = join(dir, 'discovery.yaml');
  await writeFile(
    file,
    `allow: [${origin(oauth)}, ${origin(keyed)}]
allowLoopback: true
vocabulary: [{ tag: warranty, description: Warranty. }]
static:
  - { name: warranty_agent, url: "${oauth.baseUrl}", description: Warranty., tags: [warranty] }
credentials:
  - { origin: "${origin(oauth)}", header: authorization, prefix: "Bearer ", valueEnv: PROBE_BEARER }
  - { origin: "${origin(keyed)}", header: X-API-Key, valueEnv: PROBE_KEY }
`,
  );
  return file;
}

const probe = (target: string, ...flags: string[]): Promise<CliRun> => runCli(['probe', target, '--allow-loopback', ...flags], { env: { ...process.env, ...SECRETS } });

interface Security {
  status: string;
  message: string;
  origin: string;
  credentialsConfigured: boolean;
  satisfiedBy?: string[];
  schemes: Array<{ name: string; type: string; needs: string; presentable: boolean; description?: string }>;
}

describe('probe: card security schemes and the chosen interface', () => {
  test('without credentials: the oauth2 requirement cannot be satisfied, said in text and JSON; the card itself is accepted', async () => {
    const json = await probe(oauth.baseUrl, '--json');
    assert.equal(json.code, 0, json.stderr);
    const report = JSON.parse(json.stdout) as { accepted: boolean; stage: string; selection: { selected: boolean; reason?: string }; security: Security; chosenInterface: Record<string, unknown> };
    assert.equal(report.accepted, true);
    // Text and JSON agree: not selected, and why (issue 39: the JSON said `stage: "selected"`).
    assert.equal(report.stage, 'security');
    assert.deepEqual(report.selection, { selected: false, reason: `unauthorized: needs oauth2 client credentials for ${origin(oauth)}` });
    assert.equal(report.security.status, 'unsatisfiable');
    assert.equal(report.security.message, `unauthorized: needs oauth2 client credentials for ${origin(oauth)}`);
    assert.equal(report.security.credentialsConfigured, false);
    assert.deepEqual(report.security.schemes, [{ name: 'corpIdp', type: 'oauth2', needs: 'oauth2 client credentials', presentable: false, description: 'Tokens from the corporate IdP.' }]);
    assert.deepEqual(report.chosenInterface, { index: 0, url: `${origin(oauth)}/a2a/jsonrpc`, binding: 'JSONRPC', protocolVersion: '1.0', client: 'a2a-1.x' });

    const text = await probe(oauth.baseUrl);
    assert.match(text.stdout, new RegExp(`interface  JSONRPC ${origin(oauth)}/a2a/jsonrpc  \\(A2A 1\\.0, no tenant, the 1\\.x client\\)`));
    assert.match(text.stdout, /FAIL security {3}unauthorized: needs oauth2 client credentials for http:\/\/127\.0\.0\.1:\d+ \(no credentials configured/);
    assert.match(text.stdout, /corpIdp: oauth2 client credentials \(not presentable\) {2}card says: "Tokens from the corporate IdP\."/);
    assert.ok(text.stdout.trimEnd().endsWith(`; it would not be selected (${report.selection.reason})`), text.stdout);
  });

  test('with the configuration: the bearer token satisfies the oauth2 scheme, the API key the 0.3 card; no secret printed', async () => {
    const file = await config();
    for (const [peer, scheme] of [[oauth, 'corpIdp'], [keyed, 'partnerKey']] as const) {
      const json = await probe(peer.baseUrl, '--json', '--config', file);
      assert.equal(json.code, 0, json.stderr);
      const report = JSON.parse(json.stdout) as { stage: string; selection: { selected: boolean }; security: Security };
      assert.equal(report.security.status, 'satisfied', report.security.message);
      assert.deepEqual([report.stage, report.selection], ['selected', { selected: true }]);
      assert.doesNotMatch((await probe(peer.baseUrl, '--config', file)).stdout, /would not be selected/);
      assert.deepEqual(report.security.satisfiedBy, [scheme]);
      assert.equal(report.security.credentialsConfigured, true);
      const text = await probe(peer.baseUrl, '--config', file);
      assert.match(text.stdout, new RegExp(`ok   security   satisfied by ${scheme}`));
      for (const out of [json.stdout, json.stderr, text.stdout, text.stderr]) {
        for (const secret of Object.values(SECRETS)) assert.ok(!out.includes(secret), 'no secret in the output');
      }
    }
  });

  test('the 0.3 card without credentials: it needs an API key in header X-API-Key, and ADK\'s 0.3 client would call it', async () => {
    const json = await probe(keyed.baseUrl, '--json');
    const report = JSON.parse(json.stdout) as { security: Security; chosenInterface: { client: string; protocolVersion: string } };
    assert.equal(report.security.message, `unauthorized: needs an API key in header X-API-Key for ${origin(keyed)}`);
    assert.equal(report.chosenInterface.client, 'adk-0.3');
    assert.equal(report.chosenInterface.protocolVersion, '0.3');
  });
});
