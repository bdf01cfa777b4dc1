/**
 * What a conversation's history costs a chat turn (`npm run bench:sessions`, issue 43): an ADK
 * `Runner` over an agent that answers at once (no model, no peer: the turn is the session service's
 * work and ADK's own), four turns a conversation, on
 * - `memory`: ADK's `InMemorySessionService` (the baseline: no durable history);
 * - `adk-sqlite` / `adk-postgres`: ADK 2.0's `DatabaseSessionService` (its ORM), as the service
 *   used it before issue 43;
 * - `ours-sqlite` / `ours-postgres`: `openAdkSessionService` today (plain SQL on ADK's tables),
 *   beside an open state store on the same database, through the store's gate, each turn's events
 *   held and written together when it ends (`batchAppends`), as `serve`'s session runner runs it;
 * - `ours-sqlite-each` / `ours-postgres-each`: the same with each event written as it is appended
 *   (an ADK `Runner` used directly).
 * Settings are interleaved round by round (order rotated), each on its own fresh database; per
 * round the median turn time of each, and its ratio to `memory` in the same round. PostgreSQL runs
 * when Debian's PostgreSQL is installed (a throwaway cluster, test/helpers/postgres.ts).
 *
 * Environment: BENCH_ROUNDS (5), BENCH_TURNS (400 per setting and round).
 * Writes bench/results/sessions.json.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BaseAgent, DatabaseSessionService, InMemorySessionService, Runner, createEvent } from '@google/adk';
import type { BaseSessionService, Event, InvocationContext } from '@google/adk';
import { SqliteDriver } from '@mikro-orm/sqlite';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';
import { openStateStore } from '../packages/store/src/open-state-store.js';
import { openAdkSessionService } from '../packages/store/src/adk-sessions.js';
import type { BatchedAppends } from '../packages/core/src/adk/index.js';
import type { TestPostgres } from '../test/helpers/postgres.js';
import { POSTGRES_SKIP, startPostgres } from '../test/helpers/postgres.js';
import { machineMeta, writeResults } from './lib/results.js';
import { fmt, fmtSummary, summarize, table } from './lib/stats.js';
import { envCount } from './lib/env.js';

const ROUNDS = envCount('BENCH_ROUNDS', 5, 100);
const TURNS = envCount('BENCH_TURNS', 400, 100_000);
const TURNS_PER_SESSION = 4;
const APP = 'bench-sessions';

/** Answers every message at once, with a state change, as a routed turn's agent would. */
class AnswerAgent extends BaseAgent {
  constructor() {
    super({ name: 'answer', description: 'answers at once' });
  }
  protected async *runAsyncImpl(ctx: InvocationContext): AsyncGenerator<Event, void, void> {
    yield createEvent({ invocationId: ctx.invocationId, author: this.name, content: { role: 'model', parts: [{ text: 'done' }] }, actions: { stateDelta: { turns: Number(ctx.session.state['turns'] ?? 0) + 1 }, artifactDelta: {}, requestedAuthConfigs: {}, requestedToolConfirmations: {} } });
  }
  // eslint-disable-next-line require-yield
  protected async *runLiveImpl(): AsyncGenerator<Event, void, void> {
    throw new Error('not live');
  }
}

interface Opened {
  service: BaseSessionService;
  close(): Promise<void>;
}
type Setting = { name: string; open: (round: number) => Promise<Opened>; batched?: boolean };

const dir = mkdtempSync(join(os.tmpdir(), 'a2ad-bench-sessions-'));
let pg: TestPostgres | undefined;

