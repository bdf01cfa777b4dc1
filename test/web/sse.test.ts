/**
 * The dashboard's Server-Sent Events parser (packages/service/web/lib/sse.js), run under Node: the page reads
 * `/api/stream` with fetch so that it can send the bearer token.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

interface SseMessage {
  event: string;
  data: string;
  id?: string;
}
interface SseModule {
  sseParser(onMessage: (m: SseMessage) => void): { push(chunk: string): void; end(): void };
  readSse(body: ReadableStream<Uint8Array>, onMessage: (m: SseMessage) => void): Promise<void>;
}

const load = async (): Promise<SseModule> => (await import(new URL('../../packages/service/web/lib/sse.js', import.meta.url).href)) as SseModule;

test('messages split anywhere, CRLF and CR line ends, comments, multi-line data, ids', async () => {
  const { sseParser } = await load();
  const stream = ': comment\r\nevent: snapshot.published\r\nid: 7\r\ndata: {"a":\r\ndata: 1}\r\n\r\nevent: ping\ndata: {}\n\rdata:no space\r\r';
  for (const size of [1, 2, 3, 7, stream.length]) {
    const got: SseMessage[] = [];
    const p = sseParser((m) => got.push(m));
    for (let i = 0; i < stream.length; i += size) p.push(stream.slice(i, i + size));
    p.end();
    assert.deepEqual(
      got,
      [
        { event: 'snapshot.published', data: '{"a":\n1}', id: '7' },
        { event: 'ping', data: '{}', id: '7' },
        { event: 'message', data: 'no space', id: '7' },
      ],
      `chunks of ${size}`,
    );
  }
});

test('readSse reads a byte stream, multi-byte characters split across chunks included', async () => {
  const { readSse } = await load();
  const bytes = new TextEncoder().encode('event: alert\ndata: {"message":"café ✓"}\n\n');
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (let i = 0; i < bytes.length; i += 5) c.enqueue(bytes.slice(i, i + 5));
      c.close();
    },
  });
  const got: SseMessage[] = [];
  await readSse(body, (m) => got.push(m));
  assert.deepEqual(got, [{ event: 'alert', data: '{"message":"café ✓"}' }]);
});
