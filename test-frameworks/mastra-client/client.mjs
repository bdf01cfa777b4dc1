/**
 * Mastra's A2A client (`MastraClient#getA2A` / `#getA2AV1` from `@mastra/client-js`), run by
 * test/interop/orchestrator-clients.test.ts in a child process from this folder (its own install):
 * reads the card and sends one message.
 *
 * Mastra's client never reads a card's `url`: it builds both URLs from `baseUrl`, `apiPrefix`
 * (default `/api`) and an agent id — `GET <base><prefix>/.well-known/<id>/agent-card.json` and
 * `POST <base><prefix>/a2a/<id>` (MASTRA-PATHS.md, docs/interop.md). So the URL given here is a
 * Mastra-shaped card URL, split into those three parts.
 *
 * Usage: [A2A_BEARER=<token>] node client.mjs <.../.well-known/<agentId>/agent-card.json> <text> [0.3|0.3-stream|1.0]
 * (A2A_BEARER: sent as `Authorization: Bearer <token>` through MastraClient's `headers`, to both URLs.)
 * Prints one JSON line: { card: { name, protocolVersion }, reply, calls } or { error, calls }:
 * `reply` is every text of the `message/send` (0.3) or `SendMessage` (1.0) result, joined by a
 * newline (0.3-stream: of the last event of `message/stream`, with `streamed`, every text its
 * events carried, and `state`, the last event's task state); `calls` the URLs the client requested.
 */
import { randomUUID } from 'node:crypto';
import { MastraClient } from '@mastra/client-js';

const [url, text, wire = '0.3'] = process.argv.slice(2);
const calls = [];

/** Every text part in a 0.3 result (a Message, or a Task's status message and artifacts). */
function texts03(result) {
  const carriers = result?.kind === 'task' ? [result.status?.message, ...(result.artifacts ?? [])] : [result];
  return carriers.flatMap((c) => (c?.parts ?? []).filter((p) => p.kind === 'text').map((p) => p.text));
}

/** Every text part in a decoded 1.0 `SendMessageResponse` (`payload`: a task or a message; parts `{ content: { $case, value } }`). */
function texts10(result) {
  const { $case, value } = result?.payload ?? {};
  const carriers = $case === 'task' ? [value.status?.message, ...(value.artifacts ?? [])] : [value];
  return carriers.flatMap((c) => (c?.parts ?? []).flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : [])));
}

try {
  const u = new URL(url);
  const m = /^(.*)\/\.well-known\/([^/]+)\/agent-card\.json$/.exec(u.pathname);
  if (!m) throw new Error(`not a Mastra-shaped card URL (<origin>[/<prefix>]/.well-known/<agentId>/agent-card.json): ${url}`);
  const [, apiPrefix, agentId] = m;
  const baseUrl = u.origin;
  const client = new MastraClient({
    baseUrl,
    apiPrefix,
    retries: 0,
    headers: process.env.A2A_BEARER ? { authorization: `Bearer ${process.env.A2A_BEARER}` } : {},
    fetch: (input, init) => {
      calls.push(`${init?.method ?? 'GET'} ${String(input)}`);
      return globalThis.fetch(input, init);
    },
  });
  if (wire === '1.0') {
    const a2a = client.getA2AV1(agentId);
    const card = await a2a.getAgentCard();
    const result = await a2a.sendMessage({
      tenant: '',
      message: { messageId: randomUUID(), contextId: '', taskId: '', role: 1, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
      configuration: undefined,
      metadata: undefined,
    });
    process.stdout.write(`${JSON.stringify({ card: { name: card.name }, reply: texts10(result).join('\n'), calls })}\n`);
  } else if (wire === '0.3-stream') {
    const a2a = client.getA2A(agentId);
    const card = await a2a.getAgentCard();
    const streamed = [];
    let last;
    for await (const event of a2a.sendMessageStream({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] } })) {
      last = event;
      const carrier = event.kind === 'status-update' ? event.status?.message : event.kind === 'artifact-update' ? event.artifact : event.kind === 'message' ? event : undefined;
      for (const part of carrier?.parts ?? []) if (part.kind === 'text') streamed.push(part.text);
    }
    const state = last?.kind === 'status-update' || last?.kind === 'task' ? last.status?.state : last?.kind;
    process.stdout.write(`${JSON.stringify({ card: { name: card.name, protocolVersion: card.protocolVersion }, reply: texts03(last?.kind === 'status-update' ? { kind: 'task', status: last.status } : last).join('\n'), streamed, state, calls })}\n`);
  } else {
    const a2a = client.getA2A(agentId);
    const card = await a2a.getAgentCard();
    const envelope = await a2a.sendMessage({ message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] } });
    if (envelope.error) throw new Error(`JSON-RPC error: ${JSON.stringify(envelope.error)}`);
    process.stdout.write(`${JSON.stringify({ card: { name: card.name, protocolVersion: card.protocolVersion }, reply: texts03(envelope.result).join('\n'), calls })}\n`);
  }
} catch (e) {
  process.stdout.write(`${JSON.stringify({ error: String(e?.message ?? e), calls })}\n`);
}
