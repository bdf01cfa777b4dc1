/**
 * {@link lenientResponse}: two repairs of a remote agent's answer, on the response path of each
 * call (agent-fetch.ts), for faults that lead the client nowhere it should not go. Each repair is
 * reported to `onRepair` (the agent fetch turns the first of each kind into a turn notice):
 *
 * - `result-kind`: an A2A 0.3 JSON-RPC `result` (or streamed event) with a string `id` and a
 *   `status` object but no `kind` is a Task (`kind: "task"`). VoltAgent's `@voltagent/a2a-server`
 *   2.0.3 answers `message/send` (and every `message/stream` event) so; the 0.3 schema requires
 *   `kind` on a Task, and ADK's `RemoteA2AAgent` drops any result without it (`isTask` reads
 *   `kind === "task"`), so the turn ended without a reply.
 * - `sse-record-separator`: an SSE `data:` line whose payload starts with U+001E (RECORD
 *   SEPARATOR) has it stripped. VoltAgent's `@voltagent/server-hono` 2.0.14 frames every event
 *   so; the SDK's `JSON.parse` of the payload failed on it.
 *
 * Only JSON-RPC answers are looked at (`application/json` with `jsonrpc` and `result`, or
 * `text/event-stream`); anything else passes untouched. A JSON answer is read whole — as the SDK
 * reads it anyway — and an event stream is rewritten one line at a time as it arrives (never
 * buffered beyond the line being read), so the bounds of the fetch below (the policy fetch's
 * `maxResponseBytes`, its body timeout) still hold: nothing here adds a cap of its own.
 *
 * @module
 */

/** What was repaired: a kind-less Task, or U+001E before an event's data. */
export type ResponseRepair = 'result-kind' | 'sse-record-separator';

/** Inputs of {@link lenientResponse}. */
export interface LenientResponseOptions {
  /** Repair kind-less Task results (A2A 0.3 JSON-RPC only: a 1.0 result has no `kind`). */
  readonly taskKind: boolean;
  /** Told of each repair as it is made (once per repaired result or event line). */
  readonly onRepair: (repair: ResponseRepair) => void;
}

const RS = '\u001e';

/**
 * `response` with the repairs applied, or `response` itself when it is not a JSON-RPC answer.
 * A JSON body that is not JSON is handed on unchanged, for the SDK to report.
 */
export async function lenientResponse(response: Response, options: LenientResponseOptions): Promise<Response> {
  if (response.body === null) return response;
  const type = response.headers.get('content-type')?.toLowerCase() ?? '';
  if (type.startsWith('text/event-stream')) {
    return rebuilt(response, response.body.pipeThrough(sseRepair(options)));
  }
  if (!options.taskKind || !/^application\/(.+\+)?json/.test(type)) return response;
  const text = await response.text();
  const repaired = repairJsonRpc(text);
  if (repaired === undefined) return rebuilt(response, text);
  options.onRepair('result-kind');
  return rebuilt(response, repaired);
}

/** The JSON-RPC answer `text` with `result.kind: "task"` added, or undefined when it needs none. */
function repairJsonRpc(text: string): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(body) || body.jsonrpc !== '2.0' || !isKindlessTask(body.result)) return undefined;
  return JSON.stringify({ ...body, result: { kind: 'task', ...body.result } });
}

/** A 0.3 Task without `kind`: a string `id`, a `status` object with a string `state`. */
function isKindlessTask(result: unknown): result is Record<string, unknown> {
  return isObject(result) && result.kind === undefined && typeof result.id === 'string' && isObject(result.status) && typeof result.status.state === 'string';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A new response with `body` and the status and headers of `from` (minus the stale length). */
function rebuilt(from: Response, body: ReadableStream<Uint8Array> | string): Response {
  const headers = new Headers(from.headers);
  headers.delete('content-length');
  return new Response(body, { status: from.status, statusText: from.statusText, headers });
}

/**
 * Rewrites an event stream line by line: a `data:` line's leading U+001E is dropped, and (with
 * `taskKind`) a one-line JSON-RPC event whose result is a kind-less Task gets `kind: "task"`.
 * Other lines, and line endings, pass as they came.
 */
function sseRepair(options: LenientResponseOptions): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = '';
  const line = (raw: string): string => {
    if (!raw.startsWith('data:')) return raw;
    let payload = raw.slice(5);
    const space = payload.startsWith(' ') ? ' ' : '';
    payload = payload.slice(space.length);
    if (payload.startsWith(RS)) {
      payload = payload.slice(RS.length);
      options.onRepair('sse-record-separator');
    }
    if (options.taskKind && payload.includes('"status"')) {
      const repaired = repairJsonRpc(payload);
      if (repaired !== undefined) {
        payload = repaired;
        options.onRepair('result-kind');
      }
    }
    return `data:${space}${payload}`;
  };
  /**
   * Every complete line of `pending`, each with its ending (CRLF, LF or CR, as the SSE grammar
   * allows); a CR last in `pending` waits for the next chunk, which may start with its LF.
   */
  const drain = (controller: TransformStreamDefaultController<Uint8Array>, final: boolean): void => {
    let out = '';
    let start = 0;
    const ending = /\r\n|\n|\r/g;
    for (let m = ending.exec(pending); m !== null; m = ending.exec(pending)) {
      if (!final && m[0] === '\r' && m.index === pending.length - 1) break;
      out += line(pending.slice(start, m.index)) + m[0];
      start = m.index + m[0].length;
    }
    pending = pending.slice(start);
    if (final && pending !== '') {
      out += line(pending);
      pending = '';
    }
    if (out !== '') controller.enqueue(encoder.encode(out));
  };
  return new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      pending += decoder.decode(chunk, { stream: true });
      drain(controller, false);
    },
    flush(controller) {
      pending += decoder.decode();
      drain(controller, true);
    },
  });
}
