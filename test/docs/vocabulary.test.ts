/**
 * One vocabulary (issue 42): the library's tables (ENDPOINT_VERDICTS, ENDPOINT_CAUSES,
 * HEALTH_STATES), the dashboard's copy (web/lib/vocabulary.js, which the page loads without any
 * server module) and the tables of docs/vocabulary.md list the same words with the same meanings.
 * A word added, renamed or reworded in one place and not the others fails here. The API's schema
 * (docs/openapi.json) lists the same verdicts and causes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { ENDPOINT_CAUSES, ENDPOINT_VERDICTS, HEALTH_STATES } from '../../packages/core/src/index.js';
// @ts-expect-error — plain JS module of the dashboard, checked by its own JSDoc
import { BADGES, CAUSES, HEALTH, VERDICTS } from '../../packages/service/web/lib/vocabulary.js';
// @ts-expect-error — plain JS module of the dashboard, checked by its own JSDoc
import { OUTCOME_LABEL } from '../../packages/service/web/lib/format.js';

const root = new URL('../../', import.meta.url);

/** The rows of the table under `## <heading>`: each row's cells, backticks and escapes removed. */
function table(markdown: string, heading: string): string[][] {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  assert.ok(start >= 0, `docs/vocabulary.md has a "## ${heading}" section`);
  const end = markdown.indexOf('\n## ', start + 1);
  const lines = markdown.slice(start, end === -1 ? undefined : end).split('\n').filter((l) => l.startsWith('|'));
  return lines.slice(2).map((l) =>
    l
      .slice(1, -1)
      .split(/(?<!\\)\|/)
      .map((c) => c.trim().replace(/\\\|/g, '|').replace(/^`(.*)`$/, '$1')),
  );
}

test('the dashboard copies the library: the same verdicts, causes (words, meaning, verdict) and health states, in the same order', () => {
  assert.deepEqual(Object.entries(VERDICTS), Object.entries(ENDPOINT_VERDICTS));
  assert.deepEqual(Object.entries(CAUSES), Object.entries(ENDPOINT_CAUSES));
  assert.deepEqual(Object.entries(HEALTH), Object.entries(HEALTH_STATES));
});

test('docs/vocabulary.md lists every word of the library and the dashboard, with the same meaning, and nothing else', async () => {
  const md = await readFile(new URL('docs/vocabulary.md', root), 'utf8');
  assert.deepEqual(table(md, 'Verdicts'), Object.entries(ENDPOINT_VERDICTS).map(([k, m]) => [k, m]));
  assert.deepEqual(table(md, 'Causes'), Object.entries(ENDPOINT_CAUSES).map(([k, c]) => [k, c.label, c.verdict, c.meaning]));
  assert.deepEqual(table(md, 'Health'), Object.entries(HEALTH_STATES).map(([k, m]) => [k, m]));
  assert.deepEqual(table(md, 'Dashboard badges'), Object.entries(BADGES).map(([k, m]) => [k, m]));
});

test('every word a badge shows has its explanation: each cache outcome, each verdict a cause gives', () => {
  for (const label of Object.values(OUTCOME_LABEL as Record<string, string>)) assert.ok(Object.hasOwn(BADGES, label), `the cache outcome badge "${label}" is explained`);
  for (const [cause, c] of Object.entries(ENDPOINT_CAUSES)) assert.ok(Object.hasOwn(ENDPOINT_VERDICTS, c.verdict), `${cause} gives a verdict of the table`);
  // Labels are what an operator reads in a column: distinct, short.
  const labels = Object.values(ENDPOINT_CAUSES).map((c) => c.label);
  assert.equal(new Set(labels).size, labels.length, 'no two causes read the same');
  for (const l of labels) assert.ok(l.length <= 24, `"${l}" fits a column`);
});

test("the API's schema names the same verdicts and causes (docs/openapi.json, EndpointState)", async () => {
  const doc = JSON.parse(await readFile(new URL('docs/openapi.json', root), 'utf8')) as { components: { schemas: Record<string, { properties: Record<string, { enum?: string[] }> }> } };
  const state = doc.components.schemas['EndpointState'];
  assert.ok(state, 'EndpointState is a named schema');
  assert.deepEqual(state.properties['verdict']?.enum, Object.keys(ENDPOINT_VERDICTS));
  assert.deepEqual(state.properties['cause']?.enum, Object.keys(ENDPOINT_CAUSES));
});
