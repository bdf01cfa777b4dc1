/**
 * The chat commands a newcomer copies: the README's chat block and the demo's printed chat hint,
 * each run exactly as written (only the port changed to a running service's) twice in a row. A
 * session belongs to whoever started it, so a command that names a fixed session works once and
 * answers 403 the second time; these must answer every time, and the README's must continue its
 * session with the secret the first answer returned.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { chatLine } from '../../packages/service/src/demo/narration.js';
import { startService, type RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';
import { startAdkPeer, type RunningPeer } from '../helpers/a2a-peers.js';
import { startV1Server, type RunningV1Server } from '../helpers/a2a-v1-server.js';
import { adkStyleCard } from '../helpers/cards.js';

const run = promisify(execFile);
const root = new URL('../../', import.meta.url).pathname;
/** The port the README and the demo use. */
const DEMO_HOST = '127.0.0.1:7340';

let billing: RunningPeer;
let warranty: RunningV1Server;
let service: RunningService;

// A service over two real peers that answer: the question the commands ask goes to the warranty agent.
before(async () => {
  billing = await startAdkPeer({ name: 'billing', description: 'Billing.', reply: 'billing here', card: (port) => adkStyleCard(port, 'Billing Agent', [{ id: 'invoices', tags: ['billing'] }]) });
  warranty = await startV1Server();
  service = await startService({
    port: 0,
    policy: { allow: [billing.baseUrl, warranty.baseUrl].map((u) => new URL(u).origin), allowLoopback: true },
    vocabulary: [
      { tag: 'billing', description: 'Invoices and payments.', keywords: ['invoice'] },
      { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty', 'serial'] },
    ],
    needs: [{ tag: 'billing' }, { tag: 'warranty' }],
    static: [
      { name: 'billing_agent', url: billing.baseUrl, description: 'Answers invoice questions.', tags: ['billing'] },
      { name: 'warranty_agent', cardUrl: warranty.cardUrl, description: 'Answers warranty questions.', tags: ['warranty'] },
    ],
    loop: { cycleIntervalMs: 600_000 },
    logger: createLogger({ level: 'silent' }),
  });
});

after(async () => {
  await service?.close();
  await Promise.all([billing?.close(), warranty?.close()]);
});

/** The README's ```sh block that calls /api/chat. */
function readmeChatBlock(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  const chat = blocks.filter((b) => b.includes('/api/chat'));
  assert.equal(chat.length, 1, `the README has ${chat.length} sh blocks that call /api/chat`);
  return chat[0]!;
}

/** Runs `script` with sh against the running service; node on PATH, as for a user of this repository. */
async function sh(script: string): Promise<Array<Record<string, unknown>>> {
  const host = new URL(service.url).host;
  assert.ok(script.includes(DEMO_HOST), `the command does not call ${DEMO_HOST}:\n${script}`);
  const { stdout } = await run('sh', ['-c', script.replaceAll(DEMO_HOST, host)], {
    cwd: root,
    timeout: 60_000,
    env: { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` },
  });
  return stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

test("the README's chat commands start a session and continue it with its secret, and work again when run a second time", async () => {
  const block = readmeChatBlock();
  const sessions = new Set<unknown>();
  for (let i = 0; i < 2; i++) {
    const [first, second, ...more] = await sh(block);
    assert.deepEqual(more, []);
    for (const answer of [first!, second!]) {
      assert.equal(answer.error, null, JSON.stringify(answer));
      assert.equal(answer.author, 'warranty_agent', JSON.stringify(answer));
    }
    assert.equal(typeof first!.sessionSecret, 'string', 'the first turn returns the session secret');
    assert.equal(second!.sessionId, first!.sessionId, 'the second turn continues the same session');
    assert.equal(second!.sessionSecret, undefined);
    sessions.add(first!.sessionId);
  }
  assert.equal(sessions.size, 2, 'each run starts a session of its own');
});

test("the demo's printed chat hint answers every time it is run", async () => {
  const line = chatLine(`http://${DEMO_HOST}`);
  assert.ok(readFileSync(join(root, 'README.md'), 'utf8').includes(`\n${line}\n`), "the README's copy of the demo output has another chat hint");
  const hint = line.trim();
  assert.match(hint, /^chat\s+curl /);
  const command = hint.replace(/^chat\s+/, '');
  const ids = new Set<unknown>();
  for (let i = 0; i < 2; i++) {
    const [answer, ...more] = await sh(command);
    assert.deepEqual(more, []);
    assert.equal(answer!.error, null, JSON.stringify(answer));
    assert.match(String(answer!.reply), /^warranty: Is serial 123 under warranty\?/, JSON.stringify(answer));
    ids.add(answer!.sessionId);
  }
  assert.equal(ids.size, 2);
});
