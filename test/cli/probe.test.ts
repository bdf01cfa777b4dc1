/**
 * `a2a-discovery probe`, run as a real child process, as a user runs it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FaultServer } from '../helpers/fault-server.js';
import { startFaultServer } from '../helpers/fault-server.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { exportJWK, generateKeyPair } from 'jose';
import { signCard } from '../../packages/core/src/card/index.js';
import { cardFor } from '../helpers/cards.js';
import type { CliRun } from '../helpers/cli.js';
import { runCli } from '../helpers/cli.js';
import { probeUrl } from '../../packages/service/src/cli/probe-url.js';
import { renderProbe } from '../../packages/core/src/probe/index.js';
import { startScriptedServer } from '../cache/scripted-server.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';

const cli = (...args: string[]): Promise<CliRun> => runCli(args);

async function json(...args: string[]): Promise<{ code: number; report: Record<string, unknown> }> {
  const r = await cli(...args, '--json');
  return { code: r.code, report: JSON.parse(r.stdout) as Record<string, unknown> };
}

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'probe-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('probe <file>', () => {
  test('an accepted card exits 0 and lists skills with their effective modes', async () => {
    const { code, report } = await json('probe', 'examples/cards/billing-agent.json', '--allow', 'https://billing.example.com');
    assert.equal(code, 0);
    assert.equal(report.accepted, true);
    // Accepted, but its bearer scheme cannot be met without --config: not selected, as the text says.
    assert.equal(report.stage, 'security');
    assert.deepEqual(report.selection, { selected: false, reason: 'unauthorized: needs a bearer token for https://billing.example.com' });
    assert.equal(report.protocolVersion, '0.3');
    assert.deepEqual(report.problems, []);
    const skills = report.skills as Array<{ id: string; inputModes: string[]; outputModes: string[] }>;
    assert.deepEqual(skills[0], { id: 'invoice-lookup', name: 'Invoice lookup', tags: ['billing', 'invoices'], inputModes: ['text'], outputModes: ['text', 'application/json'] });
  });

  test('the text report names every stage', async () => {
    const r = await cli('probe', 'examples/cards/warranty-agent.json');
    assert.equal(r.code, 0);
    for (const stage of ['parse', 'schema', 'policy', 'signature', 'skills', 'ACCEPTED']) assert.match(r.stdout, new RegExp(stage));
    assert.match(r.stdout, /hosts listed, not judged/);
  });

  test('a broken card exits 1 with every schema problem and its path', async () => {
    const { code, report } = await json('probe', 'examples/cards/broken-agent.json');
    assert.equal(code, 1);
    assert.equal(report.accepted, false);
    assert.equal(report.stage, 'schema');
    const paths = (report.problems as Array<{ path: string }>).map((p) => p.path);
    assert.deepEqual(paths, ['capabilities', 'skills[0].tags', 'skills[1].id']);
    // "plain text" and an empty tag list cost a client nothing: notes, not refusals.
    assert.deepEqual((report.warnings as Array<{ path: string }>).map((w) => w.path), ['defaultInputModes[0]', 'defaultInputModes', 'skills[1].tags']);
  });

  test('an interface host outside --allow is a policy refusal', async () => {
    const { code, report } = await json('probe', 'examples/cards/billing-agent.json', '--allow', 'https://other.example.com');
    assert.equal(code, 1);
    assert.equal(report.stage, 'policy');
  });

  test('input that is too large, too deep or not JSON is a refusal (exit 1), never a crash', async () => {
    const cases: Array<[string, string]> = [
      ['big.json', JSON.stringify({ name: 'x'.repeat(80_000) })],
      ['deep.json', `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`],
      ['text.json', 'this is not json'],
    ];
    for (const [name, body] of cases) {
      await writeFile(join(dir, name), body);
      const { code, report } = await json('probe', join(dir, name));
      assert.equal(code, 1, name);
      assert.equal(report.stage, 'parse', name);
      assert.ok((report.problems as unknown[]).length > 0);
    }
  });

  test('usage errors exit 2: no target, an unknown flag, a missing file, a bad --allow entry', async () => {
    assert.equal((await cli('probe')).code, 2);
    assert.equal((await cli('probe', 'examples/cards/billing-agent.json', '--frobnicate')).code, 2);
    const missing = await cli('probe', join(dir, 'nope.json'));
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /cannot read .*nope\.json: no such file/);
    const badAllow = await cli('probe', 'examples/cards/billing-agent.json', '--allow', 'ftp://x');
    assert.equal(badAllow.code, 2);
  });

  test('a bad --allow http entry names the flag to use, not the configuration key, in file, URL and dns: modes', async () => {
    const card = 'examples/cards/billing-agent.json';
    const loopback = await cli('probe', card, '--allow', 'http://127.0.0.1:8000');
    assert.equal(loopback.code, 2);
    assert.match(loopback.stderr, /--allow http:\/\/127\.0\.0\.1:8000: an http origin needs --allow-loopback\b.*add --allow-loopback, or allow an https origin/);
    assert.doesNotMatch(loopback.stderr, /allowLoopback/);
    const remote = await cli('probe', card, '--allow', 'http://billing.example.com');
    assert.equal(remote.code, 2);
    assert.match(remote.stderr, /--allow http:\/\/billing\.example\.com: http is accepted only for loopback hosts, and only with --allow-loopback; allow https:\/\/billing\.example\.com instead/);
    // URL mode (nothing is fetched: the flags are refused first) and dns: mode, the same words.
    const url = await json('probe', 'https://agents.example.com/', '--allow', 'http://localhost:8000');
    assert.equal(url.code, 2);
    const error = url.report.error as { code: string; message: string };
    assert.equal(error.code, 'ERR_USAGE');
    assert.match(error.message, /^--allow http:\/\/localhost:8000: an http origin needs --allow-loopback/);
    const dns = await cli('probe', 'dns:example.com', '--resolver', '127.0.0.1:53', '--allow', 'http://[::1]:8000');
    assert.equal(dns.code, 2);
    assert.match(dns.stderr, /--allow http:\/\/\[::1\]:8000: an http origin needs --allow-loopback/);
    // With the flag the same entry is accepted.
    assert.notEqual((await cli('probe', card, '--allow', 'http://127.0.0.1:8000', '--allow-loopback')).code, 2);
  });

  test('an interface the card repeats is listed once, as the note says it is kept', async () => {
    // A 0.3 card whose additionalInterfaces repeat its main url (ADK JS toA2a cards always do).
    const card = {
      name: 'Billing',
      description: 'Bills',
      version: '1.0.0',
      protocolVersion: '0.3.0',
      url: 'https://billing.example.com/a2a',
      preferredTransport: 'JSONRPC',
      additionalInterfaces: [{ url: 'https://billing.example.com/a2a', transport: 'JSONRPC' }],
      capabilities: {},
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [{ id: 'pay', name: 'Pay', description: 'Pays', tags: ['billing'] }],
    };
    const file = join(dir, 'repeated-interface.json');
    await writeFile(file, JSON.stringify(card));
    for (const allow of [[], ['--allow', 'https://billing.example.com']]) {
      const { code, stdout } = await cli('probe', file, ...allow);
      assert.equal(code, 0, stdout);
      assert.match(stdout, /repeats the JSONRPC interface https:\/\/billing\.example\.com\/a2a \(A2A 0\.3\); it is kept once/);
      assert.match(stdout, /^ok {3}policy {5}1 interface\b/m);
      const listed = stdout.split('\n').filter((l) => /^ {7}interface {5}JSONRPC https:\/\/billing\.example\.com\/a2a {2}\(/.test(l));
      assert.equal(listed.length, 1, stdout);
    }
  });

  test('--help and --version exit 0', async () => {
    const help = await cli('probe', '--help');
    assert.equal(help.code, 0);
    assert.match(help.stdout, /Exit codes: 0 accepted, 1 refused/);
    assert.equal((await cli('--version')).code, 0);
  });
});

describe('probe <file>: leniencies and signatures, each shown at its stage', () => {
  /** The a2a-js README card: a gRPC target written host:port, and "task-status" as a mode. */
  const readme = {
    name: 'Hello Agent',
    description: 'A simple agent that says hello.',
    protocolVersion: '0.3.0',
    version: '0.1.0',
    url: 'https://hello.example.com/a2a/jsonrpc',
    skills: [{ id: 'chat', name: 'Chat', description: 'Say hello', tags: ['chat'] }],
    capabilities: { pushNotifications: false },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text', 'task-status'],
    additionalInterfaces: [
      { url: 'https://hello.example.com/a2a/jsonrpc', transport: 'JSONRPC' },
      { url: 'localhost:4001', transport: 'GRPC' },
    ],
  };

  test('an interface the client never calls is listed as not called, and the card is accepted', async () => {
    const file = join(dir, 'readme-card.json');
    await writeFile(file, JSON.stringify(readme));
    const { code, report } = await json('probe', file, '--allow', 'https://hello.example.com');
    assert.equal(code, 0, JSON.stringify(report.problems));
    const grpc = (report.urls as Array<Record<string, unknown>>).find((u) => u.url === 'localhost:4001');
    assert.deepEqual(grpc, { path: 'additionalInterfaces[1].url', url: 'localhost:4001', role: 'interface', called: false, binding: 'GRPC', reason: 'gRPC interfaces are never called by this client' });
    assert.deepEqual((report.warnings as Array<{ path: string }>).map((w) => w.path).sort(), ['additionalInterfaces[0]', 'additionalInterfaces[1].url', 'defaultOutputModes[1]']);

    const text = await cli('probe', file, '--allow', 'https://hello.example.com');
    assert.equal(text.code, 0);
    assert.match(text.stdout, /interface +GRPC localhost:4001 +\(not called: gRPC interfaces are never called by this client\)/);
    assert.match(text.stdout, /note additionalInterfaces\[1\]\.url: localhost:4001 \(GRPC\) is not called/);
    assert.match(text.stdout, /note defaultOutputModes\[1\]: "task-status" is neither a media type .* this mode is ignored/);
    assert.match(text.stdout, /ACCEPTED/);
  });

  test('an agent with no skills is accepted, with a note', async () => {
    const file = join(dir, 'no-skills.json');
    await writeFile(file, JSON.stringify({ ...readme, skills: [], additionalInterfaces: undefined }));
    const r = await cli('probe', file);
    assert.equal(r.code, 0, r.stdout);
    assert.match(r.stdout, /note skills: is empty: the agent offers no skill/);
  });

  test('a card signed by a key not in the trust store: unverified under if-present, refused under required', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const stranger = await generateKeyPair('ES256');
    const keyFile = join(dir, 'trusted.jwk.json');
    await writeFile(keyFile, JSON.stringify({ ...(await exportJWK(publicKey)), kid: 'ours' }));
    const card = { ...readme, additionalInterfaces: undefined, defaultOutputModes: ['text'] };
    const file = join(dir, 'stranger-signed.json');
    await writeFile(file, JSON.stringify(await signCard(card, stranger.privateKey, { alg: 'ES256', kid: 'theirs' })));

    const lenient = await json('probe', file, '--trust-key', keyFile);
    assert.equal(lenient.code, 0);
    assert.deepEqual(lenient.report.signature, { status: 'unverified', ok: true });
    assert.deepEqual(lenient.report.warnings, [{ path: 'signatures[0]', message: 'is signed by key "theirs", which is not a trusted key' }]);
    const text = await cli('probe', file, '--trust-key', keyFile);
    assert.match(text.stdout, /ok {3}signature +unverified \(signed by a key not in the trust store: accepted, not verified\)\n +note signatures\[0\]: is signed by key "theirs"/);

    const strict = await json('probe', file, '--trust-key', keyFile, '--signature-mode', 'required');
    assert.equal(strict.code, 1);
    assert.equal(strict.report.stage, 'signature');

    const tampered = join(dir, 'tampered.json');
    await writeFile(tampered, JSON.stringify({ ...(await signCard(card, privateKey, { alg: 'ES256', kid: 'ours' })), url: 'https://elsewhere.example.com/a2a' }));
    const refused = await json('probe', tampered, '--trust-key', keyFile);
    assert.equal(refused.code, 1, 'a signature by a trusted key that fails refuses the card under if-present');
    assert.equal(refused.report.stage, 'signature');
  });
});

