/**
 * Three `a2a-discovery serve` child processes on one real PostgreSQL, with loopback peers:
 * exactly one leads; a follower's dashboard (Chromium) shows the leader's endpoints and says whom
 * it follows; a mass expiry costs exactly one upstream request per card (counted at the
 * peers); a session started on one replica continues on another with the same digest, agent
 * names and history; SIGKILL of the leader hands leadership over and discovery continues (a card
 * change is published and every replica serves it); PostgreSQL stopped and started again loses no
 * pin and no published snapshot, while the replicas keep serving from memory, degraded.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startAdkPeer } from '../helpers/a2a-peers.js';
import { adkStyleCard } from '../helpers/cards.js';
import type { TestPostgres } from '../helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../helpers/postgres.js';
import type { ServeProcess } from '../helpers/serve-process.js';
import { startServe } from '../helpers/serve-process.js';
import { waitFor } from '../helpers/wait-for.js';
import { launchBrowser, openPage, text, until } from '../web/browser.js';

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  json(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

interface ReplicaInfo {
  id: string;
  role: 'leader' | 'follower';
  epoch: number;
  connected: boolean;
  digest: string | null;
  storeDigest: string | null;
  inSync: boolean;
}

const readyz = async (r: ServeProcess) => (await json(`${r.url}/readyz`)).body as { ready: boolean; degraded?: boolean; replica: ReplicaInfo; store: { ok: boolean } };

/**
 * A card peer that counts requests: its card is fresh for `firstMaxAge` seconds for its first
 * `shortLived` responses, then for an hour — so the cards fetched together expire together once
 * (a mass expiry), and are then left alone.
 */
interface CountingPeer {
  readonly baseUrl: string;
  readonly requests: number;
  readonly log: string[];
  setDescription(text: string): void;
  close(): Promise<void>;
}

