/**
 * Per-agent transport options in configuration and registry records: what is accepted, what is
 * refused (reserved header names, CR/LF in values, never echoed), how they travel to the
 * endpoint record and the snapshot, and that a change of them changes the snapshot digest.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConfig } from '../../packages/core/src/config/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { recordFromEntry, simpleCatalogAdapter, staticSource } from '../../packages/core/src/sources/index.js';
import { snapshotDigest } from '../../packages/core/src/snapshot/index.js';

const HEAD = `
allow: [https://support.example.com]
vocabulary: [{ tag: support, description: Support questions. }]
static:
`;

function problems(yaml: string): string[] {
  try {
    parseConfig(yaml);
  } catch (err) {
    assert.ok(isDiscoveryError(err), String(err));
    return err.problems.map((p) => `${p.path}: ${p.message}`);
  }
  return [];
}

describe('static entry transport keys', () => {
  test('streaming, headers, timeoutMs and tenant are read into the static agent and its endpoint record', () => {
    const config = parseConfig(
      `${HEAD}  - name: support_agent
    url: "https://support.example.com/"
    description: Answers support questions.
    tags: [support]
    streaming: false
    headers: { X-Team: alpha }
    timeoutMs: 5000
    tenant: acme
`,
    );
    const entry = config.static[0]!;
    assert.deepEqual({ streaming: entry.streaming, headers: entry.headers, timeoutMs: entry.timeoutMs, tenant: entry.tenant }, { streaming: false, headers: { 'X-Team': 'alpha' }, timeoutMs: 5000, tenant: 'acme' });
    const source = staticSource({ agents: config.static });
    const record = source.current().records[0]!;
    // Header names are stored lower case (HTTP names are case-insensitive).
    assert.deepEqual(record.transport, { streaming: false, headers: { 'x-team': 'alpha' }, timeoutMs: 5000, tenant: 'acme' });
    // An entry without them proposes a record without them.
    const plain = parseConfig(`${HEAD}  - { name: support_agent, url: "https://support.example.com/", description: Support., tags: [support] }\n`);
    assert.equal(staticSource({ agents: plain.static }).current().records[0]!.transport, undefined);
  });

  test('reserved header names, CR/LF in a value, a bad timeout and an empty tenant are refused at their path, the value never echoed', () => {
    const secretish = 'line1\\r\\nInjected: yes';
    const found = problems(
      `${HEAD}  - name: support_agent
    url: "https://support.example.com/"
    description: Answers support questions.
    tags: [support]
    headers: { Authorization: "Bearer abc", A2A-Version: "2.0", Host: evil, X-Ok: "${secretish}" }
    timeoutMs: 0
    tenant: ""
`,
    ).join('\n');
    assert.match(found, /^static\[0\]\.headers\.Authorization: "Authorization" cannot be set per agent/m);
    assert.match(found, /^static\[0\]\.headers\.A2A-Version: "A2A-Version" cannot be set per agent/m);
    assert.match(found, /^static\[0\]\.headers\.Host: "Host" cannot be set per agent/m);
    assert.match(found, /^static\[0\]\.headers\.X-Ok: must not contain line breaks or control characters/m);
    assert.match(found, /^static\[0\]\.timeoutMs: /m);
    assert.match(found, /^static\[0\]\.tenant: must be a non-empty string/m);
    assert.doesNotMatch(found, /Injected|Bearer abc/);
  });

  test('the library path (staticSource) applies the same rule', () => {
    assert.throws(
      () => staticSource({ agents: [{ name: 'support_agent', url: 'https://support.example.com/', description: 'Support.', tags: ['support'], headers: { cookie: 'sid=1', 'x-a': 'ok\r\nx' } }] }),
      (err: unknown) => isDiscoveryError(err) && /agents\[0\]\.headers\.cookie/.test(err.message) && /agents\[0\]\.headers\.x-a/.test(err.message) && !/sid=1/.test(err.message),
    );
  });
});

describe('registry records', () => {
  const ctx = { at: 'agents[0]', pageUrl: 'https://registry.example.com/agents', source: 'catalog', adapter: 'simple' };

  test('a record carrying transport options keeps them; a bad one is skipped with its path', () => {
    const ok = recordFromEntry({ name: 'support', url: 'https://support.example.com/', streaming: false, tenant: 'globex', headers: { 'x-team': 'beta' } }, ctx);
    assert.ok('record' in ok);
    assert.deepEqual(ok.record.transport, { streaming: false, headers: { 'x-team': 'beta' }, tenant: 'globex' });
    const bad = recordFromEntry({ name: 'support', url: 'https://support.example.com/', headers: { 'content-type': 'text/plain' } }, ctx);
    assert.ok('problem' in bad);
    assert.equal(bad.problem.path, 'agents[0].headers.content-type');
  });

  test("the simple catalog adapter passes a record's transport options on", () => {
    const page = simpleCatalogAdapter.parse(Buffer.from(JSON.stringify({ agents: [{ name: 'support', url: 'https://support.example.com/', streaming: false, timeoutMs: 2000 }] })), ctx.pageUrl);
    const r = recordFromEntry(page.records[0], ctx);
    assert.ok('record' in r);
    assert.deepEqual(r.record.transport, { streaming: false, timeoutMs: 2000 });
  });
});

describe('the snapshot digest', () => {
  const agent = { localName: 'support_agent', canonicalSha256: 'a'.repeat(64) };
  test('is unchanged for agents without transport options, and changes with any of them', () => {
    const base = snapshotDigest([agent]);
    assert.equal(snapshotDigest([{ ...agent, transport: undefined }]), base);
    const digests = [
      snapshotDigest([{ ...agent, transport: { streaming: false } }]),
      snapshotDigest([{ ...agent, transport: { streaming: false, timeoutMs: 100 } }]),
      snapshotDigest([{ ...agent, transport: { tenant: 'acme' } }]),
      snapshotDigest([{ ...agent, transport: { tenant: 'globex' } }]),
      snapshotDigest([{ ...agent, transport: { headers: { 'x-team': 'alpha' } } }]),
      snapshotDigest([{ ...agent, transport: { headers: { 'x-team': 'beta' } } }]),
    ];
    assert.equal(new Set([base, ...digests]).size, digests.length + 1);
    // Header order does not matter.
    assert.equal(snapshotDigest([{ ...agent, transport: { headers: { a: '1', b: '2' } } }]), snapshotDigest([{ ...agent, transport: { headers: { b: '2', a: '1' } } }]));
  });
});
