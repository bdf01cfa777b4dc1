/**
 * The leniencies on the response path of a remote agent's calls (lenient-response.ts, applied by
 * agent-fetch.ts), against a real loopback server replaying VoltAgent's recorded answers
 * (test/interop/recorded/, VoltAgent 2.10.0 / @voltagent/a2a-server 2.0.3) through the real
 * policy fetch: a kind-less Task is read as a Task, U+001E before an event's data is stripped,
 * the stream stays a stream (line by line, whatever the chunking), the policy fetch's byte cap
 * still holds, and each repair is told once per agent as a turn notice.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDiscoveryError } from '../../../packages/core/src/errors.js';
import { HostPolicy } from '../../../packages/core/src/fetch/index.js';
import { createPolicyFetch } from '../../../packages/core/src/adk/remote/index.js';
import type { PolicyFetch } from '../../../packages/core/src/adk/remote/index.js';
import { agentFetch } from '../../../packages/core/src/adk/remote/agent-fetch.js';
import { withTurn } from '../../../packages/core/src/adk/remote/turn-signal.js';

const recorded = (name: string): Buffer => readFileSync(new URL(`../../interop/recorded/${name}`, import.meta.url));
const SEND = recorded('voltagent-2.10.0.message-send.json');
const STREAM = recorded('voltagent-2.10.0.message-stream.sse');

/** What the server answers on `POST /<path>`: a body written in the given pieces, or held open. */
type Script = { type: string; pieces: Buffer[]; hold?: Promise<void> };
let script: Script;
let server: http.Server;
let origin: string;
let policyFetch: PolicyFetch;

