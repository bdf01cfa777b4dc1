/**
 * resolveSecrets: the token, per-origin credentials and trusted keys, read from a fake
 * environment and from files; every missing secret is named, and no value ever appears in a message.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { loadConfig, parseConfig, resolveSecrets, type DiscoveryConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError, type DiscoveryError } from '../../packages/core/src/errors.js';
import { verifyCardSignatures, signCard } from '../../packages/core/src/card/index.js';

const EXAMPLE = new URL('../../examples/discovery.yaml', import.meta.url).pathname;
const SECRET = 's3cr3t-value-that-must-never-be-printed';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'secrets-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

function publicJwk(kid?: string): Record<string, unknown> {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { ...(kid !== undefined && { kid }), ...(publicKey.export({ format: 'jwk' }) as Record<string, unknown>) };
}

const BASE = `allow: [https://billing.example.com, https://warranty.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Answers invoices., tags: [billing] }
`;

async function failure(config: DiscoveryConfig, env: NodeJS.ProcessEnv): Promise<DiscoveryError> {
  try {
    await resolveSecrets(config, env);
  } catch (err) {
    assert.ok(isDiscoveryError(err));
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    return err;
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

/** Everything a user could see of an error. */
function everything(err: DiscoveryError): string {
  return [err.message, JSON.stringify(err.toJSON()), inspect(err, { depth: 10 }), ...err.problems.map((p) => p.message)].join('\n');
}

