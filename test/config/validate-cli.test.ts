/**
 * `a2a-discovery validate --config <file>`, run as a real child process, as a user runs it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CliRun } from '../helpers/cli.js';
import { runCli } from '../helpers/cli.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const SECRET = 'do-not-print-this-token-9f2c';

/** Runs the CLI from the repository root with exactly `env` (plus PATH). */
const cli = (args: string[], env: Record<string, string> = {}): Promise<CliRun> => runCli(args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'validate-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a2a-discovery validate', () => {
  test('exit 0 and a one-line summary for a valid file whose secrets are all present', async () => {
    const r = await cli(['validate', '--config', 'examples/discovery.yaml'], { A2A_DISCOVERY_TOKEN: SECRET, BILLING_TOKEN: SECRET });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'ok: examples/discovery.yaml (2 static agents, 2 needs, sources: static, well-known partners, ai-catalog platform, registry catalog, kubernetes cluster, store: sqlite examples/data/a2a-discovery.sqlite)\n');
    assert.equal(r.stderr, '');
    assert.ok(!r.stdout.includes(SECRET));
  });

  test('exit 1 naming each missing env var at its line, never printing a value', async () => {
    const r = await cli(['validate', '--config', 'examples/discovery.yaml'], { BILLING_TOKEN: SECRET });
    assert.equal(r.code, 1);
    assert.equal(r.stdout, 'examples/discovery.yaml:9:13 server.tokenEnv: environment variable A2A_DISCOVERY_TOKEN (the service token) is not set\n');
    assert.equal(r.stderr, 'invalid: examples/discovery.yaml (1 problem)\n');
    assert.ok(!`${r.stdout}${r.stderr}`.includes(SECRET));
  });

  test('exit 1 with every problem as file:line:col path: message', async () => {
    const r = await cli(['validate', '--config', 'examples/config/many-mistakes.yaml']);
    assert.equal(r.code, 1);
    const lines = r.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 10);
    for (const line of lines) assert.match(line, /^examples\/config\/many-mistakes\.yaml:\d+:\d+ \S+: .+$/);
    assert.equal(lines[0], 'examples/config/many-mistakes.yaml:3:3 server.hots: unknown key "hots"; did you mean "host"? (allowed here: host, port, tokenEnv, tokenFile, allowedHosts, allowedOrigins, limits, clients, catalog, registry, a2a, oidc, telemetry, drainTimeoutMs, heapGrowthPercent)');
    assert.ok(lines.includes('examples/config/many-mistakes.yaml:20:11 static[1].name: duplicate name "billing_agent", already used by static[0]'));
    assert.equal(r.stderr, 'invalid: examples/config/many-mistakes.yaml (10 problems)\n');
  });

  test('exit 1 for a YAML syntax error, with its position', async () => {
    const r = await cli(['validate', '--config', 'examples/config/syntax-error.yaml']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /^examples\/config\/syntax-error\.yaml:3:1 \$: YAML syntax: /);
  });

  test('--json prints {valid, problems: [{path, message, line, column}]}', async () => {
    const bad = await cli(['validate', '--config', 'examples/config/many-mistakes.yaml', '--json']);
    assert.equal(bad.code, 1);
    const report = JSON.parse(bad.stdout) as { valid: boolean; problems: Array<Record<string, unknown>> };
    assert.equal(report.valid, false);
    assert.equal(report.problems.length, 10);
    assert.deepEqual(report.problems[3], { path: 'signatures.mode', message: 'must be one of off, if-present, required; got "sometimes"', line: 9, column: 9 });
    const good = await cli(['validate', '--config', 'examples/config/minimal.yaml', '--json']);
    assert.equal(good.code, 0);
    assert.deepEqual(JSON.parse(good.stdout), { valid: true, problems: [] });
  });

  test('secret files are checked relative to the config file, from any working directory', async () => {
    await writeFile(join(dir, 'discovery.yaml'), 'allow: [https://a.example.com]\nserver: { tokenFile: token.txt }\nsources: { wellKnown: { id: w, domains: [a.example.com] } }\n');
    const missing = await cli(['validate', '--config', join(dir, 'discovery.yaml')]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, `${join(dir, 'discovery.yaml')}:2:22 server.tokenFile: cannot read token file ${join(dir, 'token.txt')}: no such file\n`);
    await writeFile(join(dir, 'token.txt'), `${SECRET}\n`);
    const ok = await cli(['validate', '--config', join(dir, 'discovery.yaml')]);
    assert.equal(ok.code, 0, ok.stdout);
    assert.match(ok.stdout, /^ok: .* \(0 static agents, 0 needs, sources: well-known w, store: sqlite .*a2a-discovery\.sqlite\)\n$/);
  });

  test('the store: a PostgreSQL store whose password variable is missing is named at its line; a malformed store too', async () => {
    await writeFile(join(dir, 'pg.yaml'), 'allow: [https://a.example.com]\nsources: { wellKnown: { id: w, domains: [a.example.com] } }\nstore: postgres://a2a@db.internal:5432/a2a\nstorePasswordEnv: A2A_DB_PASSWORD\n');
    const missing = await cli(['validate', '--config', join(dir, 'pg.yaml')]);
    assert.equal(missing.code, 1);
    assert.equal(missing.stdout, `${join(dir, 'pg.yaml')}:4:19 storePasswordEnv: environment variable A2A_DB_PASSWORD (the store password) is not set\n`);
    const ok = await cli(['validate', '--config', join(dir, 'pg.yaml')], { A2A_DB_PASSWORD: SECRET });
    assert.equal(ok.code, 0, ok.stdout);
    assert.match(ok.stdout, /store: postgres:\/\/a2a@db\.internal:5432\/a2a\)\n$/);
    assert.ok(!ok.stdout.includes(SECRET));
    await writeFile(join(dir, 'bad-store.yaml'), 'allow: [https://a.example.com]\nsources: { wellKnown: { id: w, domains: [a.example.com] } }\nstore: redis://cache:6379\n');
    const bad = await cli(['validate', '--config', join(dir, 'bad-store.yaml')]);
    assert.equal(bad.code, 1);
    assert.match(bad.stdout, /:3:8 store: must be memory, sqlite, sqlite:<path> or postgres:/);
  });

  test('exit 2: no --config, an unreadable file', async () => {
    const none = await cli(['validate']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /required option '--config <file>' not specified/);
    const missing = await cli(['validate', '--config', 'no/such/discovery.yaml']);
    assert.equal(missing.code, 2);
    assert.equal(missing.stdout, '');
    assert.match(missing.stderr, /cannot read configuration file no\/such\/discovery\.yaml: no such file/);
    const directory = await cli(['validate', '--config', dir]);
    assert.equal(directory.code, 2);
  });

  test('--help documents the command, its exit codes and an example', async () => {
    const r = await cli(['validate', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /--config <file>/);
    assert.match(r.stdout, /Exit codes: 0 valid, 1 invalid, 2 usage error/);
    assert.match(r.stdout, /a2a-discovery validate --config examples\/discovery\.yaml/);
    const top = await cli(['--help']);
    assert.match(top.stdout, /validate \[options\]/);
  });
});