describe('probe <url>', () => {
  let fs: FaultServer;
  let adk: RunningPeer;
  before(async () => {
    fs = await startFaultServer();
    adk = await startAdkPeer({ name: 'returns', description: 'Returns.' });
  });
  after(async () => {
    await fs.close();
    await adk.close();
  });

  test('a well-behaved endpoint: caching headers, a stable ETag and a 304 are reported', async () => {
    const ep = fs.endpoint('good', { card: cardFor(fs, 'good'), cacheControl: 'public, max-age=300' });
    const { code, report } = await json('probe', ep.baseUrl, '--allow-loopback');
    assert.equal(code, 0, JSON.stringify(report.problems));
    const http = report.http as Record<string, unknown>;
    assert.equal(http.status, 200);
    assert.equal(http.maxAgeSeconds, 300);
    assert.equal(http.etag, ep.etag);
    assert.equal(http.notModifiedSupported, true);
    assert.equal(http.etagStable, true);
    assert.equal(ep.hits, 3, 'one fetch, one repeat, one conditional request');
  });

  test('an ETag that changes every time is called out', async () => {
    const ep = fs.endpoint('churn', { card: cardFor(fs, 'churn'), mode: 'etag-churn' });
    const { report } = await json('probe', ep.cardUrl, '--allow-loopback');
    const http = report.http as { etagStable: boolean; notes: string[] };
    assert.equal(http.etagStable, false);
    assert.ok(http.notes.some((n) => /derive the ETag from the content/.test(n)));
  });

  test('an ADK toA2a endpoint is accepted, and its missing max-age is reported', async () => {
    const { code, report } = await json('probe', adk.baseUrl, '--allow-loopback');
    assert.equal(code, 0, JSON.stringify(report.problems));
    const http = report.http as { maxAgeSeconds?: number; notes: string[]; notModifiedSupported: boolean };
    assert.equal(http.maxAgeSeconds, undefined);
    assert.ok(http.notes.some((n) => /no Cache-Control max-age/.test(n)));
    assert.equal(http.notModifiedSupported, true);
  });

  test('a 404 is refused at the fetch stage', async () => {
    const ep = fs.endpoint('gone', { mode: 'status', status: 404 });
    const { code, report } = await json('probe', ep.baseUrl, '--allow-loopback');
    assert.equal(code, 1);
    assert.equal(report.stage, 'fetch');
    assert.equal((report.http as { status: number }).status, 404);
  });

  test('loopback is refused without the development exemption, before any request', async () => {
    const ep = fs.endpoint('private', { card: cardFor(fs, 'private') });
    const { code, report } = await json('probe', ep.baseUrl);
    assert.equal(code, 1);
    assert.ok(['source', 'policy', 'address'].includes(report.stage as string), String(report.stage));
    assert.equal(ep.hits, 0);
  });

  test('a redirect is refused and names its Location', async () => {
    const ep = fs.endpoint('moved', { mode: 'redirect', location: 'http://169.254.169.254/latest/meta-data' });
    const { code, report } = await json('probe', ep.baseUrl, '--allow-loopback');
    assert.equal(code, 1);
    assert.match(JSON.stringify(report.problems), /169\.254\.169\.254/);
  });
});

