/**
 * Probing AI Catalogs against loopback servers: a URL recognised as a catalog by what it serves,
 * every entry reported (url and inline cards, other types ignored, nested catalogs followed,
 * versions chosen, Trust Manifests judged, pins checked against the card's bytes) with each
 * card's own stages; refusals at their stage and JSON path; hosts outside the allowlist never
 * contacted; the probe bound; a catalog in hand probed without serving anything.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { exportJWK, generateKeyPair } from 'jose';
import { canonicalJson, signDetached, type TrustedKey } from '../../packages/core/src/card/index.js';
import { HostPolicy, createCardFetcher, type CardFetcher } from '../../packages/core/src/fetch/index.js';
import type { AiCatalogReport, ProbeAiCatalogOptions } from '../../packages/core/src/probe/index.js';
import { probeAiCatalogDocument, probeTarget, renderAiCatalogProbe } from '../../packages/core/src/probe/index.js';
import { cardFor } from '../helpers/cards.js';
import { startJsonServer, type JsonServer } from '../helpers/json-server.js';

const A2A = 'application/a2a-agent-card+json';
const NESTED = 'application/ai-catalog+json';
const MCP = 'application/mcp-server-card+json';
const CATALOG_TYPE = { 'content-type': 'application/ai-catalog+json' };
const sha256 = (text: string | Buffer): string => createHash('sha256').update(text).digest('hex');

describe('probeTarget: an AI Catalog URL', () => {
  let server: JsonServer;
  let outside: JsonServer;
  let policy: HostPolicy;
  let fetcher: CardFetcher;
  const catalog = (entries: unknown[], extra: Record<string, unknown> = {}) => ({ specVersion: '1.0', entries, ...extra });
  const serve = (path: string, body: unknown, headers: Record<string, string> = {}) => server.routes.set(path, { body: body as object, headers });
  const serveCard = (path: string, id: string) => serve(path, cardFor(server, id));
  const options = (extra: Partial<ProbeAiCatalogOptions> = {}): ProbeAiCatalogOptions => ({ policy, fetcher, interfacePolicy: policy, check: { allowLoopback: true }, ...extra });
  const probe = async (path: string, extra: Partial<ProbeAiCatalogOptions> = {}): Promise<AiCatalogReport> => {
    const r = await probeTarget(`${server.origin}${path}`, options(extra));
    assert.equal(r.kind, 'ai-catalog');
    return (r as { catalog: AiCatalogReport }).catalog;
  };
  const entry = (r: AiCatalogReport, identifier: string, version?: string) => {
    const found = r.entries.find((e) => e.identifier === identifier && (version === undefined || e.version === version));
    assert.ok(found, `${identifier} ${version ?? ''} in ${r.entries.map((e) => e.identifier).join(', ')}`);
    return found;
  };

  before(async () => {
    server = await startJsonServer();
    outside = await startJsonServer();
    policy = HostPolicy.from({ allow: [server.origin], allowLoopback: true });
    fetcher = createCardFetcher({ policy });
  });
  beforeEach(() => {
    server.routes.clear();
    server.requests.length = 0;
    outside.requests.length = 0;
  });
  after(async () => {
    await fetcher.close();
    await server.close();
    await outside.close();
  });

  test('every entry: url and inline cards probed stage by stage, an MCP entry ignored, a nested catalog followed, the newest version chosen', async () => {
    serve('/.well-known/ai-catalog.json', catalog([
      { identifier: 'urn:air:example.com:agent:finance', type: A2A, url: '/agents/finance.json', displayName: 'Finance' },
      { identifier: 'urn:air:example.com:agent:ledger', type: A2A, data: cardFor(server, 'ledger') },
      { identifier: 'urn:air:example.com:mcp:weather', type: MCP, url: `${server.origin}/mcp/weather` },
      { identifier: 'urn:air:example.com:catalog:team', type: NESTED, url: '/catalogs/team.json' },
      { identifier: 'urn:air:example.com:agent:notes', type: A2A, version: '2.1.0', url: '/agents/notes-2.1.json' },
      { identifier: 'urn:air:example.com:agent:notes', type: A2A, version: '2.10.0', url: '/agents/notes-2.10.json' },
      { identifier: 'urn:air:example.com:agent:notes', type: A2A, version: '2.1.0', url: '/agents/notes-dup.json' },
    ]), CATALOG_TYPE);
    serve('/catalogs/team.json', catalog([{ identifier: 'urn:air:example.com:agent:research', type: A2A, url: '/agents/research' }]));
    serveCard('/agents/finance.json', 'finance');
    serveCard('/agents/notes-2.10.json', 'notes');
    serveCard('/agents/research', 'research');
    const r = await probe('/.well-known/ai-catalog.json');

    assert.deepEqual(r.documents.map((d) => [d.url, d.via, d.depth, d.usable, d.stage]), [
      [`${server.origin}/.well-known/ai-catalog.json`, 'root', 1, true, 'selected'],
      [`${server.origin}/catalogs/team.json`, `${server.origin}/.well-known/ai-catalog.json entries[3]`, 2, true, 'selected'],
    ]);
    const root = r.documents[0]!;
    assert.deepEqual({ status: root.status, contentType: root.contentType, specVersion: root.specVersion, signature: root.signature?.status }, { status: 200, contentType: 'application/ai-catalog+json', specVersion: '1.0', signature: 'unsigned' });
    assert.deepEqual({ entries: root.entries, cards: root.cards, nested: root.nested, ignored: root.ignored }, { entries: 7, cards: 5, nested: 1, ignored: 1 });
    assert.equal(server.count('/.well-known/ai-catalog.json'), 1, 'the document that was recognised is not fetched again');

    // In the order discovery reads them: the nested catalog's entries at its entry.
    assert.deepEqual(r.entries.map((e) => [e.path, e.identifier.split(':').at(-1), e.verdict]), [
      ['entries[0]', 'finance', 'accepted'],
      ['entries[1]', 'ledger', 'accepted'],
      ['entries[2]', 'weather', 'ignored'],
      ['entries[3]', 'team', 'nested'],
      ['entries[0]', 'research', 'accepted'],
      ['entries[4]', 'notes', 'superseded'],
      ['entries[5]', 'notes', 'accepted'],
      ['entries[6]', 'notes', 'refused'],
    ]);
    const finance = entry(r, 'urn:air:example.com:agent:finance');
    assert.equal(finance.endpoint, `${server.origin}/agents/finance.json`);
    assert.equal(finance.report?.stage, 'selected');
    assert.equal(finance.report?.http?.status, 200);
    assert.deepEqual(finance.selection, { decision: 'only', reason: 'the only version listed' });
    assert.deepEqual(finance.trust, { verdict: 'none' });

    const ledger = entry(r, 'urn:air:example.com:agent:ledger');
    assert.equal(ledger.inline, true);
    assert.equal(ledger.endpoint, `${server.origin}/.well-known/ai-catalog.json#card=urn:air:example.com:agent:ledger`);
    assert.equal(ledger.report?.rawSha256, sha256(canonicalJson(cardFor(server, 'ledger'))), 'an inline card is checked as its RFC 8785 bytes');
    assert.equal(ledger.report?.http, undefined, 'an inline card is never fetched');

    assert.deepEqual(entry(r, 'urn:air:example.com:catalog:team').nested, { followed: true, url: `${server.origin}/catalogs/team.json` });
    const research = entry(r, 'urn:air:example.com:agent:research');
    assert.equal(research.catalog, `${server.origin}/catalogs/team.json`);
    assert.equal(research.depth, 2);
    assert.equal(research.report?.source, `${server.origin}/agents/research`, 'a card URL not ending in .json is fetched exactly there');
    assert.equal(server.count('/mcp/weather'), 0, 'an ignored entry is never fetched');

    const chosen = entry(r, 'urn:air:example.com:agent:notes', '2.10.0');
    assert.equal(chosen.selection?.decision, 'chosen');
    assert.match(chosen.selection!.reason, /the newest semantic version, over 2\.1\.0/);
    const older = r.entries.find((e) => e.path === 'entries[4]')!;
    assert.deepEqual(older.selection, { decision: 'superseded', reason: 'version 2.1.0 is not the newest; 2.10.0 is proposed instead', instead: `${server.origin}/.well-known/ai-catalog.json entries[5]` });
    assert.equal(older.report, undefined);
    assert.equal(server.count('/agents/notes-2.1.json'), 0, 'a superseded version is not fetched');
    const dup = r.entries.find((e) => e.path === 'entries[6]')!;
    assert.equal(dup.selection?.decision, 'duplicate');
    assert.match(dup.problems[0]!.message, /repeats identifier urn:air:example\.com:agent:notes version 2\.1\.0/);
    assert.equal(dup.problems[0]!.path, `${server.origin}/.well-known/ai-catalog.json entries[6]`);

    assert.equal(r.accepted, false, 'a repeated identifier and version is a catalog problem');
    assert.deepEqual(r.counts, { entries: 8, cards: 6, accepted: 4, refused: 1, superseded: 1, ignored: 1, nested: 1, notProbed: 0 });

    const text = renderAiCatalogProbe(r);
    assert.match(text, /^probe AI Catalog /);
    assert.match(text, /ok {3}schema +AI Catalog 1\.0: 7 entries \(5 A2A cards, 1 nested catalog, 1 of other types\)/);
    assert.match(text, /entry entries\[2\] urn:air:example\.com:mcp:weather .*\n +ignored +not an A2A agent card/);
    assert.match(text, /version +superseded: version 2\.1\.0 is not the newest/);
    assert.match(text, /nested +followed: catalog .*\/catalogs\/team\.json/);
    assert.match(text, /catalog .*\/catalogs\/team\.json {2}\(depth 2, listed at .* entries\[3\]\)/);
    assert.match(text, / {4}ACCEPTED {2}discovery would admit and cache this card \(the needs that select agents are not checked here\)/);
    assert.match(text, /\nREFUSED {3}1 entry refused$/);
  });

  test('an invalid inline card is refused at schema with its JSON path; the catalog is refused with it', async () => {
    serve('/ai-catalog.json', catalog([{ identifier: 'urn:air:example.com:agent:broken', type: A2A, data: { ...cardFor(server, 'broken'), skills: [{ id: 'x' }] } }]));
    const r = await probe('/ai-catalog.json');
    const broken = r.entries[0]!;
    assert.equal(broken.verdict, 'refused');
    assert.equal(broken.report?.stage, 'schema');
    assert.ok(broken.report?.problems.some((p) => p.path.startsWith('skills[0].')), JSON.stringify(broken.report?.problems));
    assert.equal(r.accepted, false);
    assert.match(renderAiCatalogProbe(r), /FAIL schema[\s\S]*skills\[0\]\.name/);
  });

  test('an inline card whose bearer scheme cannot be met: accepted, stage security, and the catalog\'s last line says it would not be selected', async () => {
    const secured = { ...cardFor(server, 'secured'), securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, security: [{ bearer: [] }] };
    serve('/ai-catalog.json', catalog([{ identifier: 'urn:air:example.com:agent:secured', type: A2A, data: secured }]));
    const r = await probe('/ai-catalog.json');
    const report = r.entries[0]!.report!;
    assert.deepEqual([report.accepted, report.stage, report.selection.selected], [true, 'security', false]);
    assert.match(report.selection.reason ?? '', /^unauthorized: needs a bearer token for /);
    assert.equal(r.accepted, true);
    assert.match(renderAiCatalogProbe(r), /\nACCEPTED {2}every A2A card entry the catalog proposes would be admitted; 1 would not be selected \(see its security\)$/);
  });

  test('a card on a host outside the allowlist is refused at source and never contacted', async () => {
    outside.routes.set('/agent.json', { body: cardFor(outside, 'x') });
    serve('/ai-catalog.json', catalog([{ identifier: 'urn:air:elsewhere:agent:x', type: A2A, url: `${outside.origin}/agent.json` }]));
    const r = await probe('/ai-catalog.json');
    assert.equal(r.entries[0]!.report?.stage, 'source');
    assert.match(r.entries[0]!.report!.problems[0]!.message, /allowlist/);
    assert.equal(outside.requests.length, 0);
    assert.equal(r.accepted, false);
  });

  test('a malformed catalog: each problem with its JSON path, nothing probed', async () => {
    serve('/ai-catalog.json', { specVersion: '2.0', entries: [{ identifier: 'urn:air:x.example:agent:x', type: A2A, url: '/a.json', data: {} }] }, CATALOG_TYPE);
    const r = await probe('/ai-catalog.json');
    assert.equal(r.accepted, false);
    assert.deepEqual(r.entries, []);
    const root = r.documents[0]!;
    assert.equal(root.usable, false);
    assert.equal(root.stage, 'schema');
    assert.deepEqual(root.problems.map((p) => p.path), ['specVersion', 'entries[0]']);
    assert.equal(server.count('/a.json'), 0);
    const text = renderAiCatalogProbe(r);
    assert.match(text, /FAIL schema/);
    assert.match(text, /specVersion: "2\.0" is a major version this consumer does not read/);
    assert.match(text, /REFUSED {3}1 catalog document not usable/);

    // Served as a catalog but not JSON: refused at parse.
    serve('/broken.json', '{"specVersion": "1.0", "entries": [', CATALOG_TYPE);
    const broken = await probe('/broken.json');
    assert.equal(broken.documents[0]!.stage, 'parse');
  });

  test('a nested catalog that cycles back is not followed again, and says why', async () => {
    serve('/a.json', catalog([{ identifier: 'urn:air:example.com:catalog:b', type: NESTED, url: '/b.json' }]));
    serve('/b.json', catalog([{ identifier: 'urn:air:example.com:catalog:a', type: NESTED, url: '/a.json' }]));
    const r = await probe('/a.json');
    const back = r.entries.find((e) => e.catalog.endsWith('/b.json'))!;
    assert.equal(back.nested?.followed, false);
    assert.match(back.nested?.reason ?? '', /a catalog cycle/);
    assert.equal(server.count('/a.json'), 1);
    assert.equal(r.accepted, false);
  });

  test('a catalog signature is judged against the trust store: verified, or refused at signature when tampered', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const keys: TrustedKey[] = [{ kid: 'catalog-1', jwk: await exportJWK(publicKey) }];
    const doc = catalog([{ identifier: 'urn:air:example.com:agent:signed', type: A2A, url: '/signed.json' }]);
    const signed = await signDetached(doc, privateKey, { alg: 'ES256', kid: 'catalog-1' });
    serveCard('/signed.json', 'signed');
    serve('/signed-catalog.json', signed);
    const ok = await probe('/signed-catalog.json', { check: { allowLoopback: true, signatures: { mode: 'if-present', keys } } });
    assert.deepEqual(ok.documents[0]!.signature, { status: 'verified', ok: true, kid: 'catalog-1', form: ok.documents[0]!.signature?.form });
    assert.equal(ok.accepted, true, renderAiCatalogProbe(ok));

    serve('/unsigned.json', doc);
    const unsigned = await probe('/unsigned.json', { check: { allowLoopback: true, signatures: { mode: 'required', keys } } });
    assert.equal(unsigned.documents[0]!.stage, 'signature');
    assert.deepEqual(unsigned.documents[0]!.problems, [{ path: 'signature', message: 'the catalog is not signed, and signatures are required for it' }]);

    serve('/tampered.json', { ...signed, entries: [...signed.entries, { identifier: 'urn:air:evil:agent:x', type: A2A, url: '/x.json' }] });
    const bad = await probe('/tampered.json', { check: { allowLoopback: true, signatures: { mode: 'if-present', keys } } });
    assert.equal(bad.documents[0]!.stage, 'signature');
    assert.match(bad.documents[0]!.problems[0]!.message, /does not match this document/);
    assert.deepEqual(bad.entries, []);
    assert.equal(server.count('/x.json'), 0);
  });

  test('a signed Trust Manifest pins the card: other bytes refuse it at signature; matching bytes pass', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const keys: TrustedKey[] = [{ kid: 'acme-1', jwk: await exportJWK(publicKey) }];
    serveCard('/pay.json', 'pay');
    const served = JSON.stringify(cardFor(server, 'pay'));
    const manifest = (digest: string) =>
      signDetached({ identity: 'did:web:example.com', subject: { identifier: 'urn:air:example.com:agent:pay', type: A2A, digest: `sha256:${digest}` }, issuedAt: '2026-11-30T00:00:00Z' }, privateKey, { alg: 'ES256', kid: 'acme-1' });
    const check = { allowLoopback: true, signatures: { keys } };

    serve('/pinned.json', catalog([{ identifier: 'urn:air:example.com:agent:pay', type: A2A, url: '/pay.json', trustManifest: await manifest('0'.repeat(64)) }]));
    const wrong = (await probe('/pinned.json', { check })).entries[0]!;
    assert.deepEqual(wrong.trust, { verdict: 'pinned', sha256: '0'.repeat(64), identity: 'did:web:example.com', kid: 'acme-1', matches: false });
    assert.equal(wrong.verdict, 'refused');
    assert.equal(wrong.report?.stage, 'signature');
    assert.match(wrong.report!.problems[0]!.message, new RegExp(`SHA-256 ${sha256(served)} differs from the 0{64}`));

    serve('/pinned.json', catalog([{ identifier: 'urn:air:example.com:agent:pay', type: A2A, url: '/pay.json', trustManifest: await manifest(sha256(served)) }]));
    const right = await probe('/pinned.json', { check });
    assert.equal(right.entries[0]!.trust?.matches, true);
    assert.equal(right.entries[0]!.verdict, 'accepted');
    assert.match(renderAiCatalogProbe(right), /trust +pinned sha256 [0-9a-f]{64} by did:web:example\.com \(kid acme-1\); the card's bytes match/);

    // A manifest naming another entry refuses this one before any card stage.
    serve('/pinned.json', catalog([{ identifier: 'urn:air:example.com:agent:other', type: A2A, url: '/pay.json', trustManifest: await manifest(sha256(served)) }]));
    const other = (await probe('/pinned.json', { check })).entries[0]!;
    assert.equal(other.verdict, 'refused');
    assert.equal(other.trust?.verdict, 'refused');
    assert.equal(other.trust?.reason?.path, 'entries[0].trustManifest.subject.identifier');
    assert.equal(other.report, undefined);
  });

  test('at most maxEntries cards are probed; the rest are listed as not probed', async () => {
    serve('/many.json', catalog(Array.from({ length: 4 }, (_, i) => ({ identifier: `urn:air:example.com:agent:a${i}`, type: A2A, url: `/a${i}.json` }))));
    for (let i = 0; i < 4; i++) serveCard(`/a${i}.json`, `a${i}`);
    const r = await probe('/many.json', { maxEntries: 2 });
    assert.deepEqual(r.entries.map((e) => e.verdict), ['accepted', 'accepted', 'not-probed', 'not-probed']);
    assert.match(r.entries[2]!.skipped!, /first 2 cards/);
    assert.equal(server.count('/a3.json'), 0);
    assert.equal(r.accepted, true, 'entries not probed do not refuse the catalog');
  });

  test('maxEntriesRead and maxDocuments bound the walk: what is left out is not listed nor fetched, and the report (and its text) says TRUNCATED', async () => {
    const nested = Array.from({ length: 3 }, (_, i) => ({ identifier: `urn:air:example.com:catalog:n${i}`, type: NESTED, url: `/n${i}.json` }));
    for (let i = 0; i < 3; i++) serve(`/n${i}.json`, catalog([{ identifier: `urn:air:example.com:agent:n${i}`, type: A2A, url: `/a${i}.json` }]), CATALOG_TYPE);
    serve('/bounded.json', catalog([...nested, ...Array.from({ length: 5 }, (_, i) => ({ identifier: `urn:air:example.com:agent:b${i}`, type: MCP, url: `/m${i}` }))]), CATALOG_TYPE);
    const before = server.requests.length;
    const r = await probe('/bounded.json', { maxEntriesRead: 6, maxDocuments: 2 });
    const documents = server.requests.slice(before).filter((x) => x.path === '/bounded.json' || /^\/n\d\.json$/.test(x.path));
    assert.equal(documents.length, 2, 'the root and one nested catalog');
    assert.equal(r.entries.length, 6);
    assert.equal(r.counts.entries, 6);
    assert.ok(r.truncated?.some((t) => /entries are not listed: at most 6 entries are read/.test(t)), JSON.stringify(r.truncated));
    assert.ok(r.truncated?.some((t) => /2 catalog documents are not read: at most 2 are fetched/.test(t)), JSON.stringify(r.truncated));
    assert.match(renderAiCatalogProbe(r), /^TRUNCATED .*at most 6 entries are read/m);

    const pasted = await probeAiCatalogDocument(JSON.stringify(catalog(Array.from({ length: 5 }, (_, i) => ({ identifier: `urn:air:example.com:agent:p${i}`, type: MCP, url: `https://x.invalid/${i}` })))), options({ maxEntriesRead: 3 }));
    assert.equal(pasted.entries.length, 3);
    assert.deepEqual(pasted.truncated, ['2 entries are not listed: at most 3 entries are read in all (the catalogs list more)']);
  });

  test('a card URL is still probed as one card, with the same three requests', async () => {
    serve('/agents/solo.json', cardFor(server, 'solo'), { etag: '"s"' });
    server.routes.set('/agents/solo.json', (req) => (req.headers['if-none-match'] === '"s"' ? { status: 304, body: '', headers: { etag: '"s"' } } : { body: cardFor(server, 'solo'), headers: { etag: '"s"' } }));
    const r = await probeTarget(`${server.origin}/agents/solo.json`, options());
    assert.equal(r.kind, 'card');
    assert.equal(r.kind === 'card' && r.report.accepted, true);
    assert.equal(server.count('/agents/solo.json'), 3);
  });

  test('a catalog at a path of its own (no .json): after the well-known card paths answer 404, the URL itself is read and probed as a catalog', async () => {
    serve('/agents', catalog([{ identifier: 'urn:air:example.com:agent:solo', type: A2A, url: '/agents/solo.json' }]), CATALOG_TYPE);
    serveCard('/agents/solo.json', 'solo');
    const r = await probe('/agents');
    assert.equal(r.source, `${server.origin}/agents`);
    assert.equal(r.accepted, true);
    assert.equal(entry(r, 'urn:air:example.com:agent:solo').report?.accepted, true);
    assert.deepEqual(server.requests.slice(0, 3).map((q) => q.path), ['/agents/.well-known/agent-card.json', '/agents/.well-known/agent.json', '/agents']);
  });

  test('a base URL with neither a card nor a catalog is reported as the card 404 it is', async () => {
    serve('/team', { hello: 'not a catalog' });
    const r = await probeTarget(`${server.origin}/team`, options());
    assert.equal(r.kind, 'card');
    assert.equal(r.kind === 'card' && r.report.stage, 'fetch');
    assert.match(r.kind === 'card' ? (r.report.problems[0]?.message ?? '') : '', /HTTP 404/);
    // The site root is never read as a catalog itself; its catalog is looked for at the well-known
    // URI, then where the site announces one (issue 26: its page's Link header and <link>, robots.txt).
    server.requests.length = 0;
    const root = await probeTarget(`${server.origin}/`, options());
    assert.equal(root.kind, 'card');
    assert.deepEqual(server.requests.map((q) => q.path), ['/.well-known/agent-card.json', '/.well-known/agent.json', '/.well-known/ard.json', '/.well-known/ai-catalog.json', '/', '/robots.txt']);
  });
});

describe('probeAiCatalogDocument: a catalog in hand', () => {
  let server: JsonServer;
  let fetcher: CardFetcher;
  let policy: HostPolicy;
  before(async () => {
    server = await startJsonServer();
    policy = HostPolicy.from({ allow: [server.origin], allowLoopback: true });
    fetcher = createCardFetcher({ policy });
  });
  after(async () => {
    await fetcher.close();
    await server.close();
  });

  test('url entries are probed as card URLs, data entries checked as cards, nested inline catalogs followed, by-URL ones listed', async () => {
    server.routes.set('/agents/a.json', { body: cardFor(server, 'a') });
    const doc = {
      specVersion: '1.0',
      entries: [
        { identifier: 'urn:air:example.com:agent:a', type: A2A, url: `${server.origin}/agents/a.json` },
        { identifier: 'urn:air:example.com:agent:b', type: A2A, data: cardFor(server, 'b') },
        { identifier: 'urn:air:example.com:agent:rel', type: A2A, url: '/agents/rel.json' },
        { identifier: 'urn:air:example.com:catalog:in', type: NESTED, data: { specVersion: '1.0', entries: [{ identifier: 'urn:air:example.com:agent:c', type: A2A, data: cardFor(server, 'c') }] } },
        { identifier: 'urn:air:example.com:catalog:remote', type: NESTED, url: `${server.origin}/remote.json` },
      ],
    };
    const r = await probeAiCatalogDocument(JSON.stringify(doc), { label: 'ai-catalog.json', policy, fetcher, interfacePolicy: policy, check: { allowLoopback: true } });
    assert.deepEqual(r.entries.map((e) => [e.identifier.split(':').at(-1), e.verdict, e.report?.stage ?? null]), [
      ['a', 'accepted', 'selected'],
      ['b', 'accepted', 'selected'],
      ['rel', 'refused', null],
      ['in', 'nested', null],
      ['c', 'accepted', 'selected'],
      ['remote', 'nested', null],
    ]);
    assert.equal(r.entries[2]!.problems[0]!.path, 'ai-catalog.json entries[2].url');
    assert.deepEqual(r.documents.map((d) => [d.url, d.origin]), [['ai-catalog.json', 'file'], ['ai-catalog.json#entries[3]', 'inline']]);
    assert.equal(r.entries[5]!.nested?.followed, false);
    assert.equal(server.count('/remote.json'), 0, 'nothing is fetched for a nested catalog by URL');
    assert.ok(r.notes.some((n) => /listed, not fetched/.test(n)));
  });

  test('an inline card holding a number JSON cannot carry (1e400) is refused with its path; the probe does not throw', async () => {
    const text = `{"specVersion":"1.0","entries":[{"identifier":"urn:air:example.com:agent:big","type":"${A2A}","data":{"name":"Big","n":1e400}}]}`;
    const r = await probeAiCatalogDocument(text, { label: 'ai-catalog.json', policy, fetcher, interfacePolicy: policy, check: { allowLoopback: true } });
    assert.equal(r.entries[0]!.verdict, 'refused');
    assert.match(r.entries[0]!.problems[0]!.message, /no RFC 8785 form/);
    assert.equal(r.entries[0]!.problems[0]!.path, 'ai-catalog.json entries[0].data');
  });
});
