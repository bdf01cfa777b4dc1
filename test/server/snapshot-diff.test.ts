/**
 * `GET /api/diff` says what each change breaks: a real 1.x card server's card changes twice (a
 * skill added, then a skill and an output mode removed), and the diffs between the snapshots the
 * service published carry each agent's impact and reasons, as the OpenAPI document declares.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startChangingCardService } from '../helpers/changing-card-service.js';
import type { ChangingCardService } from '../helpers/changing-card-service.js';

let stand: ChangingCardService;
before(async () => {
  stand = await startChangingCardService();
});
after(async () => {
  await stand?.close();
});

const STATUS = { id: 'warranty-status', name: 'Warranty status', description: 'Looks up the warranty status of a serial number.', tags: ['warranty'], examples: ['Is serial 123 still under warranty?'] };
const CLAIMS = { id: 'claims', name: 'Claims', description: 'Opens a warranty claim.', tags: ['warranty'] };

interface Diff {
  added: string[];
  removed: string[];
  changed: Array<{ localName: string; skillsAdded: string[]; impact: string; reasons: string[] }>;
  breaking: string[];
  impacts: Array<{ localName: string; impact: string; reasons: string[] }>;
}

async function diff(from: string, to: string): Promise<Diff> {
  const res = await fetch(`${stand.service.url}/api/diff?from=${from}&to=${to}`);
  assert.equal(res.status, 200);
  return (await res.json()) as Diff;
}

test('a compatible change and a breaking change, each with its reasons', async () => {
  const v1 = stand.first;
  const v2 = await stand.publish({ skills: [STATUS, CLAIMS] });
  const v3 = await stand.publish({ skills: [CLAIMS], defaultOutputModes: ['text/plain'] });
  assert.equal(new Set([v1.digest, v2.digest, v3.digest]).size, 3, 'three snapshots');

  const compatible = await diff(v1.digest, v2.digest);
  assert.deepEqual(compatible.breaking, []);
  assert.deepEqual(compatible.impacts, [{ localName: 'warranty_agent', impact: 'compatible', reasons: ['skill "claims" added'] }]);
  assert.deepEqual(compatible.changed.map((c) => [c.localName, c.skillsAdded, c.impact]), [['warranty_agent', ['claims'], 'compatible']], 'the existing fields stay');

  const breaking = await diff(v2.digest, v3.digest);
  assert.deepEqual(breaking.breaking, ['warranty_agent']);
  assert.deepEqual(breaking.impacts, [
    { localName: 'warranty_agent', impact: 'breaking', reasons: ['skill "warranty-status" removed', 'output mode "application/json" removed from the card\'s default modes'] },
  ]);
  assert.deepEqual(breaking.changed[0]!.reasons, breaking.impacts[0]!.reasons);

  // From nothing, every agent is added: compatible.
  const res = await fetch(`${stand.service.url}/api/diff?to=${v1.digest}`);
  const fromNothing = (await res.json()) as Diff;
  assert.deepEqual([fromNothing.added, fromNothing.breaking, fromNothing.impacts], [['warranty_agent'], [], [{ localName: 'warranty_agent', impact: 'compatible', reasons: ['agent added'] }]]);
});