describe('resolveSecrets', () => {
  test('the example: token and credential from env, the trusted key from its file', async () => {
    const config = await loadConfig(EXAMPLE);
    const secrets = await resolveSecrets(config, { A2A_DISCOVERY_TOKEN: 'tok\n', BILLING_TOKEN: 'bill-123' });
    assert.equal(secrets.token, 'tok');
    assert.deepEqual(await secrets.credentials.headers('https://billing.example.com'), { authorization: 'Bearer bill-123' });
    assert.deepEqual(await secrets.credentials.headers('https://billing.example.com/a2a/v1'), { authorization: 'Bearer bill-123' });
    assert.deepEqual(await secrets.credentials.headers('https://BILLING.example.com:443'), { authorization: 'Bearer bill-123' });
    assert.equal(await secrets.credentials.headers('https://warranty.example.com'), undefined);
    assert.equal(await secrets.credentials.headers('https://billing.example.com:8443'), undefined);
    assert.equal(await secrets.credentials.headers('not a url'), undefined);
    assert.equal(secrets.keys.length, 1);
    assert.equal(secrets.keys[0]!.kid, 'billing-2025');
    assert.deepEqual(secrets.keys[0]!.origins, ['https://billing.example.com']);
    assert.equal(secrets.keys[0]!.jwk.kty, 'EC');
  });

  test('credentials returns a fresh object each time', async () => {
    const config = await loadConfig(EXAMPLE);
    const secrets = await resolveSecrets(config, { A2A_DISCOVERY_TOKEN: 't', BILLING_TOKEN: 'b' });
    const first = (await secrets.credentials.headers('https://billing.example.com'))!;
    first.authorization = 'changed';
    assert.deepEqual(await secrets.credentials.headers('https://billing.example.com'), { authorization: 'Bearer b' });
  });

  test('file secrets, relative to the config file, with one trailing line break removed', async () => {
    await writeFile(join(dir, 'token'), 'file-token\n');
    await writeFile(join(dir, 'api-key'), 'key-456\r\n');
    await writeFile(
      join(dir, 'discovery.yaml'),
      `${BASE}server: { host: 0.0.0.0, tokenFile: ./token }\ncredentials: [{ origin: "https://warranty.example.com", header: X-Api-Key, valueFile: api-key }]\n`,
    );
    const secrets = await resolveSecrets(await loadConfig(join(dir, 'discovery.yaml')), {});
    assert.equal(secrets.token, 'file-token');
    assert.deepEqual(await secrets.credentials.headers('https://warranty.example.com'), { 'x-api-key': 'key-456' });
    assert.deepEqual(secrets.keys, []);
  });

  test('no secrets configured: nothing to read', async () => {
    const secrets = await resolveSecrets(parseConfig(BASE), {});
    assert.equal(secrets.token, undefined);
    assert.equal(await secrets.credentials.headers('https://billing.example.com'), undefined);
    assert.deepEqual(secrets.keys, []);
  });

  test('a missing env var is reported by name, located in the YAML, and no value is ever printed', async () => {
    const config = parseConfig(
      `${BASE}server: { tokenEnv: SERVICE_TOKEN }\ncredentials:\n  - { origin: "https://billing.example.com", valueEnv: BILLING_TOKEN }\n  - { origin: "https://warranty.example.com", valueEnv: WARRANTY_TOKEN }\n`,
      { file: 'd.yaml' },
    );
    const err = await failure(config, { SERVICE_TOKEN: SECRET, BILLING_TOKEN: `${SECRET}\nX-Injected: 1`, OTHER: SECRET });
    assert.deepEqual(
      err.problems.map((p) => [`${p.line}:${p.column} ${p.path}`, p.message]),
      [
        ['7:56 credentials[0].valueEnv', 'environment variable BILLING_TOKEN (the credential for https://billing.example.com) contains a line break or control character, which cannot go into an HTTP header'],
        ['8:57 credentials[1].valueEnv', 'environment variable WARRANTY_TOKEN (the credential for https://warranty.example.com) is not set'],
      ],
    );
    assert.ok(!everything(err).includes(SECRET), 'a secret value leaked into the error');
    assert.ok(!everything(err).includes('s3cr3t'));
  });

  test('an empty env var is reported', async () => {
    const config = parseConfig(`${BASE}server: { tokenEnv: SERVICE_TOKEN }\n`);
    const err = await failure(config, { SERVICE_TOKEN: '' });
    assert.equal(err.problems[0]!.message, 'environment variable SERVICE_TOKEN (the service token) is empty');
  });

  test('missing and unreadable files are reported by name, with every other problem', async () => {
    await writeFile(join(dir, 'private.json'), JSON.stringify({ kid: 'k2', ...generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' }) }));
    await writeFile(join(dir, 'oct.json'), JSON.stringify({ kid: 'k3', kty: 'oct', k: SECRET }));
    await writeFile(join(dir, 'broken.json'), `{"kid": "k4", "x": "${SECRET}"`);
    await writeFile(join(dir, 'other-kid.json'), JSON.stringify(publicJwk('someone-else')));
    await writeFile(join(dir, 'bad-point.json'), JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' }));
    const config = parseConfig(
      `${BASE}server: { tokenFile: ./missing-token }
signatures:
  keys:
    - { kid: k1, jwkFile: ./missing.json }
    - { kid: k2, jwkFile: ./private.json }
    - { kid: k3, jwkFile: ./oct.json }
    - { kid: k4, jwkFile: ./broken.json }
    - { kid: k5, jwkFile: ./other-kid.json }
    - { kid: k6, jwkFile: ./bad-point.json }
    - { kid: k7, jwkFile: . }
`,
      { baseDir: dir },
    );
    const err = await failure(config, {});
    const messages = err.problems.map((p) => `${p.path}: ${p.message}`);
    assert.deepEqual(messages, [
      `server.tokenFile: cannot read token file ${join(dir, 'missing-token')}: no such file`,
      `signatures.keys[0].jwkFile: cannot read key file ${join(dir, 'missing.json')}: no such file`,
      `signatures.keys[1].jwkFile: key file ${join(dir, 'private.json')}: is a private key; configure only its public part`,
      `signatures.keys[2].jwkFile: key file ${join(dir, 'oct.json')}: is a symmetric ("oct") key; only public keys can verify cards`,
      `signatures.keys[3].jwkFile: key file ${join(dir, 'broken.json')}: is not valid JSON`,
      `signatures.keys[4].jwkFile: key file ${join(dir, 'other-kid.json')}: the key's own kid "someone-else" differs from the configured kid "k5"`,
      `signatures.keys[5].jwkFile: key file ${join(dir, 'bad-point.json')}: is not a usable public key (${/\((.*)\)$/.exec(messages[6]!)?.[1]})`,
      `signatures.keys[6].jwkFile: cannot read key file ${dir}: it is a directory`,
    ]);
    assert.equal(err.problems[0]!.line, 5);
    assert.match(messages[6]!, /bad-point\.json: is not a usable public key \(.+\)$/);
    assert.ok(!everything(err).includes(SECRET));
  });

  test('a JWKS file: the key with the configured kid is taken', async () => {
    await writeFile(join(dir, 'jwks.json'), JSON.stringify({ keys: [publicJwk('a'), publicJwk('b')] }));
    const config = parseConfig(`${BASE}signatures: { keys: [{ kid: b, jwkFile: jwks.json }, { kid: c, jwkFile: jwks.json }] }\n`, { baseDir: dir });
    const err = await failure(config, {});
    assert.deepEqual(err.problems.map((p) => p.path), ['signatures.keys[1].jwkFile']);
    assert.match(err.problems[0]!.message, /a key set without a key whose kid is "c"/);
  });

  test('the keys read verify a signed card', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    await writeFile(join(dir, 'signer.json'), JSON.stringify(publicKey.export({ format: 'jwk' })));
    const config = parseConfig(`${BASE}signatures: { mode: required, keys: [{ kid: signer, jwkFile: signer.json }] }\n`, { baseDir: dir });
    const { keys } = await resolveSecrets(config, {});
    const card = {
      protocolVersion: '0.3.0',
      name: 'Billing',
      description: 'Invoices.',
      url: 'https://billing.example.com/a2a',
      version: '1.0.0',
      capabilities: {},
      defaultInputModes: ['text'],
      defaultOutputModes: ['text'],
      skills: [{ id: 'invoices', name: 'Invoices', description: 'Invoices.', tags: ['billing'] }],
    };
    const signed = await signCard(card, privateKey, { kid: 'signer', alg: 'ES256' });
    const result = await verifyCardSignatures(signed, { mode: config.signatures.mode, keys });
    assert.equal(result.status, 'verified');
  });

  test('the result never shows the token or credential values when printed', async () => {
    const config = await loadConfig(EXAMPLE);
    const secrets = await resolveSecrets(config, { A2A_DISCOVERY_TOKEN: SECRET, BILLING_TOKEN: SECRET });
    assert.equal(secrets.token, SECRET);
    assert.ok(!inspect(secrets, { depth: 10 }).includes(SECRET));
    assert.ok(!JSON.stringify(secrets).includes(SECRET));
    assert.match(inspect(secrets), /\[redacted\]/);
  });
});
