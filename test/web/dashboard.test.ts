/**
 * The dashboard against a live `serve`: the demo's real peers and service play the morning of
 * changes (at 10 scenario minutes per second, about 7 s) while Chromium watches, without reloading: endpoints fill in and change, snapshots are
 * gained in order, alerts reach the live region, a card is shown, a chat turn says who answered
 * on which digest; and the dashboard works from the keyboard. Screenshots of each view go to
 * docs/images/.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { runDemo } from '../../packages/service/src/demo/index.js';
import type { RunningDemo } from '../../packages/service/src/demo/index.js';
import { focused, launchBrowser, openPage, screenshot, tabTo, text, until } from './browser.js';

let browser: Browser;
let demo: RunningDemo;
let page: Page;
let problems: string[];

const HEALTH_ORDER = ['pending', 'healthy', 'degraded', 'removed'];

before(async () => {
  // The browser first: the scenario starts as soon as the demo is up.
  browser = await launchBrowser();
  ({ page, problems } = await openPage(browser));
  demo = await runDemo({ speed: 10, port: 0, out: () => {} });
  // Not waiting for the load event: the morning of changes is already playing.
  await page.goto(`${demo.url}/#/endpoints`, { waitUntil: 'commit' });
  // A marker that a reload would erase.
  await page.evaluate('window.__dashboardMarker = 42');
});

after(async () => {
  await browser?.close();
  await demo?.close();
});

async function api<T>(path: string): Promise<T> {
  return (await (await fetch(`${demo.url}${path}`)).json()) as T;
}

const row = (name: string) => page.locator('table.endpoints tbody tr[data-endpoint]', { hasText: name });

describe('the dashboard follows a live service through the morning of changes', () => {
  test('endpoints fill in, warranty appears and later degrades, versions are gained in order, alerts are announced — no reload', async (t) => {
    await row('billing_agent').waitFor({ timeout: 10_000 });
    await row('returns-agent').waitFor({ timeout: 10_000 });

    // Watch the page while the scenario plays: the snapshot count in the nav and warranty's health.
    const counts: number[] = [];
    const states: string[] = [];
    await until(
      async () => {
        const n = Number(await text(page.locator('#nav-snapshots .count')).catch(() => '0'));
        if (counts.at(-1) !== n) counts.push(n);
        const w = row('warranty-agent');
        if ((await w.count()) > 0) {
          const badge = await text(w.locator('td.health .badge').first());
          if (states.at(-1) !== badge) states.push(badge);
        }
        return { state: states.at(-1), count: counts.at(-1) };
      },
      (s) => s.state === 'removed' && s.count === 5,
      'the warranty endpoint to be removed after its card stops answering, and v5 published',
      60_000,
    );
    t.diagnostic(`seen: snapshots ${counts.join(' → ')}; warranty ${states.join(' → ')}`);
    assert.ok(counts.length >= 2, `the snapshot count changed while watching: ${counts.join(' → ')}`);
    assert.deepEqual([...counts].sort((a, b) => a - b), counts, `versions are gained in order: ${counts.join(' → ')}`);
    assert.ok(states.length >= 2, `warranty's health changed on the page: ${states.join(' → ')}`);
    const order = states.map((s) => HEALTH_ORDER.indexOf(s));
    assert.deepEqual([...order].sort((a, b) => a - b), order, `healthy → degraded → removed: ${states.join(' → ')}`);

    const warranty = await text(row('warranty-agent'));
    assert.match(warranty, /stale/, 'the card is served stale');
    assert.match(warranty, /ERR_FETCH_TIMEOUT/, 'with the reason');
    assert.match(await text(row('billing_agent')), /selected.*billing_agent/);
    // One verdict per endpoint, with its reason and since when.
    const verdict = row('warranty-agent').locator('td[data-verdict]');
    assert.equal(await verdict.getAttribute('data-verdict'), 'removed');
    assert.match(await text(verdict), /consecutive failed fetches and its card is past its allowed staleness.*since/s);

    // The live region announced what happened while the page was open.
    const live = page.locator('#live-region');
    assert.equal(await live.getAttribute('aria-live'), 'polite');
    await until(() => text(live), (t) => /Alert repeated-failures/.test(t), 'the repeated-failures alert in the live region');
    await until(() => text(live), (t) => /Snapshot v5 published/.test(t), 'snapshot v5 in the live region');
    assert.equal(await page.evaluate('window.__dashboardMarker'), 42, 'the page was never reloaded');
    assert.equal(await text(page.locator('#connection')), 'Live');

    await demo.scenarioDone;
    await screenshot(page, 'dashboard-endpoints');
  });

  test('endpoints can be filtered and sorted', async () => {
    await page.fill('#endpoint-filter', 'warranty');
    await until(() => page.locator('table.endpoints tbody tr[data-endpoint]').count(), (n) => n === 1, 'one row after filtering');
    await page.fill('#endpoint-filter', '');
    await page.selectOption('#endpoint-health', 'healthy');
    await until(() => page.locator('table.endpoints tbody tr[data-endpoint]').count(), (n) => n === 2, 'two healthy rows');
    await page.selectOption('#endpoint-health', 'all');
    const header = page.locator('table.endpoints thead th', { hasText: 'Health' });
    await header.locator('button').click();
    assert.equal(await header.getAttribute('aria-sort'), 'ascending');
    await header.locator('button').click();
    assert.equal(await header.getAttribute('aria-sort'), 'descending');
    const first = await text(page.locator('table.endpoints tbody tr[data-endpoint]').first());
    assert.match(first, /warranty-agent/, 'removed sorts last ascending, first descending');
  });

  test('at 1366 px the endpoints table fits: every column, the verdict and the links visible, also with "Proposed by" open', async () => {
    assert.equal(page.viewportSize()?.width, 1366);
    // A string, not a function: tsx would name inner arrows with a helper the page lacks.
    const fits = () =>
      page.evaluate(`(() => {
        const table = document.querySelector('table.endpoints');
        const wrap = table.parentElement;
        const right = (sel) => Math.max(...[...table.querySelectorAll(sel)].map((el) => el.getBoundingClientRect().right));
        return { overflow: wrap.scrollWidth - wrap.clientWidth, verdictRight: right('td[data-verdict]'), linksRight: right('.inspect-link'), wrapRight: wrap.getBoundingClientRect().right };
      })()`) as Promise<{ overflow: number; verdictRight: number; linksRight: number; wrapRight: number }>;
    const closed = await fits();
    assert.ok(closed.overflow <= 0, `no horizontal scrolling: ${JSON.stringify(closed)}`);
    assert.ok(closed.verdictRight <= closed.wrapRight && closed.linksRight <= closed.wrapRight, `verdict and links inside: ${JSON.stringify(closed)}`);
    await row('warranty-agent').locator('details.proposed-by summary').click();
    await row('warranty-agent').locator('details.proposed-by .provenance').waitFor();
    const open = await fits();
    assert.ok(open.overflow <= 0 && open.verdictRight <= open.wrapRight, `with "Proposed by" open too: ${JSON.stringify(open)}`);
    await row('warranty-agent').locator('details.proposed-by summary').click();
  });

  test('snapshots: the history in order with digests, the diff of any two, the alerts', async () => {
    await page.click('#nav-snapshots');
    await until(() => page.locator('table.history tbody tr[data-version]').count(), (n) => n === 5, 'five versions');
    const versions = await page.locator('table.history tbody tr[data-version]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-version')));
    assert.deepEqual(versions, ['5', '4', '3', '2', '1'], 'newest first');
    const history = await api<{ history: Array<{ version: number; digest: string }> }>('/api/snapshots');
    assert.match(await text(page.locator('table.history tr[data-version="3"]')), new RegExp(history.history[2]!.digest.slice(0, 12)));

    // Latest two: warranty removed.
    await until(() => text(page.locator('.diff')), (t) => /v4 → v5/.test(t) && /Removed: − warranty_agent/.test(t), 'the v4 → v5 diff');
    // Any two: v3 → v4 is returns' new skill.
    await page.selectOption('#diff-from', history.history[2]!.digest);
    await page.selectOption('#diff-to', history.history[3]!.digest);
    await until(() => text(page.locator('.diff')), (t) => /v3 → v4/.test(t) && /returns_agent/.test(t) && /\+ exchange/.test(t), 'the v3 → v4 diff');
    // The changed-agents table stays inside the diff panel (it scrolls there when too wide).
    const [panel, table] = await Promise.all([page.locator('.diff').boundingBox(), page.locator('.diff .diff-changed').boundingBox()]);
    assert.ok(panel && table && table.x + table.width <= panel.x + panel.width + 0.5, `the changed-agents table within the diff panel: ${JSON.stringify({ panel, table })}`);
    const alerts = await text(page.locator('table.alerts'));
    assert.match(alerts, /skills-changed/);
    assert.match(alerts, /repeated-failures/);
    await page.click('table.history tr[data-version="3"] button');
    await until(() => text(page.locator('h2', { hasText: 'Agents of' })), (t) => /v3/.test(t), 'the agents of v3');
    assert.match(await text(page.locator('table', { hasText: 'v3 · 3 agents' })), /warranty_agent/);
    // The routing evaluation of the shown snapshot (the demo evaluates its vocabulary's examples).
    assert.match(await text(page.locator('table', { hasText: 'v3 · 3 agents' }).locator('caption')), /routing \d+(\.\d)?% of \d+ cases \(min 90%\)/);
    await page.click('table.history tr[data-version="5"] button');
    await page.selectOption('#diff-from', history.history[3]!.digest);
    await page.selectOption('#diff-to', history.history[4]!.digest);
    await until(() => text(page.locator('.diff')), (t) => /v4 → v5/.test(t), 'the v4 → v5 diff again');
    await screenshot(page, 'dashboard-snapshots');
  });

  test('timeline: the story from the journal, one lane per endpoint under its local name, chatter only as rates; marks are buttons with details in the page; a filter', async () => {
    await page.click('#nav-timeline');
    await page.locator('svg.timeline').waitFor();
    const lanes = await page.locator('svg.timeline .lane .lane-name').allTextContents();
    for (const name of ['snapshots', 'alerts', 'billing_agent', 'returns_agent', 'warranty_agent']) assert.ok(lanes.includes(name), `lane ${name} in ${lanes.join(', ')}`);
    assert.ok(!lanes.includes('warranty-agent'), 'one name per endpoint: the agent’s local name, not the source’s');
    // No chatter among the events: hits, 304s, requests, stale serving and backoff are rates.
    const types = await page.locator('svg.timeline .mark').evaluateAll((ms) => ms.map((m) => m.getAttribute('data-type')));
    assert.ok(types.length > 0);
    assert.equal(types.filter((t) => t === 'card.fetch' || t === 'card.backoff').length, 0, 'no request or backoff marks');
    assert.equal(await page.locator('table.events tbody tr', { hasText: /card (hit|304)/ }).count(), 0, 'no "card hit" / "card 304" rows');
    for (let v = 1; v <= 5; v++) assert.equal(await page.locator(`svg.timeline .mark[data-type="snapshot.published"]`, { hasText: `v${v}` }).count(), 1, `snapshot v${v} is a mark`);
    assert.ok((await page.locator('svg.timeline .mark[data-type="alert"]').count()) >= 2, 'the alerts are marks');
    assert.match((await page.locator('svg.timeline .lane[data-lane*="127.0.0.1"] .lane-rate').first().textContent()) ?? '', /hits · .* 304 · .* req/, 'each endpoint lane carries its cache rates');
    assert.match(await text(page.locator('table.activity')), /hits/, 'and the activity table counts them');

    // Keyboard: Tab from the last filter reaches the marks; the focused mark's details show in the page.
    await page.focus('#tl-kind-sessions');
    await page.keyboard.press('Tab');
    const mark = await page.evaluate("document.activeElement?.getAttribute('data-type')");
    assert.ok(mark, 'a mark takes focus');
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('#timeline-detail dl').getAttribute('data-seq'), await page.evaluate("document.activeElement?.getAttribute('data-seq')"));
    const alert = page.locator('svg.timeline .mark[data-type="alert"]').first();
    await alert.focus();
    // Whichever alert comes first: on a slow machine a source's 300 ms deadline can raise one before the morning's own.
    await until(() => text(page.locator('#timeline-detail')), (t) => /Resolution/.test(t) && /What alert (repeated-failures|skills-changed|source-error)/.test(t), 'the alert’s details with its resolution state');
    const v5 = page.locator('svg.timeline .mark[data-type="snapshot.published"]', { hasText: 'v5' });
    await v5.locator('rect').click();
    assert.match(await text(page.locator('#timeline-detail')), /snapshot v5.*Agents.*billing_agent/s, 'a click (or tap) shows the same details');
    await screenshot(page, 'dashboard-timeline');

    // The filter: only snapshots, alerts and resolutions (and the service's start).
    for (const k of ['admission', 'state', 'card']) await page.uncheck(`#tl-kind-${k}`);
    const left = await page.locator('svg.timeline .mark').evaluateAll((ms) => ms.map((m) => m.getAttribute('data-type')));
    assert.ok(left.length > 0 && left.every((t) => /^(snapshot\.|alert|routing\.|rollout\.|service\.started|replica\.leader)/.test(t ?? '')), `only the story is left: ${[...new Set(left)].join(', ')}`);
    for (const k of ['admission', 'state', 'card']) await page.check(`#tl-kind-${k}`);
  });

  test('one truth per endpoint: tiles count verdicts, the table sorts by severity and shows the local name', async () => {
    await page.click('#nav-endpoints');
    const rows = page.locator('table.endpoints tbody tr[data-endpoint]');
    await until(() => rows.count(), (n) => n === 3, 'three rows');
    const verdicts = await rows.locator('td[data-verdict]').evaluateAll((tds) => tds.map((td) => td.getAttribute('data-verdict')));
    assert.deepEqual(verdicts, ['removed', 'selected', 'selected'], 'the removed endpoint first');
    assert.deepEqual(await rows.locator('.ep-local').allTextContents(), ['warranty_agent', 'billing_agent', 'returns_agent']);
    const tiles = await page.locator('.tiles .tile').evaluateAll((ts) => ts.map((t) => t.textContent ?? ''));
    const tile = (label: string) => Number(/^(\d+)/.exec(tiles.find((t) => t.includes(label)) ?? '')?.[1]);
    assert.equal(tile('selected'), 2);
    assert.equal(tile('removed or held'), 1);
    assert.equal(tile('degraded'), 0, 'a removed endpoint is not counted as served stale');
  });

  test('card view: a card as fetched, with its warning highlighted at its JSON path', async () => {
    await page.click('#nav-endpoints');
    await row('billing_agent').getByRole('link', { name: /Card of/ }).click();
    await until(() => page.evaluate('location.hash') as Promise<string>, (h) => h.startsWith('#/card?url='), 'the card route');
    await page.locator('ol.json').waitFor();
    assert.match(await text(page.locator('ol.json')), /"name": "Billing Agent"/);
    const warning = page.locator('ol.json li.hl-warning');
    assert.ok((await warning.count()) > 0, 'the warned path is highlighted');
    assert.equal(await warning.first().getAttribute('data-path'), 'additionalInterfaces[0]');
    assert.match(await text(page.locator('table.problems')), /additionalInterfaces\[0\].*repeats the JSONRPC interface/);
    // The skills are listed, not only counted: name, id, description, tags.
    assert.match(await text(page.locator('table.skills tr[data-skill="invoices"]')), /^Invoices invoices Explains invoices and charges\. billing$/);
    await page.check('#card-raw');
    assert.match(await text(page.locator('pre.raw')), /^\{"name":"Billing Agent"/, 'the raw bytes as fetched');
    await page.uncheck('#card-raw');
    await screenshot(page, 'dashboard-card');
    assert.equal(await page.locator('#card-left').count(), 0, 'a selected agent is not said to have left');

    // A removed agent: its card view says it left the snapshot and why, and a timeout is a
    // failed refresh, not a refusal.
    const { endpoints } = await api<{ endpoints: Array<{ baseUrl: string; names: string[] }> }>('/api/endpoints');
    const warranty = endpoints.find((e) => e.names.some((n) => /warranty/i.test(n)));
    assert.ok(warranty, 'the warranty endpoint is listed');
    await page.selectOption('#card-endpoint', warranty.baseUrl);
    await until(() => text(page.locator('#card-left')), (t) => /^Not in the current snapshot \(removed, .*\): .*consecutive failed fetches/.test(t), 'the removed agent said to have left the snapshot');
    const refresh = await text(page.locator('.card-view .panel-bad'));
    assert.match(refresh, /^The last refresh failed \(fetch\): ERR_FETCH_TIMEOUT/);
    assert.doesNotMatch(refresh, /refused/);
  });

  test('chat: a new session, then the same session; each turn says who answered on which digest', async () => {
    await page.click('#nav-chat');
    await page.fill('#chat-message', 'I want to return my headphones');
    await page.click('.chat-form button[type=submit]');
    const turn = page.locator('li.turn').last();
    await until(() => text(turn.locator('.reply')), (t) => /Answered by/.test(t), 'the first answer', 15_000);
    assert.equal(await text(turn.locator('.author')), 'returns_agent');
    const current = await api<{ current: string; history: Array<{ version: number; digest: string }> }>('/api/snapshots');
    assert.equal(await text(turn.locator('.version')), `v${current.history.at(-1)!.version}`);
    assert.equal(await turn.locator('.digest').getAttribute('title'), current.current);
    assert.match(await text(turn.locator('.reply-text')), /Returns here/);
    assert.equal(await turn.locator('.notice').count(), 0, 'a matched request has no notice');
    const sessionId = await page.inputValue('#chat-session');
    assert.match(sessionId, /^s-/, 'the new session is selected for the next message');

    await page.fill('#chat-message', 'Is serial 123 under warranty?');
    await page.keyboard.press('Control+Enter');
    await until(() => page.locator('li.turn').count(), (n) => n === 2, 'a second turn');
    const second = page.locator('li.turn').last();
    await until(() => text(second.locator('.reply')), (t) => /Answered by/.test(t), 'the second answer', 15_000);
    assert.match(await text(second), new RegExp(`session ${sessionId}`));
    assert.equal(await text(second.locator('.author')), 'billing_agent', 'warranty was removed: the fallback answers');
    assert.match(await text(second.locator('.notice')), /no agent in snapshot v\d+ matched this request; answered by the default agent billing_agent/, 'and the chat says so');
    // A later turn's reply is about its own question, not the whole conversation so far.
    const reply = await text(second.locator('.reply-text'));
    assert.match(reply, /^Billing here\. About "Is serial 123 under warranty\?":/);
    assert.doesNotMatch(reply, /For context|said:|headphones/);
    await screenshot(page, 'dashboard-chat');
  });

  test('chat offers only sessions the page can continue, and a new session on a retained earlier snapshot', async () => {
    await page.click('#nav-chat');
    const options = await page.locator('#chat-session option').evaluateAll((os) => os.map((o) => ({ value: (o as unknown as { value: string }).value, label: o.textContent ?? '' })));
    assert.ok(!options.some((o) => /demo-/.test(o.value)), `the demo's own sessions are not offered: ${JSON.stringify(options)}`);
    const earlier = options.find((o) => /^New session on v2 \(retained\)$/.test(o.label));
    assert.ok(earlier, `a new session on v2 is offered: ${JSON.stringify(options)}`);
    const history = await api<{ history: Array<{ version: number; digest: string }> }>('/api/snapshots');
    const v2 = history.history.find((h) => h.version === 2)!;
    await page.selectOption('#chat-session', earlier.value);
    await page.fill('#chat-message', 'I want to return my headphones');
    await page.click('.chat-form button[type=submit]');
    const turn = page.locator('li.turn').last();
    await until(() => text(turn.locator('.reply')), (t) => /Answered by/.test(t), 'the answer on v2', 15_000);
    assert.equal(await text(turn.locator('.version')), 'v2', 'answered on the snapshot it started on');
    assert.equal(await turn.locator('.digest').getAttribute('title'), v2.digest);
    assert.match(await page.inputValue('#chat-session'), /^s-/, 'the new session is selected for the next message');
  });

  test('sessions: pinned sessions per digest, retained and evicted roots, ending a session', async () => {
    await page.click('#nav-sessions');
    await page.locator('table.sessions tr[data-session="demo-early"]').waitFor();
    assert.match(await text(page.locator('table.sessions tr[data-session="demo-early"]')), /v2/);
    assert.match(await text(page.locator('table.sessions tr[data-session="demo-late"]')), /v5/);
    assert.match(await text(page.locator('table.roots tr[data-version="2"]')), /demo-early.*retained.*tree built/);
    // One state per root: an evicted root says evicted, and nothing about a tree.
    assert.equal(await text(page.locator('table.roots tr[data-version="3"] td[data-root]')), 'evicted');
    assert.match(await text(page.locator('table.roots tr[data-version="5"]')), /current/);
    await screenshot(page, 'dashboard-sessions');

    const mine = page.locator('table.sessions tbody tr[data-session^="s-"]');
    assert.equal(await mine.count(), 2, 'the two chat sessions are pinned (one on v5, one started on v2)');
    await mine.first().getByRole('button', { name: /^End/ }).click();
    await until(() => mine.count(), (n) => n === 1, 'the ended session to disappear');
    assert.match(await text(page.locator('.status-line')), /ended/);

    // An upgrade's message gives versions, not digests. (demo-early belongs to the demo's own
    // caller, so the service's answer is stood in for: the digests of v2 and v5.)
    const snaps = await api<{ history: Array<{ version: number; digest: string }> }>('/api/snapshots');
    const digest = (v: number) => snaps.history.find((h) => h.version === v)!.digest;
    await page.route('**/api/sessions/demo-early/upgrade', (route) => route.fulfill({ json: { from: digest(2), to: digest(5), changed: true } }));
    try {
      await page.locator('table.sessions tr[data-session="demo-early"]').getByRole('button', { name: /^Upgrade/ }).click();
      await until(() => text(page.locator('.status-line')), (t) => /upgraded/.test(t), 'the upgrade message');
      assert.equal(await text(page.locator('.status-line')), 'Session demo-early upgraded from v2 to v5.');
    } finally {
      await page.unroute('**/api/sessions/demo-early/upgrade');
    }
  });

  test('keyboard: Tab reaches the nav with a visible focus ring; Enter on a link changes the view', async () => {
    await page.click('#nav-endpoints');
    await page.locator('#view-title', { hasText: 'Endpoints' }).waitFor();
    await page.focus('#nav-endpoints');
    await page.keyboard.press('Shift+Tab');
    const skip = await focused(page);
    assert.match(skip.text, /Skip to content/, 'the skip link comes before the nav');
    assert.notEqual(skip.outline, 'none');
    assert.ok(await page.locator('.skip-link').isVisible());

    await tabTo(page, 'nav-endpoints', 5);
    const link = await focused(page);
    assert.notEqual(link.outline, 'none', 'visible focus on the nav');
    assert.ok(link.outlineWidth >= 2, `focus ring ${link.outlineWidth}px`);
    await tabTo(page, 'nav-snapshots', 5);
    await page.keyboard.press('Enter');
    await until(() => page.evaluate('location.hash') as Promise<string>, (h) => h === '#/snapshots', 'the snapshots route');
    // Focus moves to the new view's heading (after the render), so a screen reader announces it.
    await until(() => focused(page), (f) => f.id === 'view-title' && f.text === 'Snapshots', 'focus on the Snapshots heading');

    // The main controls follow: the first one after the heading is reachable.
    await page.keyboard.press('Tab');
    const next = await focused(page);
    assert.ok(['button', 'select', 'input', 'a'].includes(next.tag), `a control after the heading, got ${next.tag}#${next.id}`);
    assert.notEqual(next.outline, 'none');

    // Back to the endpoints view and its filter, by keyboard.
    await page.focus('#nav-snapshots');
    // Back past Timeline, Sources and Search.
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    await page.keyboard.press('Shift+Tab');
    assert.equal((await focused(page)).id, 'nav-endpoints');
    await page.keyboard.press('Enter');
    await until(() => focused(page), (f) => f.id === 'view-title' && f.text === 'Endpoints', 'focus on the Endpoints heading');
    await tabTo(page, 'endpoint-filter', 10);
    await page.keyboard.type('billing');
    await until(() => page.locator('table.endpoints tbody tr[data-endpoint]').count(), (n) => n === 1, 'filtered by typing');
  });

  test('phone width (390 px): the navigation collapses behind Menu, nothing is wider than the screen, tables scroll inside their panel', async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const phoneProblems: string[] = [];
    phone.on('pageerror', (err) => phoneProblems.push(err.message));
    try {
      await phone.goto(`${demo.url}/#/endpoints`);
      await phone.locator('table.endpoints tbody tr[data-endpoint]').first().waitFor();
      assert.equal(await phone.locator('#nav-timeline').isVisible(), false, 'the navigation is collapsed');
      assert.equal(await phone.locator('#nav-toggle').getAttribute('aria-expanded'), 'false');
      for (const view of ['endpoints', 'timeline', 'snapshots', 'sessions', 'chat']) {
        await phone.click('#nav-toggle');
        assert.equal(await phone.locator('#nav-toggle').getAttribute('aria-expanded'), 'true');
        await phone.click(`#nav-${view}`);
        await until(() => phone.evaluate('location.hash') as Promise<string>, (h) => h === `#/${view}`, `the ${view} route`);
        assert.equal(await phone.locator(`#nav-${view}`).isVisible(), false, 'choosing a view collapses the navigation');
        await phone.waitForTimeout(150);
        const width = (await phone.evaluate('document.documentElement.scrollWidth')) as number;
        assert.ok(width <= 390, `#/${view} is ${width} px wide at 390 px`);
        const main = (await phone.evaluate("document.getElementById('main').getBoundingClientRect().width")) as number;
        assert.ok(main <= 390, `main is ${main} px`);
      }
      await phone.click('#nav-toggle');
      await phone.click('#nav-endpoints');
      const wrap = phone.locator('table.endpoints').locator('xpath=..');
      const scroll = await wrap.evaluate((w) => [w.scrollWidth, w.clientWidth]);
      assert.ok(scroll[0]! > scroll[1]!, 'the endpoints table scrolls inside its panel');
      await screenshot(phone, 'dashboard-phone');
      assert.deepEqual(phoneProblems, []);
    } finally {
      await phone.close();
    }
  });

  test('no script error, failed request or CSP violation on the way', () => {
    assert.deepEqual(problems, []);
  });
});