describe('probe <url> in process (the card URL rule shared with discovery)', () => {
  let srv: Awaited<ReturnType<typeof startScriptedServer>>;
  before(async () => {
    srv = await startScriptedServer();
  });
  after(async () => {
    await srv.close();
  });
  const options = { allow: [], allowLoopback: true, signatureMode: 'if-present' as const, trustKeys: [] };
  const serveAt = (path: string) =>
    srv.script((_req, p) => (p === path ? { status: 200, headers: { etag: '"c"', 'cache-control': 'max-age=60' }, body: cardFor(srv, 'p') } : { status: 404 }));

  test('a full card URL is fetched exactly there, not with the well-known path appended', async () => {
    serveAt('/p/.well-known/finance/agent-card.json');
    srv.requests.length = 0;
    const report = await probeUrl(`${srv.origin}/p/.well-known/finance/agent-card.json`, options);
    assert.equal(report.accepted, true, JSON.stringify(report.problems));
    assert.equal(report.source, `${srv.origin}/p/.well-known/finance/agent-card.json`);
    assert.ok(srv.requests.every((r) => r.path === '/p/.well-known/finance/agent-card.json'), JSON.stringify(srv.requests.map((r) => r.path)));
  });

  test('a base URL whose agent-card.json answers 404 is read at the A2A 0.2 path, with a note', async () => {
    serveAt('/q/.well-known/agent.json');
    const report = await probeUrl(`${srv.origin}/q/`, options);
    assert.equal(report.accepted, true, JSON.stringify(report.problems));
    assert.equal(report.source, `${srv.origin}/q/.well-known/agent.json`);
    assert.ok(report.http?.notes.some((n) => /A2A 0\.2 path/.test(n)));
  });

  test('a refused redirect is reported at the fetch stage, with the message and the Location, in text and JSON', async () => {
    srv.script(() => ({ status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data/' }, body: '' }));
    const report = await probeUrl(`${srv.origin}/r/`, options);
    assert.equal(report.accepted, false);
    assert.equal(report.stage, 'fetch');
    const text = renderProbe(report);
    assert.match(text, /^FAIL fetch/m);
    assert.match(text, /refused redirect 302 .* to "http:\/\/169\.254\.169\.254\/latest\/meta-data\/"; redirects are never followed/);
    assert.match(text, /REFUSED\s+at stage fetch \(redirect refused\)$/m, 'the cause in the words of docs/vocabulary.md');
    assert.equal(report.cause, 'redirect');
    assert.doesNotMatch(text, /^ok\s+fetch/m);
  });

  test('a card endpoint answering 401 is refused at the fetch stage as unauthorized (docs/vocabulary.md)', async () => {
    srv.script(() => ({ status: 401, headers: { 'content-type': 'application/json' }, body: '{"error":"unauthorized"}' }));
    const report = await probeUrl(`${srv.origin}/u/`, options);
    assert.equal(report.accepted, false);
    assert.deepEqual([report.stage, report.cause], ['fetch', 'unauthorized']);
    assert.match(renderProbe(report), /REFUSED\s+at stage fetch \(unauthorized\)$/m);
  });
});

describe('probe <AI Catalog url|file>', () => {
  const A2A = 'application/a2a-agent-card+json';
  let server: JsonServer;
  before(async () => {
    server = await startJsonServer();
    server.routes.set('/agents/finance.json', { body: cardFor(server, 'finance') });
    server.routes.set('/.well-known/ai-catalog.json', {
      headers: { 'content-type': 'application/ai-catalog+json' },
      body: {
        specVersion: '1.0',
        entries: [
          { identifier: 'urn:air:example.com:agent:finance', type: A2A, url: '/agents/finance.json' },
          { identifier: 'urn:air:example.com:agent:ledger', type: A2A, data: cardFor(server, 'ledger') },
          { identifier: 'urn:air:example.com:mcp:weather', type: 'application/mcp-server-card+json', url: '/mcp/weather' },
        ],
      },
    });
    server.routes.set('/bad/ai-catalog.json', { headers: { 'content-type': 'application/ai-catalog+json' }, body: { specVersion: '1.0', entries: [{ identifier: 'urn:air:x.example:agent:x', type: A2A }] } });
  });
  after(async () => {
    await server.close();
  });

  test('a catalog URL: every entry, stage by stage, in text; exit 0 when every card is accepted', async () => {
    const r = await cli('probe', `${server.origin}/.well-known/ai-catalog.json`, '--allow-loopback');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /^probe AI Catalog http:\/\/127\.0\.0\.1:\d+\/\.well-known\/ai-catalog\.json\n/);
    assert.match(r.stdout, /ok {3}schema +AI Catalog 1\.0: 3 entries \(2 A2A cards, 0 nested catalogs, 1 of other types\)/);
    assert.match(r.stdout, /entry entries\[0\] urn:air:example\.com:agent:finance[\s\S]+?probe http:\/\/127\.0\.0\.1:\d+\/agents\/finance\.json\n {4}ok {3}fetch/);
    assert.match(r.stdout, /entry entries\[1\] urn:air:example\.com:agent:ledger .*inline data[\s\S]+? {4}ok {3}parse/);
    assert.match(r.stdout, /entry entries\[2\] urn:air:example\.com:mcp:weather[^\n]*\n +ignored/);
    assert.match(r.stdout, /\nACCEPTED {2}every A2A card entry the catalog proposes would be selected\n$/);
    assert.equal(server.count('/mcp/weather'), 0);
  });

  test('--json: the catalog report, documents then entries, each card with its own report', async () => {
    const { code, report } = await json('probe', `${server.origin}/.well-known/ai-catalog.json`, '--allow-loopback');
    assert.equal(code, 0);
    assert.deepEqual(Object.keys(report).sort(), ['accepted', 'counts', 'documents', 'entries', 'kind', 'notes', 'problems', 'source']);
    assert.equal(report.kind, 'ai-catalog');
    assert.deepEqual(report.counts, { entries: 3, cards: 2, accepted: 2, refused: 0, superseded: 0, ignored: 1, nested: 0, notProbed: 0 });
    const [doc] = report.documents as Array<Record<string, unknown>>;
    assert.deepEqual([doc!.usable, doc!.stage, doc!.specVersion, doc!.status], [true, 'selected', '1.0', 200]);
    const entries = report.entries as Array<{ identifier: string; verdict: string; report?: { stage: string; accepted: boolean }; selection?: unknown; trust?: unknown }>;
    assert.deepEqual(entries.map((e) => [e.identifier, e.verdict, e.report?.stage ?? null]), [
      ['urn:air:example.com:agent:finance', 'accepted', 'selected'],
      ['urn:air:example.com:agent:ledger', 'accepted', 'selected'],
      ['urn:air:example.com:mcp:weather', 'ignored', null],
    ]);
    assert.deepEqual(entries[0]!.selection, { decision: 'only', reason: 'the only version listed' });
    assert.deepEqual(entries[0]!.trust, { verdict: 'none' });
  });

  test('a malformed catalog exits 1 with each problem at its JSON path', async () => {
    const { code, report } = await json('probe', `${server.origin}/bad/ai-catalog.json`, '--allow-loopback');
    assert.equal(code, 1);
    assert.equal(report.accepted, false);
    const [doc] = report.documents as Array<{ stage: string; problems: Array<{ path: string; message: string }> }>;
    assert.equal(doc!.stage, 'schema');
    assert.deepEqual(doc!.problems.map((p) => p.path), ['entries[0]']);
    const text = await cli('probe', `${server.origin}/bad/ai-catalog.json`, '--allow-loopback');
    assert.equal(text.code, 1);
    assert.match(text.stdout, /FAIL schema\n +entries\[0\]: has neither "url" nor "data"/);
  });

  test('a catalog file: url entries probed under --allow only, data entries checked as cards; nothing else fetched', async () => {
    const file = join(dir, 'ai-catalog.json');
    await writeFile(
      file,
      JSON.stringify({
        specVersion: '1.0',
        entries: [
          { identifier: 'urn:air:example.com:agent:finance', type: A2A, url: `${server.origin}/agents/finance.json` },
          { identifier: 'urn:air:example.com:agent:broken', type: A2A, data: { name: 'Broken' } },
        ],
      }),
    );
    const allowed = await json('probe', file, '--allow', server.origin, '--allow-loopback');
    assert.equal(allowed.code, 1, 'the broken inline card refuses the catalog');
    const entries = allowed.report.entries as Array<{ verdict: string; report?: { stage: string; source: string; problems: Array<{ path: string }> } }>;
    assert.deepEqual(entries.map((e) => [e.verdict, e.report?.stage]), [['accepted', 'selected'], ['refused', 'schema']]);
    assert.equal(entries[1]!.report?.source, `${file}#card=urn:air:example.com:agent:broken`);
    assert.ok(entries[1]!.report?.problems.some((p) => p.path === 'skills'));

    const before = server.count('/agents/finance.json');
    const closed = await json('probe', file, '--allow-loopback');
    const first = (closed.report.entries as typeof entries)[0]!;
    assert.equal(first.report?.stage, 'source', 'without --allow no card host is admitted');
    assert.equal(server.count('/agents/finance.json'), before, 'and it is never contacted');
  });
});
