/**
 * Mastra's A2A server for the interop matrix: `@mastra/core` agents served by the `@mastra/hono`
 * adapter (routes from `@mastra/server`) on `@hono/node-server`. Mastra publishes each agent's
 * card at a non-standard path, `/api/.well-known/<agentId>/agent-card.json`, and answers JSON-RPC
 * at `/api/a2a/<agentId>` (A2A 0.3).
 *
 * The model is `MockLanguageModelV2` from the AI SDK's `ai/test` — a **fake**: it never calls a
 * network model. It answers `mastra: <text of the last user message>`, streamed or not.
 *
 * Two agents: `warrantyAgent` with one tool (`serial_lookup`: Mastra publishes one skill per tool,
 * tagged with the tool's key) and `plainAgent` with no tools (Mastra publishes `skills: []`).
 */
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { Mastra } from '@mastra/core';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { MastraServer } from '@mastra/hono';
import { InMemoryTaskStore } from '@mastra/server/a2a/store';
import { MockLanguageModelV2 } from 'ai/test';
import { z } from 'zod';
import type { InteropPeer, RpcCall } from './peers.js';

export interface MastraPeer extends InteropPeer {
  /** Card URL of an agent (Mastra's non-standard path). */
  cardUrl(agentId: 'warrantyAgent' | 'plainAgent'): string;
}

/** The text of the last user message in an AI SDK v5 prompt. */
function lastUserText(prompt: ReadonlyArray<{ role: string; content: unknown }>): string {
  const last = [...prompt].reverse().find((m) => m.role === 'user');
  if (!last || !Array.isArray(last.content)) return '';
  return (last.content as Array<{ type: string; text?: string }>).flatMap((p) => (p.type === 'text' && p.text ? [p.text] : [])).join(' ');
}

/** A fake model (the AI SDK's own mock): a fixed script, never a network call. */
function fakeModel(prefix: string): MockLanguageModelV2 {
  const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
  return new MockLanguageModelV2({
    modelId: 'fake-mastra-model',
    doGenerate: async ({ prompt }) => ({
      finishReason: 'stop',
      usage,
      content: [{ type: 'text', text: `${prefix}: ${lastUserText(prompt)}` }],
      warnings: [],
    }),
    doStream: async ({ prompt }) => ({
      stream: new ReadableStream({
        start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'text-start', id: 't1' });
          controller.enqueue({ type: 'text-delta', id: 't1', delta: `${prefix}: ${lastUserText(prompt)}` });
          controller.enqueue({ type: 'text-end', id: 't1' });
          controller.enqueue({ type: 'finish', finishReason: 'stop', usage });
          controller.close();
        },
      }),
    }),
  });
}

export async function startMastraPeer(prefix = 'mastra'): Promise<MastraPeer> {
  const serialLookup = createTool({
    id: 'serial-lookup',
    description: 'Looks up the warranty status of a serial number.',
    inputSchema: z.object({ serial: z.string() }),
    execute: async () => ({ covered: true }),
  });
  const model = fakeModel(prefix);
  const warrantyAgent = new Agent({
    id: 'warrantyAgent',
    name: 'Warranty Agent',
    description: 'Answers warranty questions.',
    instructions: 'Answer warranty questions briefly.',
    model,
    tools: { serial_lookup: serialLookup },
  });
  const plainAgent = new Agent({ id: 'plainAgent', name: 'Plain Agent', instructions: 'Answer briefly.', model });
  const mastra = new Mastra({ agents: { warrantyAgent, plainAgent }, logger: false });

  const calls: RpcCall[] = [];
  const app = new Hono();
  app.use('*', async (c, next) => {
    if (c.req.method === 'POST') {
      try {
        const body = (await c.req.raw.clone().json()) as { method?: unknown };
        if (typeof body.method === 'string') calls.push({ method: body.method, version: c.req.header('a2a-version'), path: new URL(c.req.url).pathname });
      } catch {
        // not JSON: not an A2A call
      }
    }
    await next();
  });
  // The adapter reads `taskStore` at request time; without one, message/send fails (see docs/interop.md).
  await new MastraServer({ app, mastra, taskStore: new InMemoryTaskStore() }).init();
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
  });
  const port = (server.address() as AddressInfo).port;
  const baseUrl = `http://127.0.0.1:${port}/`;
  return {
    label: '@mastra/core 1.71.0 + @mastra/hono 1.7.9',
    baseUrl,
    port,
    calls,
    cardUrl: (agentId) => `${baseUrl}api/.well-known/${agentId}/agent-card.json`,
    close: () =>
      new Promise<void>((resolve) => {
        const s = server as unknown as { closeAllConnections?: () => void; close(cb: () => void): void };
        s.closeAllConnections?.();
        s.close(() => resolve());
      }),
  };
}
