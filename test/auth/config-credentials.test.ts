/**
 * `credentials:` entries of type oauth2 and google-id-token in the YAML configuration: every
 * problem located at its line, secrets only from env or files (never in a message), and the
 * resolved provider reaching a real identity provider on loopback (oauth2-mock-server).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { parseConfig, resolveSecrets } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { CLIENT_ID, CLIENT_SECRET, startIdp } from './secured-peers.js';
import type { RunningIdp } from './secured-peers.js';

const BASE = `allow: [https://billing.example.com, https://warranty.example.com, https://run.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Answers invoices., tags: [billing] }
`;

function problemsOf(fn: () => unknown): Array<[string, string]> {
  try {
    fn();
  } catch (err) {
    assert.ok(isDiscoveryError(err), String(err));
    return err.problems.map((p) => [`${p.line} ${p.path}`, p.message]);
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

describe('credentials: oauth2 and google-id-token in the configuration', () => {
  let idp: RunningIdp;
  before(async () => {
    idp = await startIdp();
  });
  after(() => idp.close());

  test('each provider type parses; static entries stay as they were', () => {
    const config = parseConfig(`${BASE}allowLoopback: true
credentials:
  - { origin: "https://billing.example.com", prefix: "Bearer ", valueEnv: BILLING_TOKEN }
  - type: oauth2
    origin: https://warranty.example.com
    tokenUrl: https://idp.example.com/oauth/token
    clientId: discovery
    clientSecretFile: /run/secrets/warranty-client
    scopes: [agents.chat, agents.read]
    audience: https://warranty.example.com
    auth: post
  - { type: google-id-token, origin: "https://run.example.com" }
`);
    assert.deepEqual(config.credentials, [
      { origin: 'https://billing.example.com', header: 'authorization', prefix: 'Bearer ', valueEnv: 'BILLING_TOKEN' },
      {
        type: 'oauth2',
        origin: 'https://warranty.example.com',
        header: 'authorization',
        tokenUrl: 'https://idp.example.com/oauth/token',
        clientId: 'discovery',
        clientSecretFile: '/run/secrets/warranty-client',
        scopes: ['agents.chat', 'agents.read'],
        audience: 'https://warranty.example.com',
        auth: 'post',
      },
      { type: 'google-id-token', origin: 'https://run.example.com', header: 'authorization' },
    ]);
  });

  test('every problem of an entry at its YAML line', () => {
    const problems = problemsOf(() =>
      parseConfig(`${BASE}credentials:
  - type: oauth2
    origin: https://warranty.example.com
    tokenUrl: http://idp.example.com/token
    valueEnv: X
  - type: oauth2
    origin: https://billing.example.com
    clientId: c
    clientSecretEnv: S
  - { type: google-id-token, origin: "https://run.example.com", clientId: c }
  - { type: kerberos, origin: "https://run.example.com" }
`),
    );
    assert.deepEqual(problems.sort(), [
      ['6 credentials[0]', 'needs exactly one of clientSecretEnv (an environment variable) or clientSecretFile (a file); secrets are never written in the configuration'],
      ['9 credentials[0].valueEnv', 'applies only to type static, but this entry is type oauth2'],
      ['6 credentials[0]', 'an oauth2 entry needs clientId'],
      ['8 credentials[0].tokenUrl', 'must be https (token requests carry the client secret): plain http is accepted only for a loopback host (localhost, 127.x, [::1]); use https'],
      ['10 credentials[1]', 'an oauth2 entry needs exactly one of tokenUrl (the token endpoint) and issuer (discovered from its metadata)'],
      ['14 credentials[2].clientId', 'applies only to type oauth2, but this entry is type google-id-token'],
      ['15 credentials[3].type', 'must be one of static, oauth2, google-id-token; got "kerberos"'],
    ].sort());
  });

  test('resolveSecrets: the client secret from env, a missing one named at its line, never a value in a message', async () => {
    const yaml = `${BASE}allowLoopback: true
credentials:
  - type: oauth2
    origin: https://warranty.example.com
    tokenUrl: ${idp.tokenUrl}
    clientId: ${CLIENT_ID}
    clientSecretEnv: WARRANTY_CLIENT_SECRET
    audience: https://warranty.example.com
`;
    const config = parseConfig(yaml);
    await assert.rejects(resolveSecrets(config, {}), (err: Error & { problems: Array<{ line?: number; path: string; message: string }> }) => {
      assert.deepEqual(
        err.problems.map((p) => `${p.line} ${p.path}: ${p.message}`),
        ['11 credentials[0].clientSecretEnv: environment variable WARRANTY_CLIENT_SECRET (the oauth2 client secret for https://warranty.example.com) is not set'],
      );
      return true;
    });
    const secrets = await resolveSecrets(config, { WARRANTY_CLIENT_SECRET: CLIENT_SECRET });
    try {
      assert.equal(secrets.credentials.identity('https://warranty.example.com'), `oauth2 client "${CLIENT_ID}" at ${idp.tokenUrl}`);
      const headers = await secrets.credentials.headers('https://warranty.example.com/a2a/v1');
      assert.match(headers!['authorization']!, /^Bearer ey/);
      assert.deepEqual(secrets.tokenRequests(), [{ origin: 'https://warranty.example.com', outcome: 'issued', count: 1 }]);
      const shown = `${inspect(secrets, { depth: 10 })}\n${JSON.stringify(secrets)}`;
      assert.ok(!shown.includes(CLIENT_SECRET));
      assert.ok(!shown.includes(headers!['authorization']!.slice(7)));
    } finally {
      await secrets.credentials.close();
    }
  });

  test('the client secret from a file (one trailing line break removed), sent with client_secret_post', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'oauth-secret-'));
    try {
      await writeFile(join(dir, 'client-secret'), `${CLIENT_SECRET}\n`);
      const config = parseConfig(`${BASE}allowLoopback: true\ncredentials:\n  - { type: oauth2, origin: "https://run.example.com", tokenUrl: "${idp.tokenUrl}", clientId: ${CLIENT_ID}, clientSecretFile: ./client-secret, auth: post, resource: "https://run.example.com/" }\n`, { baseDir: dir });
      const secrets = await resolveSecrets(config, {});
      const log = idp.log.length;
      try {
        assert.match((await secrets.credentials.headers('https://run.example.com'))!['authorization']!, /^Bearer ey/);
      } finally {
        await secrets.credentials.close();
      }
      const [post] = idp.log.slice(log);
      assert.equal(post?.authorization, undefined, 'client_secret_post sends no Authorization header');
      await rm(join(dir, 'client-secret'));
      await assert.rejects(resolveSecrets(config, {}), /cannot read client secret file .*client-secret/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