async function startCountingPeer(name: string, tag: string, o: { shortLived: number; firstMaxAge: number }): Promise<CountingPeer> {
  let requests = 0;
  const log: string[] = [];
  let port = 0;
  let description = `${name} agent.`;
  const server: Server = createServer((req, res) => {
    if (req.url !== '/.well-known/agent-card.json') {
      res.writeHead(404).end();
      return;
    }
    requests++;
    log.push(`${Date.now() % 100_000} ${req.headers['if-none-match'] ? 'conditional' : 'full'} ${String(req.headers['user-agent'] ?? '')}`);
    const card = { ...adkStyleCard(port, name, [{ id: tag, tags: [tag] }]), description };
    const body = JSON.stringify(card);
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 24)}"`;
    const maxAge = requests <= o.shortLived ? o.firstMaxAge : 3_600;
    const headers = { 'cache-control': `max-age=${maxAge}`, etag };
    if (req.headers['if-none-match'] === etag) res.writeHead(304, headers).end();
    else res.writeHead(200, { ...headers, 'content-type': 'application/json' }).end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/`,
    get requests() {
      return requests;
    },
    log,
    setDescription(text) {
      description = text;
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

interface PgClient {
  connect(): Promise<void>;
  query(sql: string, params?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  end(): Promise<void>;
}
const { Client } = createRequire(import.meta.url)('pg') as { Client: new (c: Record<string, unknown>) => PgClient };

describe('three replicas on one PostgreSQL (child processes)', { skip: POSTGRES_SKIP }, () => {
  let pg: TestPostgres;
  let dir: string;
  let configFile: string;
  let billing: RunningPeer;
  const counted: CountingPeer[] = [];
  let changing: CountingPeer;
  const replicas: ServeProcess[] = [];
  const alive = () => replicas.filter((r) => r.running);
  const sql = async (text: string, params: unknown[] = []) => {
    const c = new Client({ host: '127.0.0.1', port: pg.port, user: 'a2a', database: 'postgres' });
    await c.connect();
    try {
      return (await c.query(text, params)).rows;
    } finally {
      await c.end();
    }
  };

  before(async () => {
    pg = await startPostgres();
    dir = await mkdtemp(join(tmpdir(), 'replicas-'));
    billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing: charged once', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
    // Four cards fetched together, expiring together two seconds later: one mass expiry.
    for (const tag of ['shipping', 'returns', 'warranty', 'tax']) counted.push(await startCountingPeer(tag, tag, { shortLived: 1, firstMaxAge: 2 }));
    // A card that stays short-lived: the one that changes after the takeover.
    changing = await startCountingPeer('weather', 'weather', { shortLived: Number.MAX_SAFE_INTEGER, firstMaxAge: 1 });
    const peers = [billing.baseUrl, ...counted.map((p) => p.baseUrl), changing.baseUrl];
    const tags = ['billing', 'shipping', 'returns', 'warranty', 'tax', 'weather'];
    configFile = join(dir, 'discovery.yaml');
    const keyFile = join(dir, 'replica.key');
    await writeFile(keyFile, 'three-replicas-share-this-key-0123456789\n', { mode: 0o600 });
    await writeFile(
      configFile,
      stringify({
        allow: peers.map((u) => new URL(u).origin),
        allowLoopback: true,
        vocabulary: tags.map((tag) => ({ tag, description: `${tag} questions.`, keywords: tag === 'billing' ? ['invoice'] : [tag] })),
        needs: tags.map((tag) => ({ tag })),
        static: [
          { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
          ...counted.map((p, i) => ({ name: `${tags[i + 1]}_agent`, url: p.baseUrl, description: `Answers ${tags[i + 1]} questions.`, tags: [tags[i + 1]] })),
          { name: 'weather_agent', url: changing.baseUrl, description: 'Answers weather questions.', tags: ['weather'] },
        ],
        cache: { minTtlMs: 0 },
        loop: { cycleIntervalMs: 200 },
        store: pg.url,
        // The replicas' shared key: a follower asks the leader's lists with it (docs/deployment.md "Replica key").
        replica: { leaderRetryMs: 200, pollMs: 500, leaseMs: 3_000, keyFile: keyFile },
      }),
    );
    // One after another: the first takes the lock and discovers; the others follow.
    for (let i = 0; i < 3; i++) replicas.push(await startServe({ config: configFile }));
  });

  after(async () => {
    await Promise.all(replicas.map((r) => r.stop()));
    await Promise.all([billing.close(), changing.close(), ...counted.map((p) => p.close())]);
    await pg.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('exactly one replica leads; every replica serves the same snapshot', async () => {
    const infos = await waitFor(async () => {
      const all = await Promise.all(replicas.map(readyz));
      return all.every((r) => r.ready && r.replica.inSync && r.replica.digest !== null) ? all : undefined;
    }, 'three ready replicas in sync');
    assert.deepEqual(infos.map((r) => r.replica.role).sort(), ['follower', 'follower', 'leader']);
    assert.equal(new Set(infos.map((r) => r.replica.digest)).size, 1, 'one digest everywhere');
    assert.equal(new Set(infos.map((r) => r.replica.epoch)).size, 1, 'one epoch everywhere');
    const metrics = await (await fetch(`${replicas[0]!.url}/metrics`)).text();
    assert.match(metrics, /a2a_discovery_replica_leader [01]/);
    assert.match(metrics, /a2a_discovery_replica_in_sync 1/);
  });

  test('a follower serve process shows the leader\'s endpoints on its dashboard and says whom it follows', async () => {
    const infos = await Promise.all(replicas.map(readyz));
    const leader = replicas[infos.findIndex((r) => r.replica.role === 'leader')]!;
    const follower = replicas[infos.findIndex((r) => r.replica.role === 'follower')]!;
    const leaderId = infos.find((r) => r.replica.role === 'leader')!.replica.id;
    const own = (await json(`${leader.url}/api/endpoints`)).body.endpoints as Array<{ baseUrl: string }>;
    const viaFollower = (await json(`${follower.url}/api/endpoints`)).body;
    assert.equal(viaFollower.servedBy, leaderId, 'the follower answers with the leader\'s list');
    assert.deepEqual((viaFollower.endpoints as Array<{ baseUrl: string }>).map((e) => e.baseUrl).sort(), own.map((e) => e.baseUrl).sort());
    const browser = await launchBrowser();
    try {
      const { page, problems } = await openPage(browser);
      await page.goto(`${follower.url}/#/endpoints`);
      await until(() => page.locator('table.endpoints tbody tr[data-endpoint]').count(), (n) => n === own.length, 'the leader\'s endpoints on the follower\'s page');
      assert.match(await text(page.locator('#replica-role')), new RegExp(`^Follower of ${leaderId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} · epoch \\d+`));
      assert.deepEqual(problems, []);
    } finally {
      await browser.close();
    }
  });

  test('a mass expiry costs exactly one upstream request per card; followers request nothing', async () => {
    // Each card: its first fetch (fresh for 2 s), then one revalidation when they all expire.
    await waitFor(async () => (counted.every((p) => p.requests >= 2) ? true : undefined), 'the mass expiry');
    // Let every replica run (the leader a cycle, followers nothing) before counting.
    for (const r of replicas) await post(`${r.url}/api/refresh`, {});
    assert.deepEqual(
      counted.map((p) => p.requests),
      [2, 2, 2, 2],
      `one request per card at first, one per card at the expiry — not one per replica: ${JSON.stringify(counted.map((p) => p.log))}`,
    );
    const fetchesBy = await Promise.all(
      replicas.map(async (r) => ((await json(`${r.url}/api/events?since=0`)).body.events as Array<{ type: string }>).filter((e) => e.type === 'card.fetch').length),
    );
    const roles = await Promise.all(replicas.map(async (r) => (await readyz(r)).replica.role));
    assert.deepEqual(
      fetchesBy.filter((_, i) => roles[i] === 'follower'),
      [0, 0],
      'followers never fetch a card',
    );
  });

  let sessionId: string;
  let secret: string;
  let digest: string;
  test('a session started on one replica continues on another with the same digest, agent names and history', async () => {
    const [a, b] = replicas;
    const t1 = (await post(`${a!.url}/api/chat`, { message: 'Explain my invoice' })).body;
    assert.equal(t1.author, 'billing_agent', JSON.stringify(t1));
    sessionId = t1.sessionId as string;
    secret = t1.sessionSecret as string;
    digest = t1.digest as string;
    // The pin reaches the database in the background.
    await waitFor(async () => ((await sql('SELECT digest FROM a2ad_pins WHERE session_id = $1', [sessionId])).length === 1 ? true : undefined), 'the pin stored');

    assert.equal((await post(`${b!.url}/api/chat`, { sessionId, message: 'and the invoice?' })).status, 403, 'another caller cannot continue it on any replica');
    const t2 = (await post(`${b!.url}/api/chat`, { sessionId, message: 'Another invoice question' }, { 'x-session-secret': secret })).body;
    assert.deepEqual([t2.author, t2.digest, t2.agents, t2.notices], ['billing_agent', digest, ['billing_agent'], []], JSON.stringify(t2));

    const rows = await sql('SELECT event_data FROM events WHERE session_id = $1 ORDER BY timestamp', [sessionId]);
    const said = rows
      .map((r) => (typeof r.event_data === 'string' ? JSON.parse(r.event_data) : r.event_data) as { author: string; content?: { parts?: Array<{ text?: string }> } })
      .filter((e) => e.author === 'user')
      .map((e) => e.content?.parts?.[0]?.text);
    assert.deepEqual(said, ['Explain my invoice', 'Another invoice question'], 'one history, both turns');
  });

  test('SIGKILL of the leader: another replica takes over and discovery continues on every replica', async () => {
    const infos = await Promise.all(replicas.map(readyz));
    const leaderIndex = infos.findIndex((r) => r.replica.role === 'leader');
    const leader = replicas[leaderIndex]!;
    const oldEpoch = infos[leaderIndex]!.replica.epoch;
    leader.signal('SIGKILL');
    await leader.exit;

    const rest = alive();
    assert.equal(rest.length, 2);
    const after = await waitFor(async () => {
      const all = await Promise.all(rest.map(readyz));
      return all.filter((r) => r.replica.role === 'leader').length === 1 ? all : undefined;
    }, 'a new leader');
    assert.ok(after.every((r) => r.replica.epoch > oldEpoch || r.replica.role === 'follower'));
    assert.ok(after.find((r) => r.replica.role === 'leader')!.replica.epoch > oldEpoch, 'the takeover moved the fencing epoch');

    // A card changes: the new leader refreshes it and publishes, and every replica serves it.
    const before = after[0]!.replica.storeDigest;
    changing.setDescription('Weather and forecasts, now with radar.');
    const published = await waitFor(async () => {
      const all = await Promise.all(rest.map(readyz));
      const d = all[0]!.replica.storeDigest;
      return d !== before && all.every((r) => r.replica.digest === d) ? d : undefined;
    }, 'the change published and served by both replicas').catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}: ${JSON.stringify(await Promise.all(rest.map(readyz)))} ${changing.log.slice(-5).join('; ')}\n${rest.map((r) => r.output().slice(-3000)).join('\n---\n')}`);
    });
    for (const r of rest) {
      const snap = (await json(`${r.url}/api/snapshot`)).body as { digest: string; agents: Array<{ localName: string; card: { description?: string } }> };
      assert.equal(snap.digest, published);
      assert.equal(snap.agents.find((a) => a.localName === 'weather_agent')?.card.description, 'Weather and forecasts, now with radar.');
    }
    // The session started before still continues, on either survivor, on its digest.
    const t3 = (await post(`${rest[1]!.url}/api/chat`, { sessionId, message: 'One more invoice' }, { 'x-session-secret': secret })).body;
    assert.deepEqual([t3.author, t3.digest], ['billing_agent', digest]);
  });

  test('PostgreSQL stopped and started again: replicas serve from memory, degraded; nothing published or pinned is lost', async () => {
    const rest = alive();
    // The leader may publish at the very moment PostgreSQL stops (its write then fails and it
    // serves that snapshot from memory, the followers the one before): what must hold is that no
    // replica goes back to an older snapshot, or stops serving one, and nothing stored is lost.
    const before = (await json(`${rest[0]!.url}/api/snapshot`)).body as { digest: string; version: number };
    const pinsBefore = await sql('SELECT session_id, digest FROM a2ad_pins ORDER BY session_id');
    const snapshotsBefore = await sql('SELECT digest FROM a2ad_snapshots ORDER BY digest');
    await pg.stop();
    try {
      for (const r of rest) {
        const info = await waitFor(async () => {
          const body = await readyz(r);
          return body.degraded === true ? body : undefined;
        }, 'degraded');
        assert.equal(info.ready, true, 'still ready: serving from memory');
        assert.equal(info.replica.connected, false);
        const now = (await json(`${r.url}/api/snapshot`)).body as { digest: string; version: number };
        if (now.digest !== before.digest && !(now.version > before.version)) {
          const all = await Promise.all(rest.map(async (x) => ({ url: x.url, readyz: await readyz(x) })));
          assert.fail(`${r.url} serves version ${now.version} ${now.digest}, older than ${before.version} ${before.digest}: ${JSON.stringify(all)}\n${rest.map((x) => x.output().slice(-4000)).join('\n---\n')}`);
        }
      }
      // Pinned trees stay in memory on the replicas that serve them (a turn needs the history, in the database).
      const holder = await waitFor(async () => {
        for (const r of rest) {
          const list = (await json(`${r.url}/api/sessions`, { headers: { 'x-session-secret': secret } })).body.sessions as Array<{ sessionId: string; digest: string }>;
          if (list.some((x) => x.sessionId === sessionId)) return list;
        }
        return undefined;
      }, 'the pinned session');
      assert.equal(holder.find((x) => x.sessionId === sessionId)?.digest, digest, 'its pinned tree is kept');
    } finally {
      await pg.start();
    }
    // PostgreSQL restarting, every replica's pool reconnecting and a lease running out, on a
    // machine running the whole suite: a longer bound than a poll's.
    const infos = await waitFor(async () => {
      const all = await Promise.all(rest.map(readyz));
      return all.every((r) => r.replica.connected && r.degraded !== true) && all.filter((r) => r.replica.role === 'leader').length === 1 ? all : undefined;
    }, 'reconnected, one leader', 90_000).catch(async (err: unknown) => {
      throw new Error(`${(err as Error).message}: ${JSON.stringify(await Promise.all(rest.map(readyz)))}\n${rest.map((r) => r.output().slice(-4000)).join('\n---\n')}`);
    });
    assert.equal(infos.filter((r) => r.replica.role === 'leader').length, 1);
    const pinsAfter = await sql('SELECT session_id, digest FROM a2ad_pins ORDER BY session_id');
    assert.deepEqual(pinsAfter, pinsBefore, 'every pin kept');
    const snapshotsAfter = new Set((await sql('SELECT digest FROM a2ad_snapshots')).map((r) => r.digest as string));
    for (const s of snapshotsBefore) assert.ok(snapshotsAfter.has(s.digest as string), `snapshot ${String(s.digest)} kept`);
    const pointer = await sql("SELECT value FROM a2ad_state WHERE key = 'current'");
    const current = JSON.parse(pointer[0]!.value as string) as { digest: string; version: number };
    assert.ok(current.digest === before.digest || current.version > before.version, `the current snapshot is ${before.version} or a later one, not ${current.version}`);
    assert.ok(snapshotsAfter.has(current.digest), 'the current snapshot is stored');
  });
});
