/**
 * The graceful drain of `a2a-discovery serve` (a child process, as a user runs it) against a real
 * A2A peer whose answer the test holds back: SIGTERM during a chat turn lets the turn finish with
 * its reply, while `/readyz` is unready, a new turn is refused with 503 and `Retry-After`, an
 * event-stream reader is told to reconnect, and the process exits 0; a turn that outlasts
 * `server.drainTimeoutMs` is aborted and says so; a second SIGTERM stops at once.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import type { GatedPeer } from '../helpers/gated-peer.js';
import { startGatedPeer } from '../helpers/gated-peer.js';
import { startServe } from '../helpers/serve-process.js';
import { waitFor } from '../helpers/wait-for.js';

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(url, init);
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

const chat = (url: string, message: string) => json(`${url}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message }) });

/** Reads an event stream to its end (the server closes it); resolves with everything it said. */
async function readStream(url: string, opened: () => void): Promise<string> {
  const res = await fetch(`${url}/api/stream`);
  assert.equal(res.status, 200);
  opened();
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += decoder.decode(chunk, { stream: true });
  return text;
}

describe('serve drains on SIGTERM (child process)', () => {
  let dir: string;
  let peer: GatedPeer;

  const config = async (name: string, drainTimeoutMs: number): Promise<string> => {
    const baseUrl = peer.baseUrl;
    const file = join(dir, name);
    await writeFile(
      file,
      stringify({
        allow: [new URL(baseUrl).origin],
        allowLoopback: true,
        vocabulary: [{ tag: 'billing', description: 'billing questions.', keywords: ['invoice'] }],
        needs: [{ tag: 'billing' }],
        static: [{ name: 'billing_agent', url: baseUrl, description: 'Answers invoice questions.', tags: ['billing'] }],
        server: { drainTimeoutMs },
      }),
    );
    return file;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'drain-'));
    peer = await startGatedPeer('billing: your invoice is paid');
  });

  after(async () => {
    await peer.close();
    await rm(dir, { recursive: true, force: true });
  });

  test('SIGTERM during a slow turn: it finishes with its reply, new turns get 503 + Retry-After, /readyz is unready, SSE readers are told to reconnect, exit 0', async () => {
    peer.reset();
    const s = await startServe({ config: await config('slow.yaml', 20_000), logLevel: 'info' });
    try {
      await waitFor(async () => ((await json(`${s.url}/readyz`)).body.ready === true ? true : undefined), 'the service ready');
      let opened!: () => void;
      const streamOpen = new Promise<void>((r) => (opened = r));
      const stream = readStream(s.url, opened);
      await streamOpen;
      const turn = chat(s.url, 'Explain my invoice');
      await peer.entered();

      s.signal('SIGTERM');
      const readyz = await waitFor(async () => {
        const r = await json(`${s.url}/readyz`);
        return r.status === 503 ? r : undefined;
      }, '/readyz unready');
      assert.equal(readyz.body.draining, true, JSON.stringify(readyz.body));
      assert.equal(readyz.body.ready, false);
      assert.match(await (await fetch(`${s.url}/metrics`)).text(), /^a2a_discovery_draining 1$/m);

      const refused = await chat(s.url, 'Another invoice question');
      assert.equal(refused.status, 503, JSON.stringify(refused.body));
      assert.equal(refused.body.error, 'draining');
      assert.match(String(refused.body.message), /shutting down/);
      assert.ok(Number(refused.headers.get('retry-after')) > 0, 'Retry-After says when to send it again');

      const told = await stream;
      assert.match(told, /^retry: \d+$/m, 'an SSE reconnection hint');
      assert.match(told, /^event: draining$/m);

      peer.open();
      const done = await turn;
      assert.equal(done.status, 200, JSON.stringify(done.body));
      assert.equal(done.body.reply, 'billing: your invoice is paid');
      assert.equal(done.body.author, 'billing_agent');
      assert.deepEqual(await s.exit, { code: 0, signal: null }, s.output());
      assert.match(s.output(), /draining: \/readyz reports unready/);
      assert.match(s.output(), /draining: event streams told to reconnect elsewhere/);
    } finally {
      s.signal('SIGKILL');
    }
  });

  test('a turn that outlasts server.drainTimeoutMs is aborted and says so; the process still exits 0', async () => {
    peer.reset();
    const s = await startServe({ config: await config('short.yaml', 200), logLevel: 'info' });
    try {
      await waitFor(async () => ((await json(`${s.url}/readyz`)).body.ready === true ? true : undefined), 'the service ready');
      const turn = chat(s.url, 'Explain my invoice');
      await peer.entered();
      s.signal('SIGTERM');
      const done = await turn;
      assert.equal(done.status, 503, JSON.stringify(done.body));
      assert.equal(done.body.error, 'aborted');
      assert.match(String(done.body.message), /server\.drainTimeoutMs/);
      assert.ok(Number(done.headers.get('retry-after')) > 0);
      assert.deepEqual(await s.exit, { code: 0, signal: null }, s.output());
      assert.match(s.output(), /did not finish within server\.drainTimeoutMs and were aborted/);
    } finally {
      peer.open();
      s.signal('SIGKILL');
    }
  });

  test('a second SIGTERM during the drain stops at once, with 143', async () => {
    peer.reset();
    const s = await startServe({ config: await config('second.yaml', 60_000), logLevel: 'info' });
    try {
      await waitFor(async () => ((await json(`${s.url}/readyz`)).body.ready === true ? true : undefined), 'the service ready');
      const turn = chat(s.url, 'Explain my invoice').catch(() => undefined);
      await peer.entered();
      s.signal('SIGTERM');
      await waitFor(async () => ((await json(`${s.url}/readyz`)).status === 503 ? true : undefined), 'the drain begun');
      s.signal('SIGTERM');
      assert.deepEqual(await s.exit, { code: 143, signal: null }, s.output());
      await turn;
    } finally {
      peer.open();
      s.signal('SIGKILL');
    }
  });
});
