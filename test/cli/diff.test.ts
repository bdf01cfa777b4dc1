/**
 * `a2a-discovery diff <a> <b>` as a user runs it (child processes): two card files on disk, and two
 * snapshots of a real running service by digest. Exit 0 compatible, 3 breaking, 1 an error, 2 a
 * usage error; --json is one object.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { startChangingCardService } from '../helpers/changing-card-service.js';
import type { ChangingCardService } from '../helpers/changing-card-service.js';
import { rawCard } from '../match/fixtures.js';

const ORIGIN = 'https://returns.example.com';
const REFUNDS = { id: 'refunds', tags: ['returns'], inputModes: ['text/plain', 'image/png'] };
const LABELS = { id: 'labels', tags: ['returns'] };

let dir: string;
const file = (name: string) => join(dir, name);

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'cli-diff-'));
  await writeFile(file('v1.json'), JSON.stringify(rawCard(ORIGIN, { skills: [REFUNDS, LABELS] })));
  await writeFile(file('v2-added.json'), JSON.stringify(rawCard(ORIGIN, { skills: [REFUNDS, LABELS, { id: 'exchanges', tags: ['returns'] }], overrides: { version: '2.2.0' } })));
  await writeFile(file('v3-dropped.json'), JSON.stringify(rawCard(ORIGIN, { skills: [{ ...REFUNDS, inputModes: ['text/plain'] }] })));
  const broken = rawCard(ORIGIN, { skills: [REFUNDS] });
  (broken.skills as Array<Record<string, unknown>>)[0]!.tags = 'returns';
  await writeFile(file('broken.json'), JSON.stringify(broken));
});
after(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('diff of two card files', () => {
  test('a compatible change exits 0 and says why', async () => {
    const r = await runCli(['diff', file('v1.json'), file('v2-added.json')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^compatible {2}"Warranty Agent"$/m);
    assert.match(r.stdout, /^ {4}- skill "exchanges" added$/m);
    assert.match(r.stdout, /^ {4}- version changed from "2\.1\.0" to "2\.2\.0"$/m);
  });

  test('a breaking change exits 3, text and --json', async () => {
    const r = await runCli(['diff', file('v1.json'), file('v3-dropped.json')]);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stdout, /^breaking {4}"Warranty Agent"$/m);
    assert.match(r.stdout, /^ {4}- skill "labels" removed$/m);
    assert.match(r.stdout, /^ {4}- input mode "image\/png" removed from skill "refunds"$/m);

    const j = await runCli(['diff', file('v1.json'), file('v3-dropped.json'), '--json']);
    assert.equal(j.code, 3, j.stderr);
    assert.deepEqual(JSON.parse(j.stdout), {
      from: { file: file('v1.json') },
      to: { file: file('v3-dropped.json') },
      impact: 'breaking',
      reasons: ['skill "labels" removed', 'input mode "image/png" removed from skill "refunds"'],
    });
  });

  test('the same card twice: compatible, no change', async () => {
    const r = await runCli(['diff', file('v1.json'), file('v1.json')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /\(no change\)/);
  });

  test('a file that is not a card exits 1 naming the file and the JSON path; usage errors exit 2', async () => {
    const r = await runCli(['diff', file('v1.json'), file('broken.json')]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`${file('broken.json').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is not a usable agent card: skills\\[0\\]\\.tags: `));
    const j = await runCli(['diff', file('v1.json'), file('broken.json'), '--json']);
    assert.equal(j.code, 1);
    const body = JSON.parse(j.stdout) as { error: { code: string; problems: Array<{ path: string }> }; exitCode: number };
    assert.equal(body.exitCode, 1);
    assert.equal(body.error.code, 'ERR_CARD_INVALID');
    assert.ok(body.error.problems.some((p) => p.path === 'skills[0].tags'), JSON.stringify(body));

    const missing = await runCli(['diff', file('v1.json'), file('nope.json')]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read .*nope\.json: no such file/);
    const mixed = await runCli(['diff', file('v1.json'), 'abcdef0123456789']);
    assert.equal(mixed.code, 2);
    assert.match(mixed.stderr, /two agent card files or two snapshot digests, not one of each/);
  });

  test('--help says the exit codes', async () => {
    const r = await runCli(['diff', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /Exit codes: 0 every change is compatible \(or nothing changed\), 3 something is breaking, 1 an error/);
  });
});

describe('diff of two snapshots of a running service', () => {
  let stand: ChangingCardService;
  const STATUS = { id: 'warranty-status', name: 'Warranty status', description: 'Looks up the warranty status of a serial number.', tags: ['warranty'], examples: ['Is serial 123 still under warranty?'] };
  const CLAIMS = { id: 'claims', name: 'Claims', description: 'Opens a warranty claim.', tags: ['warranty'] };
  before(async () => {
    stand = await startChangingCardService();
  });
  after(async () => {
    await stand?.close();
  });

  test('compatible exits 0, breaking exits 3; a 12-digit prefix names a snapshot; --json is the service diff', async () => {
    const v1 = stand.first.digest;
    const v2 = (await stand.publish({ skills: [STATUS, CLAIMS] })).digest;
    const v3 = (await stand.publish({ skills: [CLAIMS] })).digest;
    const url = stand.service.url;

    const ok = await runCli(['diff', v1.slice(0, 12), v2, '--url', url]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /^compatible {2}warranty_agent \(changed\)\n {4}- skill "claims" added$/m);
    assert.match(ok.stdout, /nothing breaking/);

    const broke = await runCli(['diff', v2.slice(0, 12), v3.slice(0, 16), '--url', url]);
    assert.equal(broke.code, 3, broke.stderr);
    assert.match(broke.stdout, /^breaking {4}warranty_agent \(changed\)\n {4}- skill "warranty-status" removed$/m);
    assert.match(broke.stdout, /breaking: warranty_agent$/m);

    const j = await runCli(['diff', v2, v3, '--url', url, '--json']);
    assert.equal(j.code, 3, j.stderr);
    const served = (await (await fetch(`${url}/api/diff?from=${v2}&to=${v3}`)).json()) as unknown;
    assert.deepEqual(JSON.parse(j.stdout), served);
  });

  test('an unknown digest exits 1 and says so', async () => {
    const r = await runCli(['diff', 'f'.repeat(12), stand.first.digest, '--url', stand.service.url]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /no snapshot in its history has a digest starting with ffffffffffff/);
  });
});
