/**
 * The A2A client span of the OpenTelemetry GenAI conventions (`semantic-conventions-genai`,
 * docs/gen-ai/a2a.md, development status) around every call a remote agent makes, on both SDK
 * clients (ADK's 0.3 copy behind `RemoteA2AAgent`, @a2a-js/sdk 1.x behind `V1RemoteAgent`):
 *
 * - named after the A2A method (`SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`,
 *   `GetExtendedAgentCard`, `SubscribeToTask`, `ListTasks`), kind CLIENT, a child of the active
 *   span (ADK's `invoke_agent <name>` when ADK runs the agent);
 * - a streaming call's span lasts until the stream is consumed (or abandoned);
 * - `a2a.method.name`, `a2a.message.id`, `a2a.task.id`, `a2a.task.state` (the last one seen),
 *   `a2a.tenant`, `gen_ai.conversation.id` (the `contextId`), `a2a.protocol.version`,
 *   `server.address` / `server.port` of the selected interface URL, `gen_ai.agent.name` /
 *   `version` / `description` from the target card (bounded by `spanText`), our
 *   `a2a_discovery.agent.local_name` and the snapshot digest the turn's session is pinned to;
 * - on failure: status ERROR and `error.type` = the JSON-RPC error code, else the HTTP status,
 *   else our error code or the error's name.
 *
 * The W3C trace context is injected into the request headers by `agentFetch` (agent-fetch.ts),
 * which runs inside this span: the peer continues the trace from it.
 *
 * @module
 */
import { taskStateToJSON } from '@a2a-js/sdk';
import type { SpanAttributes, SpanScope } from '../../telemetry/otel.js';
import { telemetryAvailable, withSpan } from '../../telemetry/otel.js';
import { A2A_METHOD, ATTR, serverOf, spanText } from '../../telemetry/attributes.js';
import { currentTurnDigest } from './turn-signal.js';

/** The peer a remote agent calls: what its spans say about it. */
export interface A2aTarget {
  /** Our local name of the agent. */
  readonly localName: string;
  /** The target card's name, version and description (third-party text). */
  readonly card: { readonly name?: string | undefined; readonly version?: string | undefined; readonly description?: string | undefined };
  /** The selected interface URL. */
  readonly url: string;
  /** The selected interface's protocol version (`0.3`, `1.0`). */
  readonly protocolVersion: string;
  /** The selected interface's tenant, when it has one. */
  readonly tenant?: string | undefined;
}

/** Client methods of both SDKs and their A2A method names; `stream` ones return async iterables. */
const METHODS: Readonly<Record<string, { readonly name: string; readonly stream: boolean }>> = {
  sendMessage: { name: A2A_METHOD.sendMessage, stream: false },
  sendMessageStream: { name: A2A_METHOD.sendStreamingMessage, stream: true },
  getTask: { name: A2A_METHOD.getTask, stream: false },
  cancelTask: { name: A2A_METHOD.cancelTask, stream: false },
  listTasks: { name: A2A_METHOD.listTasks, stream: false },
  getExtendedAgentCard: { name: A2A_METHOD.getExtendedAgentCard, stream: false },
  resubscribeTask: { name: A2A_METHOD.subscribeToTask, stream: true },
  subscribeToTask: { name: A2A_METHOD.subscribeToTask, stream: true },
};

/**
 * `client` with every A2A call in a client span (see the module). Without `@opentelemetry/api`
 * the client itself is returned. Other members pass through unchanged.
 */
export function tracedA2aClient<C extends object>(client: C, target: A2aTarget): C {
  if (!telemetryAvailable) return client;
  const fixed: SpanAttributes = {
    [ATTR.localName]: target.localName,
    [ATTR.a2aProtocolVersion]: target.protocolVersion,
    ...serverOf(target.url),
    [ATTR.genAiAgentName]: spanText(target.card.name || undefined),
    [ATTR.genAiAgentVersion]: spanText(target.card.version || undefined),
    [ATTR.genAiAgentDescription]: spanText(target.card.description || undefined),
  };
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(client, {
    get(object, prop) {
      const value: unknown = Reflect.get(object, prop, object);
      if (typeof value !== 'function') return value;
      const known = wrapped.get(prop);
      if (known !== undefined) return known;
      const fn = (value as (...args: unknown[]) => unknown).bind(object);
      const method = typeof prop === 'string' ? METHODS[prop] : undefined;
      const out =
        method === undefined
          ? fn
          : method.stream
            ? (params: unknown, ...rest: unknown[]) => streamInSpan(method.name, attributesOf(method.name, params, fixed, target), () => fn(params, ...rest) as AsyncIterable<unknown>)
            : (params: unknown, ...rest: unknown[]) => callInSpan(method.name, attributesOf(method.name, params, fixed, target), () => fn(params, ...rest) as Promise<unknown>);
      wrapped.set(prop, out);
      return out;
    },
  });
}

/** The request's attributes: the fixed ones, the method, the message, task, tenant and digest. */
function attributesOf(method: string, params: unknown, fixed: SpanAttributes, target: A2aTarget): SpanAttributes {
  const p = record(params);
  const message = record(p?.['message']);
  const tenant = str(p?.['tenant']) ?? (target.tenant || undefined);
  return {
    ...fixed,
    [ATTR.a2aMethod]: method,
    [ATTR.a2aMessageId]: str(message?.['messageId']),
    [ATTR.a2aTaskId]: str(message?.['taskId']) ?? str(p?.['id']),
    [ATTR.genAiConversationId]: str(message?.['contextId']),
    [ATTR.a2aTenant]: tenant,
    [ATTR.snapshotDigest]: currentTurnDigest(),
  };
}