const adkClose = (s: DatabaseSessionService) => () => (s as unknown as { orm: { close(force: boolean): Promise<void> } }).orm.close(true);
const settings: Setting[] = [
  { name: 'memory', open: () => Promise.resolve({ service: new InMemorySessionService(), close: () => Promise.resolve() }) },
  {
    name: 'adk-sqlite',
    open: async (round) => {
      const s = new DatabaseSessionService({ driver: SqliteDriver, dbName: join(dir, `adk-${round}.sqlite`) });
      await s.init();
      return { service: s, close: adkClose(s) };
    },
  },
  ...[true, false].map(
    (batched): Setting => ({
      name: batched ? 'ours-sqlite' : 'ours-sqlite-each',
      batched,
      open: async (round) => {
        const spec = `sqlite:ours-${batched ? 'b' : 'e'}-${round}.sqlite`;
        const store = await openStateStore(spec, { dataDir: dir });
        const sessions = await openAdkSessionService(spec, { dataDir: dir, store });
        return { service: sessions.service, close: async () => (await sessions.close(), await store.close()) };
      },
    }),
  ),
];
if (POSTGRES_SKIP === undefined) {
  settings.push(
    {
      name: 'adk-postgres',
      open: async () => {
        const s = new DatabaseSessionService({ driver: PostgreSqlDriver, clientUrl: pg!.url, schema: pg!.schema() });
        await s.init();
        return { service: s, close: adkClose(s) };
      },
    },
    ...[true, false].map(
      (batched): Setting => ({
        name: batched ? 'ours-postgres' : 'ours-postgres-each',
        batched,
        open: async () => {
          const schema = pg!.schema();
          const store = await openStateStore(pg!.url, { schema });
          const sessions = await openAdkSessionService(pg!.url, { schema, store });
          return { service: sessions.service, close: async () => (await sessions.close(), await store.close()) };
        },
      }),
    ),
  );
}

/** The median turn time, ms, of `TURNS` turns in conversations of four. */
async function turns(service: BaseSessionService, round: number, batched: boolean): Promise<number> {
  const runner = new Runner({ appName: APP, agent: new AnswerAgent(), sessionService: service });
  const times: number[] = [];
  for (let i = 0; i < TURNS; i++) {
    const sessionId = `r${round}-s${Math.floor(i / TURNS_PER_SESSION)}`;
    if (i % TURNS_PER_SESSION === 0) await service.createSession({ appName: APP, userId: 'u', sessionId });
    const t = performance.now();
    const turn = async () => {
      for await (const e of runner.runAsync({ userId: 'u', sessionId, newMessage: { role: 'user', parts: [{ text: `turn ${i}` }] } })) {
        if (e.errorMessage) throw new Error(e.errorMessage);
      }
    };
    await (batched ? (service as unknown as BatchedAppends).batchAppends({ appName: APP, userId: 'u', sessionId }, turn) : turn());
    times.push(performance.now() - t);
  }
  return summarize(times).median;
}

const started = new Date();
const loadBefore = os.loadavg();
try {
  if (POSTGRES_SKIP === undefined) pg = await startPostgres();
  const perRound = new Map<string, number[]>(settings.map((s) => [s.name, []]));
  const ratios = new Map<string, number[]>(settings.map((s) => [s.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    const order = settings.map((_, i) => settings[(i + round) % settings.length]!);
    const medians = new Map<string, number>();
    for (const s of order) {
      const opened = await s.open(round);
      try {
        medians.set(s.name, await turns(opened.service, round, s.batched === true));
      } finally {
        await opened.close();
      }
    }
    for (const s of settings) {
      perRound.get(s.name)!.push(medians.get(s.name)!);
      ratios.get(s.name)!.push(medians.get(s.name)! / medians.get('memory')!);
    }
    process.stderr.write(`[bench:sessions] round ${round + 1}/${ROUNDS}: ${settings.map((s) => `${s.name} ${fmt(medians.get(s.name)!)} ms`).join(', ')}\n`);
  }
  console.log(`\nA chat turn's session-service work: ${ROUNDS} rounds × ${TURNS} turns per setting (conversations of ${TURNS_PER_SESSION}), ${os.cpus().length} CPUs, load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}${POSTGRES_SKIP === undefined ? '' : `; PostgreSQL skipped: ${POSTGRES_SKIP}`}\n`);
  console.log(
    table(
      ['setting', 'ms per turn, median of round medians [range]', '÷ memory, per round', '− memory, ms (median)'],
      settings.map((s) => {
        const ms = summarize(perRound.get(s.name)!);
        const extra = summarize(perRound.get(s.name)!.map((v, i) => v - perRound.get('memory')![i]!));
        return [s.name, fmtSummary(ms), fmtSummary(summarize(ratios.get(s.name)!)), s.name === 'memory' ? '–' : fmt(extra.median)];
      }),
    ),
  );
  const file = writeResults('sessions.json', { meta: machineMeta(started, loadBefore), rounds: ROUNDS, turns: TURNS, perRound: Object.fromEntries(perRound), ratios: Object.fromEntries(ratios) });
  console.log(`\nwrote ${file}`);
} finally {
  await pg?.close();
  rmSync(dir, { recursive: true, force: true });
}
