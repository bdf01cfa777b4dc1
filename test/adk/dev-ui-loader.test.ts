/**
 * The dev-UI loader against the real `@google/adk-devtools` 2.0.0 API server: it lists one root
 * per retained snapshot with the digest in the app name, and a session run through the dev server
 * uses that digest's tree. Specialists are local agents with a scripted fake model.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LlmAgent } from '@google/adk';
import { AdkApiServer } from '@google/adk-devtools';
import { buildRootAgent, devUiAppName, devUiLoader, TreeFactory } from '../../packages/core/src/adk/index.js';
import type { Snapshot } from '../../packages/core/src/snapshot/index.js';
import { buildSnapshot, SnapshotStore } from '../../packages/core/src/snapshot/index.js';
import { ScriptedLlm } from '../helpers/a2a-peers.js';
import { snapshotAgent as agent } from '../helpers/cards.js';


test('the ADK dev server lists one root per retained snapshot, digest in the name, and runs each on its own tree', async () => {
  const store = new SnapshotStore();
  const trees = new TreeFactory({
    snapshots: store,
    buildRoot: (s: Snapshot) =>
      buildRootAgent(
        'orchestrator',
        s,
        s.agents.map((a) => new LlmAgent({ name: a.localName, description: a.description, model: new ScriptedLlm(`${a.localName} on v${s.version}`, `fake-dev-${a.localName}-${s.version}`) })),
        { kind: 'routed' },
      ),
  });
  const A = buildSnapshot([agent('billing_agent', ['billing'])], 1, 0);
  store.publish(A);
  trees.rootFor('pinned-session'); // keeps A retained
  const B = buildSnapshot([agent('billing_agent', ['billing']), agent('warranty_agent', ['warranty'])], 2, 0);
  store.publish(B);

  const server = new AdkApiServer({ agentLoader: devUiLoader({ trees, snapshots: store }) as never, host: '127.0.0.1', port: 0, serveDebugUI: false });
  await server.start();
  try {
    const apps = (await (await fetch(`${server.url}/list-apps`)).json()) as string[];
    assert.deepEqual(apps, [devUiAppName('orchestrator', B), devUiAppName('orchestrator', A)]);
    assert.match(apps[0]!, /^orchestrator__[0-9a-f]{12}$/);

    const run = async (app: string, text: string) => {
      const session = await fetch(`${server.url}/apps/${app}/users/dev/sessions/s-${app}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      assert.equal(session.status, 200);
      const res = await fetch(`${server.url}/run`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ appName: app, userId: 'dev', sessionId: `s-${app}`, newMessage: { role: 'user', parts: [{ text }] } }),
      });
      assert.equal(res.status, 200);
      const events = (await res.json()) as Array<{ author: string; content?: { parts?: Array<{ text?: string }> } }>;
      return events.map((e) => [e.author, e.content?.parts?.[0]?.text]);
    };
    assert.deepEqual(await run(apps[0]!, 'warranty please'), [['warranty_agent', 'warranty_agent on v2']]);
    assert.deepEqual(await run(apps[1]!, 'warranty please'), [['billing_agent', 'billing_agent on v1']], "A's tree has no warranty agent");

    const unknown = await fetch(`${server.url}/apps/orchestrator__000000000000/users/dev/sessions/x`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    const unknownRun = await fetch(`${server.url}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ appName: 'orchestrator__000000000000', userId: 'dev', sessionId: 'x', newMessage: { role: 'user', parts: [{ text: 'hi' }] } }),
    });
    assert.ok(unknown.status >= 400 || unknownRun.status >= 400, 'an unknown digest is not served');
  } finally {
    await server.stop();
  }
});
