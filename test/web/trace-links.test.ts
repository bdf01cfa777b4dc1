/**
 * The dashboard links chat turns and snapshots to their traces: with `server.telemetry.traceUrl`
 * set (`https://jaeger.example/trace/{traceId}`), a chat turn's reply shows its trace id as a
 * link built from the template, the Snapshots history shows each version's trace (from its
 * journaled `snapshot.published` event), and the Timeline's details of that event too. Without
 * the template the trace id shows as text, not a link. A real OpenTelemetry SDK records the spans.
 *
 * Each discovery cycle is a trace of its own (its publication span names the snapshot's trace), and
 * each API request another (the chat turn runs in its request's trace): the ids the dashboard
 * shows are read back from the spans the SDK recorded.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { context, propagation, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, NodeTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { Browser, Page } from 'playwright-core';
import { ATTR, SPAN } from '../../packages/core/src/telemetry/index.js';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService, ServiceOptions } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer, startV1CardServer, v1Card } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import { expectNoAxeViolations } from './axe.js';
import { launchBrowser, openPage, text, until } from './browser.js';

const TEMPLATE = 'https://jaeger.example/trace/{traceId}';
const linkOf = (traceId: string) => `https://jaeger.example/trace/${traceId}`;

let provider: NodeTracerProvider;
const exporter = new InMemorySpanExporter();

/** The trace of the last finished span named `name` whose attributes `match`. */
function traceOf(name: string, match: (attributes: Record<string, unknown>) => boolean = () => true): string {
  const span = exporter.getFinishedSpans().filter((s) => s.name === name && match(s.attributes)).at(-1);
  assert.ok(span, `a finished ${name} span`);
  return span.spanContext().traceId;
}

/** The trace of the cycle that published `version`: its publication span's. */
const publicationTrace = (version: number) => traceOf(SPAN.publish, (a) => a[ATTR.snapshotVersion] === version && a[ATTR.outcome] === 'published');
let browser: Browser;
let billing: RunningPeer;
let warranty: Awaited<ReturnType<typeof startV1CardServer>>;
const services: RunningService[] = [];

before(async () => {
  provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  provider.register();
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  warranty = await startV1CardServer({ card: (port) => v1Card(port), maxAgeSeconds: 0 });
  browser = await launchBrowser();
});

after(async () => {
  await browser?.close();
  for (const s of services) await s.close();
  await Promise.all([billing?.close(), warranty?.close()]);
  trace.disable();
  context.disable();
  propagation.disable();
  await provider.shutdown();
});