before(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      void (async () => {
        res.writeHead(200, { 'content-type': script.type });
        for (const [i, piece] of script.pieces.entries()) {
          res.write(piece);
          if (i === 0 && script.hold !== undefined) await script.hold;
        }
        res.end();
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  policyFetch = createPolicyFetch({ policy: HostPolicy.from({ allow: [origin], allowLoopback: true }) });
});
after(async () => {
  await policyFetch.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function fetchAs(version: string, base: typeof fetch = policyFetch): typeof fetch {
  return agentFetch(base, { name: 'volt_support', version, origin });
}

const post = (f: typeof fetch): Promise<Response> => f(`${origin}/a2a/support`, { method: 'POST', body: '{}' });

/** Splits `bytes` every `size` bytes (so pieces cut lines, CRLF pairs and UTF-8 sequences). */
function pieces(bytes: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

function dataLines(text: string): Array<Record<string, unknown>> {
  return text
    .split(/\r\n|\n|\r/)
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)) as Record<string, unknown>);
}

describe('a kind-less Task (VoltAgent message/send)', () => {
  test('A2A 0.3: read as a Task (kind "task"), everything else as sent', async () => {
    script = { type: 'application/json', pieces: [SEND] };
    const body = (await (await post(fetchAs('0.3'))).json()) as { id: number; result: Record<string, unknown> };
    const sent = JSON.parse(SEND.toString()) as { result: Record<string, unknown> };
    assert.equal(body.result.kind, 'task');
    assert.deepEqual({ ...body.result, kind: undefined }, { ...sent.result, kind: undefined });
    assert.equal(body.id, 1);
  });

  test('A2A 1.x (a result has no kind there), a Message, a Task that says its kind, or no JSON: untouched', async () => {
    script = { type: 'application/json', pieces: [SEND] };
    assert.deepEqual(await (await post(fetchAs('1.0'))).text(), SEND.toString());
    const untouched = [
      { jsonrpc: '2.0', id: 1, result: { kind: 'message', messageId: 'm', role: 'agent', parts: [] } },
      { jsonrpc: '2.0', id: 1, result: { messageId: 'm', role: 'agent', parts: [] } },
      { jsonrpc: '2.0', id: 1, result: { kind: 'task', id: 't', contextId: 'c', status: { state: 'completed' } } },
      { jsonrpc: '2.0', id: 1, result: { id: 't', status: 'completed' } },
      { jsonrpc: '2.0', id: 1, error: { code: -32600, message: 'no' } },
    ].map((b) => JSON.stringify(b));
    for (const text of [...untouched, 'not json {']) {
      script = { type: 'application/json', pieces: [Buffer.from(text)] };
      assert.equal(await (await post(fetchAs('0.3'))).text(), text);
    }
  });

  test("the policy fetch's byte cap still holds (no second cap)", async () => {
    const small = createPolicyFetch({ policy: HostPolicy.from({ allow: [origin], allowLoopback: true }), maxResponseBytes: 200 });
    try {
      script = { type: 'application/json', pieces: [SEND] };
      await assert.rejects(post(fetchAs('0.3', small)).then((r) => r.text()), (e: unknown) => isDiscoveryError(e) && e.code === 'ERR_BODY_TOO_LARGE');
    } finally {
      await small.close();
    }
  });
});

describe('U+001E before an event stream\'s data (VoltAgent message/stream)', () => {
  test('stripped from every data line, and each kind-less Task event read as a Task, whatever the chunking', async () => {
    const expected = STREAM.toString()
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => ({ kind: 'task', ...(JSON.parse(l.slice('data: \u001e'.length)) as { result: object }).result }));
    const crlf = Buffer.from(STREAM.toString().replace(/\n/g, '\r\n'));
    // A multi-byte character split across pieces, and an event in another shape, pass as sent.
    const extra = Buffer.from('event: note\r\ndata: {"jsonrpc":"2.0","id":2,"result":{"kind":"status-update","taskId":"t","contextId":"c","status":{"state":"working"},"final":false,"metadata":{"x":"é…"}}}\r\n\r\n');
    for (const [bytes, size] of [[STREAM, 7], [STREAM, 4096], [Buffer.concat([crlf, extra]), 3], [Buffer.concat([crlf, extra]), 1]] as const) {
      script = { type: 'text/event-stream', pieces: pieces(bytes, size) };
      const text = await (await post(fetchAs('0.3'))).text();
      const events = dataLines(text).map((e) => e.result);
      assert.deepEqual(events.slice(0, 5), expected);
      assert.ok(!text.includes('\u001e'));
      if (bytes !== STREAM) {
        assert.equal(events.length, 6);
        assert.deepEqual((events[5] as { metadata: unknown }).metadata, { x: 'é…' });
        assert.ok(text.includes('event: note\r\n') && text.endsWith('\r\n\r\n'), 'other lines and line endings as sent');
      }
    }
  });

  test('A2A 1.x: the character is stripped, no kind added', async () => {
    script = { type: 'text/event-stream', pieces: [STREAM] };
    const events = dataLines(await (await post(fetchAs('1.0'))).text());
    assert.equal(events.length, 5);
    assert.ok(events.every((e) => (e.result as { kind?: string }).kind === undefined));
  });

  test('a stream stays a stream: the first event is read while the peer still holds the rest', { timeout: 30_000 }, async () => {
    let release!: () => void;
    const hold = new Promise<void>((resolve) => (release = resolve));
    const [first, ...rest] = STREAM.toString().split(/(?<=\n\n)/);
    script = { type: 'text/event-stream', pieces: [Buffer.from(first!), Buffer.from(rest.join(''))], hold };
    const reader = (await post(fetchAs('0.3'))).body!.getReader();
    const { value } = await reader.read();
    const text = new TextDecoder().decode(value);
    assert.equal(dataLines(text).length, 1, 'the first event, before the peer sends more');
    release();
    for (;;) if ((await reader.read()).done) break;
  });

  test("the policy fetch's byte cap still ends a stream that is too long", async () => {
    const small = createPolicyFetch({ policy: HostPolicy.from({ allow: [origin], allowLoopback: true }), maxResponseBytes: 2000 });
    try {
      script = { type: 'text/event-stream', pieces: pieces(STREAM, 500) };
      await assert.rejects(post(fetchAs('0.3', small)).then((r) => r.text()), (e: unknown) => isDiscoveryError(e) && e.code === 'ERR_BODY_TOO_LARGE');
    } finally {
      await small.close();
    }
  });
});

describe('warnings at their path: the turn notices, once per agent and repair', () => {
  test('the first turn that meets a repair is told, the next is not; a call outside a turn tells no one and uses nothing up', async () => {
    const f = fetchAs('0.3');
    script = { type: 'application/json', pieces: [SEND] };
    await (await post(f)).text(); // outside a turn
    const turn = async (type: string, body: Buffer): Promise<string[]> => {
      const notices: string[] = [];
      script = { type, pieces: [body] };
      await withTurn({ notice: (t) => notices.push(t) }, async () => (await post(f)).text());
      return notices;
    };
    assert.deepEqual(await turn('application/json', SEND), ['volt_support answered a Task without "kind" (result.kind, required by A2A 0.3); it was read as a Task']);
    assert.deepEqual(await turn('application/json', SEND), []);
    assert.deepEqual(await turn('text/event-stream', STREAM), ["volt_support's event stream starts each data line with U+001E; the character was stripped"]);
    assert.deepEqual(await turn('text/event-stream', STREAM), []);
    // Another agent (its own agent fetch) is told anew.
    const notices: string[] = [];
    script = { type: 'application/json', pieces: [SEND] };
    await withTurn({ notice: (t) => notices.push(t) }, async () => (await post(agentFetch(policyFetch, { name: 'other', version: '0.3', origin }))).text());
    assert.equal(notices.length, 1);
    assert.match(notices[0]!, /^other answered a Task without "kind"/);
  });
});