type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** A call in its span; the error is recorded with its A2A `error.type` and rethrown unchanged. */
async function callInSpan<T>(name: string, attributes: SpanAttributes, call: () => Promise<T>): Promise<T> {
  const outcome = await withSpan(name, { kind: 'client', attributes }, async (span): Promise<Outcome<T>> => {
    try {
      const value = await call();
      noteResult(span, value);
      return { ok: true, value };
    } catch (error) {
      span.fail(bounded(error), a2aErrorType(error));
      return { ok: false, error };
    }
  });
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * A stream consumed inside its span: the span is active while the SDK reads the stream (so its
 * request carries the span's trace context) and ends when the stream ends, fails, or the consumer
 * stops (then the SDK's iterator is returned, closing the request). One item at a time: the next
 * one is read only when the consumer asks for it.
 */
function streamInSpan<T>(name: string, attributes: SpanAttributes, open: () => AsyncIterable<T>): AsyncGenerator<T, void, undefined> {
  let demand = deferred<boolean>();
  let supply = deferred<IteratorResult<T>>();
  let started: Promise<void> | undefined;
  const start = (): Promise<void> =>
    withSpan(name, { kind: 'client', attributes }, async (span) => {
      let iterator: AsyncIterator<T> | undefined;
      let finished = false;
      try {
        iterator = open()[Symbol.asyncIterator]();
        while (await demand.promise) {
          demand = deferred();
          const next = await iterator.next();
          if (next.done === true) {
            finished = true;
            supply.resolve(next);
            return;
          }
          noteResult(span, next.value);
          const current = supply;
          supply = deferred();
          current.resolve(next);
        }
      } catch (error) {
        finished = true;
        span.fail(bounded(error), a2aErrorType(error));
        supply.reject(error);
      } finally {
        // The consumer stopped early: closing the SDK's iterator ends its request.
        if (!finished) await iterator?.return?.()?.catch(() => undefined);
      }
    });
  return (async function* consume(): AsyncGenerator<T, void, undefined> {
    started ??= start();
    try {
      for (;;) {
        const current = supply;
        demand.resolve(true);
        const next = await current.promise;
        if (next.done === true) return;
        yield next.value;
      }
    } finally {
      demand.resolve(false);
      await started;
    }
  })();
}

/** Task id, state and context id from a result: a Task, a Message, or a stream event of either SDK. */
function noteResult(span: SpanScope, result: unknown): void {
  if (!span.recording) return;
  let r = record(result);
  // 1.x stream responses wrap their payload: { payload: { $case, value } }.
  const payload = record(r?.['payload']);
  if (payload !== undefined && '$case' in payload) r = record(payload['value']);
  if (r === undefined) return;
  const status = record(r['status']);
  const isTask = r['kind'] === 'task' || (r['kind'] === undefined && status !== undefined && typeof r['id'] === 'string');
  const state = status === undefined ? undefined : taskState(status['state']);
  span.set({
    [ATTR.a2aTaskId]: isTask ? str(r['id']) : str(r['taskId']),
    [ATTR.a2aTaskState]: state,
    [ATTR.genAiConversationId]: str(r['contextId']),
  });
}

/** `TASK_STATE_*` from a 1.x enum number or a 0.3 string (`input-required`). */
function taskState(state: unknown): string | undefined {
  if (typeof state === 'number') return taskStateToJSON(state);
  if (typeof state !== 'string' || state === '') return undefined;
  return state.startsWith('TASK_STATE_') ? state : `TASK_STATE_${state.replace(/-/g, '_').toUpperCase()}`;
}

/**
 * `error.type` per the convention: the JSON-RPC error code, else the HTTP status, else our
 * DiscoveryError code, else the error's name. Both SDKs are read: 1.x `envelopeCode` /
 * `statusCode`, 0.3 `errorResponse.error.code`, and the status in their "HTTP error" messages.
 */
function a2aErrorType(error: unknown): string {
  const e = record(error);
  const envelope = e?.['envelopeCode'] ?? record(record(e?.['errorResponse'])?.['error'])?.['code'];
  if (typeof envelope === 'number') return String(envelope);
  const status = e?.['statusCode'];
  if (typeof status === 'number') return String(status);
  const message = error instanceof Error ? error.message : '';
  const rpc = /\(Code: (-?\d+)\)/.exec(message);
  if (rpc !== null) return rpc[1] as string;
  const http = /^HTTP error[^!:]*(?:!\s*Status:|:)\s*(\d{3})\b/.exec(message);
  if (http !== null) return http[1] as string;
  const code = e?.['code'];
  if (typeof code === 'string' && code.startsWith('ERR_')) return code;
  return error instanceof Error ? error.name : '_OTHER';
}

/** The error as a span records it: its name, and its message bounded (a peer's text may follow it). */
function bounded(error: unknown): Error {
  const e = error instanceof Error ? error : new Error(String(error));
  const out = new Error(spanText(e.message));
  out.name = e.name;
  return out;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