function options(traceUrl?: string): ServiceOptions {
  return {
    port: 0,
    ...(traceUrl !== undefined && { traceUrl }),
    // The warranty card asks for a bearer token: without credentials for it, it is not selected.
    credentials: (origin) => (origin === new URL(warranty.baseUrl).origin ? { authorization: 'Bearer test-token' } : undefined),
    policy: { allow: [billing, warranty].map((p) => new URL(p.baseUrl).origin), allowLoopback: true },
    vocabulary: [
      { tag: 'billing', description: 'Invoices and payments.' },
      { tag: 'warranty', description: 'Warranty status.' },
    ],
    needs: [{ tag: 'billing' }, { tag: 'warranty' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
      { name: 'warranty_agent', cardUrl: warranty.cardUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
    ],
    health: { enterAfter: 1 },
    cache: { minTtlMs: 0 },
    loop: { cycleIntervalMs: 600_000, minPublishIntervalMs: 0 },
    logger: createLogger({ level: 'silent' }),
  };
}

/** Sends one chat message from the Chat view; returns the turn's list item once answered. */
async function chat(page: Page, message: string) {
  await page.click('#nav-chat');
  await page.fill('#chat-message', message);
  await page.click('.chat-form button[type=submit]');
  const turn = page.locator('li.turn').last();
  await until(() => text(turn.locator('.reply')), (t) => /Answered by/.test(t), 'the answer', 15_000);
  return turn;
}

test('with server.telemetry.traceUrl, a chat turn and each snapshot link to their traces', async () => {
  const service = await startService(options(TEMPLATE));
  services.push(service);
  const v1 = service.loop.current();
  assert.ok(v1, 'published at start');
  // The warranty card changes and a refresh publishes the next version, in a cycle (a trace) of its own.
  warranty.setCard((port) => v1Card(port, { description: 'Answers warranty and repair questions.' }));
  const v2 = await service.loop.refreshNow();
  assert.ok(v2 && v2.version > v1.version, 'the changed card published a new version');
  const startTrace = publicationTrace(v1.version);
  const refreshTrace = publicationTrace(v2.version);
  assert.notEqual(refreshTrace, startTrace, 'each cycle is a trace of its own');

  // The API: the journal keeps each publication's trace; /api/whoami tells the template.
  await service.flushStore();
  const journal = (await (await fetch(`${service.url}/api/journal?types=snapshot.published`)).json()) as { events: Array<{ version: number; traceId?: string }> };
  assert.equal(journal.events.find((e) => e.version === v1.version)?.traceId, startTrace, 'v1 journaled with its trace');
  assert.equal(journal.events.find((e) => e.version === v2.version)?.traceId, refreshTrace, 'v2 journaled with its trace');
  const whoami = (await (await fetch(`${service.url}/api/whoami`)).json()) as { traceUrl?: string };
  assert.equal(whoami.traceUrl, TEMPLATE);

  const { page, problems } = await openPage(browser);
  await page.goto(`${service.url}/#/snapshots`);

  // Snapshots: each version's trace, linked by the template.
  for (const [version, traceId] of [[v1.version, startTrace], [v2.version, refreshTrace]] as const) {
    const link = page.locator(`table.history tr[data-version="${version}"] td.trace a.trace-link`);
    await link.waitFor();
    assert.equal(await link.getAttribute('href'), linkOf(traceId), `v${version}: the link`);
    assert.equal(await link.getAttribute('data-trace-id'), traceId);
    assert.equal(await text(link), traceId.slice(0, 8));
    assert.equal(await link.getAttribute('rel'), 'noopener noreferrer');
  }
  await expectNoAxeViolations(page, 'snapshots with trace links');

  // Timeline: the publication's details name its trace.
  await page.click('#nav-timeline');
  await page.locator('svg.timeline .mark[data-type="snapshot.published"]', { hasText: `v${v2.version}` }).locator('rect').click();
  const detailLink = page.locator('#timeline-detail dd.trace a.trace-link');
  await detailLink.waitFor();
  assert.equal(await detailLink.getAttribute('href'), linkOf(refreshTrace));

  // Chat: the turn's reply shows its trace (the response's traceId), linked.
  const turn = await chat(page, 'Where is my invoice?');
  assert.equal(await text(turn.locator('.author')), 'billing_agent');
  const turnLink = turn.locator('.turn-trace a.trace-link');
  const turnTrace = traceOf(SPAN.chatTurn);
  assert.equal(traceOf('POST /api/chat'), turnTrace, 'the turn ran in the trace of its request');
  assert.equal(await turnLink.getAttribute('href'), linkOf(turnTrace));
  assert.match(await text(turnLink), new RegExp(`trace ${turnTrace}`), 'the whole id, to copy');
  await expectNoAxeViolations(page, 'chat with a trace link');
  assert.deepEqual(problems, []);
  await page.close();
});

test('without a template: the trace ids show as text, with no link', async () => {
  const service = await startService(options());
  services.push(service);
  const version = service.loop.current()!.version;
  const startTrace = publicationTrace(version);
  const whoami = (await (await fetch(`${service.url}/api/whoami`)).json()) as { traceUrl?: string };
  assert.equal('traceUrl' in whoami, false);
  const { page, problems } = await openPage(browser);
  await page.goto(`${service.url}/#/snapshots`);
  const cell = page.locator(`table.history tr[data-version="${version}"] td.trace`);
  await cell.locator('.trace-id').waitFor();
  assert.equal(await cell.locator('a').count(), 0, 'no link');
  assert.equal(await cell.locator('.trace-id').getAttribute('data-trace-id'), startTrace);
  const turn = await chat(page, 'Where is my invoice?');
  assert.equal(await turn.locator('.turn-trace a').count(), 0);
  assert.equal(await turn.locator('.turn-trace .trace-id').getAttribute('data-trace-id'), traceOf(SPAN.chatTurn));
  assert.deepEqual(problems, []);
  await page.close();
});
