/** The one way a frozen copy is made (issue 43: what a fleet's records hold). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { frozenCopy } from '../../packages/core/src/rules/frozen.js';
import { staticSource } from '../../packages/core/src/sources/index.js';

test('a frozen copy: the source keys in order, the changes written over them, the source untouched', () => {
  const source = { name: 'billing', tags: 'a,b', critical: 'false' };
  const copy = frozenCopy(source, { critical: 'true', extra: undefined });
  assert.ok(Object.isFrozen(copy));
  assert.deepEqual(Object.keys(copy), ['name', 'tags', 'critical', 'extra']);
  assert.deepEqual({ ...copy }, { name: 'billing', tags: 'a,b', critical: 'true', extra: undefined });
  assert.equal(source.critical, 'false');
  assert.ok(!Object.isFrozen(source));
  assert.throws(() => {
    (copy as { name: string }).name = 'other';
  }, TypeError);
});

test("a source's records share one hidden class for their metadata, however many there are", () => {
  // V8 gives an object made by a leading spread and then frozen a hidden class of its own (about
  // 170 B each: 17 MB at 100,000 endpoints). Checked in a child with V8's natives syntax, after
  // enough records for the clone cache to stop sharing.
  const loader = fileURLToPath(new URL('../helpers/ts-loader.mjs', import.meta.url));
  const sources = fileURLToPath(new URL('../../packages/core/src/sources/index.ts', import.meta.url));
  const script = `
    import { staticSource } from ${JSON.stringify(sources)};
    const agents = Array.from({ length: 3000 }, (_, i) => ({ name: 'agent_' + i, url: 'https://a' + i + '.example.com/', description: 'd' + i, tags: ['billing'] }));
    const source = staticSource({ agents });
    const { records } = await source.refresh();
    console.log(JSON.stringify({ n: records.length, same: %HaveSameMap(records[100].metadata, records[2900].metadata), frozen: Object.isFrozen(records[2900].metadata) }));
  `;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '--import', loader, '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out.trim().split('\n').at(-1)!), { n: 3000, same: true, frozen: true });
});

test("a static source's records carry their metadata and transport frozen, as configured", async () => {
  const source = staticSource({
    agents: [
      { name: 'billing', url: 'https://billing.example.com/', description: 'Answers invoices.', tags: ['billing', 'refunds'], critical: true },
      { name: 'edge', url: 'https://edge.example.com/', description: 'Behind a proxy.', routingTags: ['shipping'], interfaceUrl: 'https://edge.example.com/a2a' },
    ],
  });
  const { records } = await source.refresh();
  const [billing, edge] = records;
  assert.deepEqual({ ...billing!.metadata }, { description: 'Answers invoices.', tags: 'billing,refunds', critical: 'true' });
  assert.deepEqual({ ...edge!.metadata }, { description: 'Behind a proxy.', routingTags: 'shipping', critical: 'false' });
  assert.equal(edge!.transport?.interfaceUrl, 'https://edge.example.com/a2a');
  for (const r of records) {
    assert.ok(Object.isFrozen(r.metadata));
    if (r.transport !== undefined) assert.ok(Object.isFrozen(r.transport));
  }
});
