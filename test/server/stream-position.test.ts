/**
 * Where a reader stands in the event stream: `/api/journal` says the stream position it was read
 * at (`streamSeq`), so a page can follow the stream from there; `hello` names this process
 * (`replica`); and a reader resuming with a position numbered by another process (`?replica=`)
 * is not replayed a position this process never had: it gets `hello` with `resumedFrom`.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startService } from '../../packages/service/src/index.js';
import type { RunningService } from '../../packages/service/src/index.js';
import { createLogger } from '../../packages/service/src/telemetry/logger.js';

let s: RunningService;
before(async () => {
  s = await startService({ port: 0, replica: { id: 'here' }, policy: { allow: [] }, vocabulary: [], needs: [], logger: createLogger({ level: 'silent' }) });
  for (let i = 0; i < 50; i++) s.events.emit({ type: 'card.result', endpoint: 'https://a.example', outcome: 'hit', failures: 0 });
});
after(() => s?.close());

/** The first frame of `/api/stream` with these inputs. */
async function firstFrame(query: string, lastEventId?: string): Promise<{ event: string; data: Record<string, unknown> }> {
  const controller = new AbortController();
  const res = await fetch(`${s.url}/api/stream${query}`, { headers: lastEventId === undefined ? {} : { 'last-event-id': lastEventId }, signal: controller.signal });
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  controller.abort();
  const frame = text.slice(0, text.indexOf('\n\n'));
  return { event: /^event: (.*)$/m.exec(frame)![1]!, data: JSON.parse(/^data: (.*)$/m.exec(frame)![1]!) as Record<string, unknown> };
}

test('the journal says the stream position it was read at, and hello names the process', async () => {
  const page = (await (await fetch(`${s.url}/api/journal`)).json()) as { streamSeq: number; replica: string };
  const newest = s.events.lastSeq;
  assert.equal(page.streamSeq, newest, 'the newest event emitted when the page was read');
  assert.equal(page.replica, 'here');
  const hello = await firstFrame('');
  assert.equal(hello.event, 'hello');
  assert.deepEqual({ replica: hello.data.replica, lastSeq: hello.data.lastSeq }, { replica: 'here', lastSeq: newest });
});

test('a resume from this process replays after the position; one from another process gets hello with resumedFrom', async () => {
  const at = s.events.lastSeq - 5;
  const own = await firstFrame('?replica=here', String(at));
  assert.notEqual(own.event, 'hello');
  assert.equal(own.data.seq, at + 1, 'replayed from the next event');
  const foreign = await firstFrame('?replica=elsewhere', String(at));
  assert.equal(foreign.event, 'hello', 'no replay of a foreign position');
  assert.equal(foreign.data.resumedFrom, 'elsewhere');
  assert.equal(foreign.data.replica, 'here');
});
