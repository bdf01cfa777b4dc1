/**
 * A restart carries the lasting alerts it finds open in the journal instead of raising them again
 * (issue 25, item 3): the service closed and started again on the same SQLite file, with a
 * critical agent whose card server answers 500 (`critical-unavailable`) and a registry that
 * answers 500 (`source-error`). The journal (`/api/journal`) then holds one open `alert` per
 * condition, the restart as one `service.started` event, and — once the conditions clear, after
 * the restart or while the service was down — one `alert.resolved` each, with the original
 * `raisedAt`.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DiscoveryEvent } from '../../packages/core/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger, startService } from '../../packages/service/src/index.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import { cardFor } from '../helpers/cards.js';
import type { JsonServer } from '../helpers/json-server.js';
import { startJsonServer } from '../helpers/json-server.js';

let warranty: RunningV1Server;
let billing: JsonServer;
let registry: JsonServer;
let dir: string;

before(async () => {
  warranty = await startV1Server({ prefix: 'warranty' });
  billing = await startJsonServer();
  registry = await startJsonServer();
});

after(async () => {
  await Promise.all([warranty.close(), billing.close(), registry.close()]);
});

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'restart-alerts-'));
  failing(true);
});

/** Both conditions hold (500s) or neither (a card, an empty list). */
function failing(yes: boolean): void {
  billing.routes.set('/.well-known/agent-card.json', yes ? { status: 500, body: { error: 'down' } } : { body: cardFor(billing, 'billing', { url: `${billing.origin}/jsonrpc` }) });
  registry.routes.set('/agents', yes ? { status: 500, body: { error: 'down' } } : { body: { agents: [] } });
}

function options(): ServiceOptions {
  return {
    port: 0,
    logger: createLogger({ level: 'silent' }),
    policy: { allow: [new URL(warranty.baseUrl).origin, billing.origin, registry.origin], allowLoopback: true },
    vocabulary: [
      { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty', 'serial'] },
      { tag: 'billing', description: 'Invoices.', keywords: ['invoice'] },
    ],
    needs: [{ tag: 'warranty' }],
    static: [
      { name: 'warranty_agent', url: warranty.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
      { name: 'billing_agent', url: billing.origin, description: 'Answers invoice questions.', tags: ['billing'], critical: true },
    ],
    registries: [{ id: 'partners', url: `${registry.origin}/agents`, pollIntervalMs: 1 }],
    // Every card is due at every cycle, and a failed one is retried at once.
    cache: { minTtlMs: 0, maxTtlMs: 1, backoffBaseMs: 1, backoffMaxMs: 1 },
    loop: { cycleIntervalMs: 600_000 },
    store: 'sqlite:state.sqlite',
    storeOptions: { dataDir: dir },
  };
}

/** The two lasting conditions, by kind: their alerts' keys and when they were raised. */
function raisedIn(events: DiscoveryEvent[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of events) if (e.type === 'alert' && e.key !== undefined && (e.kind === 'critical-unavailable' || e.kind === 'source-error')) out.set(e.key, e.at);
  assert.deepEqual([...out.keys()].map((k) => k.split(':')[0]).sort(), ['critical-unavailable', 'source-error'], 'both conditions raised');
  return out;
}

async function journal(service: RunningService): Promise<DiscoveryEvent[]> {
  await service.flushStore();
  const res = await fetch(`${service.url}/api/journal?limit=1000`);
  assert.equal(res.status, 200);
  const page = (await res.json()) as { events: DiscoveryEvent[] };
  return page.events;
}

/** Runs `n` cycles (the loop's own timer is far away). */
async function cycles(service: RunningService, n: number): Promise<void> {
  for (let i = 0; i < n; i++) await service.loop.refreshNow();
}

const alertsOf = (events: DiscoveryEvent[], key: string) => events.filter((e) => e.type === 'alert' && e.key === key);
const resolutionsOf = (events: DiscoveryEvent[], key: string) => events.filter((e): e is DiscoveryEvent & { type: 'alert.resolved' } => e.type === 'alert.resolved' && e.key === key);

describe('a restart on a SQLite store carries the open alerts', () => {
  test('a condition that still holds is one open alert; one service.started says the restart; clearing it resolves it once with the original raisedAt', async () => {
    const first = await startService(options());
    let raised: Map<string, number>;
    try {
      await cycles(first, 2);
      const events = await journal(first);
      raised = raisedIn(events);
      for (const key of raised.keys()) assert.equal(alertsOf(events, key).length, 1, `${key} raised once before the restart`);
    } finally {
      await first.close();
    }

    const again = await startService(options());
    try {
      await cycles(again, 3);
      let events = await journal(again);
      for (const key of raised.keys()) {
        assert.equal(alertsOf(events, key).length, 1, `${key}: not raised again after the restart`);
        assert.equal(resolutionsOf(events, key).length, 0, `${key}: still open`);
      }
      for (const key of raised.keys()) assert.ok(again.loop.activeAlerts.includes(key), `${key}: active after the restart`);
      const starts = events.filter((e) => e.type === 'service.started');
      assert.equal(starts.length, 2, 'one start, then one restart');
      const restart = starts[1] as DiscoveryEvent & { type: 'service.started' };
      assert.ok(restart.restored.version > 0, 'the restart says what it restored');
      assert.equal(restart.restored.alerts, 2, 'and how many open alerts it carried');

      failing(false);
      await cycles(again, 3);
      events = await journal(again);
      for (const [key, at] of raised) {
        assert.equal(alertsOf(events, key).length, 1, `${key}: still one alert`);
        const resolved = resolutionsOf(events, key);
        assert.equal(resolved.length, 1, `${key}: resolved once`);
        assert.equal(resolved[0]!.raisedAt, at, `${key}: with the original raisedAt`);
      }
    } finally {
      await again.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a condition that cleared while the service was down is resolved after the restart, not raised again', async () => {
    const first = await startService(options());
    let raised: Map<string, number>;
    try {
      await cycles(first, 2);
      const events = await journal(first);
      raised = raisedIn(events);
    } finally {
      await first.close();
    }
    failing(false);
    const again = await startService(options());
    try {
      await cycles(again, 3);
      const events = await journal(again);
      for (const [key, at] of raised) {
        assert.equal(alertsOf(events, key).length, 1, `${key}: not raised again`);
        const resolved = resolutionsOf(events, key);
        assert.equal(resolved.length, 1, `${key}: resolved after the restart`);
        assert.equal(resolved[0]!.raisedAt, at, `${key}: with the original raisedAt`);
      }
      assert.deepEqual(again.loop.activeAlerts, []);
    } finally {
      await again.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
