/**
 * {@link V1RemoteAgent}: an ADK agent that delegates to a peer speaking **only A2A 1.0**, which
 * ADK JS 2.0's own `RemoteA2AAgent` (an A2A 0.3 client) cannot reach. It uses @a2a-js/sdk 1.x's
 * client and yields the same kind of ADK events as `RemoteA2AAgent`, so one tree can mix both.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { AgentCard, Role, TaskState, taskStateToJSON } from '@a2a-js/sdk';
import type { Message, Part, SendMessageRequest, StreamResponse, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from '@a2a-js/sdk/client';
import type { Client } from '@a2a-js/sdk/client';
import { BaseAgent, createEvent } from '@google/adk';
import type { BaseAgentConfig, Event, InvocationContext } from '@google/adk';
import type { AgentCardModel, AgentInterfaceModel } from '../../card/index.js';
import { DiscoveryError, isDiscoveryError } from '../../errors.js';
import type { HostPolicy } from '../../fetch/index.js';
import type { TransportOptions } from '../../sources/index.js';
import type { A2aTarget } from './a2a-client-span.js';
import { tracedA2aClient } from './a2a-client-span.js';
import { adkIdentifierMetadata } from './adk-metadata.js';
import { agentFetch } from './agent-fetch.js';
import { createPolicyFetch } from './policy-fetch.js';
import type { CredentialsInput, PolicyFetch } from './policy-fetch.js';

/** ADK's content type (`@google/genai`'s `Content`), named through ADK so no undeclared dependency is needed. */
type Content = NonNullable<Event['content']>;

/** Event `customMetadata` keys, the same ones ADK's `RemoteA2AAgent` uses, plus the task state. */
const CONTEXT_ID_KEY = 'a2a:context_id';
const TASK_ID_KEY = 'a2a:task_id';
const TASK_STATE_KEY = 'a2a:task_state';

/** Bindings the 1.x client in this package speaks (gRPC needs peer packages we do not load). */
const V1_BINDINGS = new Set(['JSONRPC', 'HTTP+JSON']);

const FAILED_STATES = new Set([TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_REJECTED, TaskState.TASK_STATE_CANCELED]);
/** States in which the peer waits for the same task to be continued. */
const INTERRUPTED_STATES = new Set([TaskState.TASK_STATE_INPUT_REQUIRED, TaskState.TASK_STATE_AUTH_REQUIRED]);

/** The configuration of a {@link V1RemoteAgent}. */
export interface V1RemoteAgentConfig extends BaseAgentConfig {
  /** The peer's card (our normalized 1.0 model). Its first 1.x JSONRPC / HTTP+JSON interface the policy admits (of `transport.tenant`, when set) is called. */
  card: AgentCardModel;
  /** Judges the interface URLs at construction; also the policy of the default fetch. */
  policy: HostPolicy;
  /**
   * The `fetch` the 1.x client uses. Default: a {@link createPolicyFetch} owned by this agent
   * (released by {@link V1RemoteAgent.close}). Pass a shared one to pool connections across agents.
   */
  fetchImpl?: typeof fetch;
  /** Per-origin credentials for the default fetch (ignored when `fetchImpl` is given). */
  credentials?: CredentialsInput;
  /** Headers deadline of the default fetch (ignored when `fetchImpl` is given). */
  timeoutMs?: number;
  /** Send ADK's `adk_app_name`, `adk_user_id`, `adk_session_id` in message metadata. Default false. */
  allowAdkMetadata?: boolean;
  /** Use `SendStreamingMessage`. Default: `card.capabilities.streaming === true` (and `transport.streaming` is not `false`). */
  streaming?: boolean;
  /**
   * How this agent is called: `streaming: false` (always `SendMessage`), extra `headers` (to the
   * interface's origin only), `timeoutMs` (headers deadline of each call, whichever fetch is
   * used), `tenant` (use the card's interface of that tenant).
   */
  transport?: TransportOptions;
}

/**
 * An ADK `BaseAgent` that sends the user's message to an A2A 1.0 peer with @a2a-js/sdk 1.x's
 * client and turns the reply into ADK events authored by this agent's name.
 *
 * - Construction does no I/O; the client is built from the card on the first run.
 * - Each run sends the text parts of the invocation's user message as one 1.0 `Message`. The
 *   A2A `contextId` comes from this agent's previous reply in the same ADK session (stored in
 *   the event's `customMetadata['a2a:context_id']`, as `RemoteA2AAgent` does), so the peer sees
 *   one conversation per ADK session; a task left `INPUT_REQUIRED` is continued by `taskId`.
 * - Non-streaming (`SendMessage`, blocking) unless the card declares streaming; then partial
 *   events carry progress and artifact chunks, and one final event carries the whole reply.
 * - The final event has `turnComplete: true`. Every failure (card unusable at run time, policy
 *   refusal, network, JSON-RPC error, failed/rejected/canceled task) becomes an event with
 *   `errorCode`, `errorMessage` and `turnComplete: true`; nothing is thrown out of the runner.
 * - No ADK identifiers are sent unless `allowAdkMetadata` is set.
 * - `clone()` works (the constructor is pure); a clone builds its own client, and its own
 *   default fetch unless `fetchImpl` was given.
 *
 * Not supported: file and data parts (only text is sent; non-text reply parts are dropped and
 * counted in `customMetadata['a2a:dropped_parts']`), push notifications, extended cards, gRPC,
 * live mode.
 *
 * @throws DiscoveryError at construction: `ERR_HOST_NOT_ALLOWED` / `ERR_INSECURE_URL` (stage
 *   `build`) when the policy refuses every usable interface, `ERR_UNSUITABLE` when the card has
 *   no 1.x JSONRPC or HTTP+JSON interface.
 * @example
 * const warranty = new V1RemoteAgent({ name: 'warranty', description: 'Reviewed text.', card, policy });
 */
export class V1RemoteAgent extends BaseAgent<V1RemoteAgentConfig> {
  /** The 1.x card (decoded SDK form) restricted to the admitted interfaces. */
  readonly #sdkCard: AgentCard;
  /** The chosen interface's tenant, echoed in every request (A2A 1.0 §8.3.2); '' for none. */
  readonly #tenant: string;
  readonly #fetch: typeof fetch;
  readonly #ownedFetch: PolicyFetch | undefined;
  readonly #streaming: boolean;
  readonly #allowAdkMetadata: boolean;
  /** What this agent's A2A client spans say about the peer. */
  readonly #target: A2aTarget;
  #client: Promise<Client> | undefined;

  constructor(config: V1RemoteAgentConfig) {
    super(config);
    const transport = config.transport;
    const tenant = transport?.tenant;
    const usable = usableV1Interfaces(config.card, config.policy).filter((i) => tenant === undefined || i.tenant === tenant);
    const chosen = usable[0];
    if (chosen === undefined) throw unusableCardError(config.card, config.policy, this.name, tenant);
    // Only the chosen interface: the SDK's factory would otherwise pick by binding (the last 1.0
    // interface of the first binding), not by the card's order or the tenant.
    // AgentCard.fromJSON does not validate: the model was validated when it was parsed.
    this.#sdkCard = AgentCard.fromJSON({ ...structuredClone(config.card), supportedInterfaces: [structuredClone(chosen)] });
    this.#tenant = chosen.tenant ?? '';
    this.#target = { localName: this.name, card: config.card, url: chosen.url, protocolVersion: chosen.protocolVersion, tenant: chosen.tenant };
    const timeoutMs = transport?.timeoutMs ?? config.timeoutMs;
    let base: typeof fetch;
    if (config.fetchImpl !== undefined) {
      base = config.fetchImpl;
      this.#ownedFetch = undefined;
    } else {
      this.#ownedFetch = createPolicyFetch({
        policy: config.policy,
        ...(config.credentials !== undefined && { credentials: config.credentials }),
        ...(timeoutMs !== undefined && { timeoutMs }),
      });
      base = this.#ownedFetch;
    }
    this.#fetch = agentFetch(base, {
      name: config.name,
      version: /^1\.\d+/.exec(chosen.protocolVersion)?.[0] ?? '1.0',
      origin: new URL(chosen.url).origin,
      ...(transport?.headers !== undefined && { headers: transport.headers }),
      ...(transport?.timeoutMs !== undefined && { timeoutMs: transport.timeoutMs }),
    });
    this.#streaming = transport?.streaming === false ? false : (config.streaming ?? config.card.capabilities.streaming === true);
    this.#allowAdkMetadata = config.allowAdkMetadata === true;
  }

  /** The interface URL the client calls (the first admitted 1.x interface, of the tenant when one is set). */
  get endpoint(): string {
    return (this.#sdkCard.supportedInterfaces[0] as { url: string }).url;
  }

  /** Releases the connection pool of the default fetch (no-op with a caller's `fetchImpl`). */
  async close(): Promise<void> {
    await this.#ownedFetch?.close();
  }

  protected override async *runAsyncImpl(ctx: InvocationContext): AsyncGenerator<Event, void, void> {
    try {
      const parts = outgoingText(ctx).map(textPart);
      if (parts.length === 0) throw new DiscoveryError('ERR_USAGE', 'there is no user text to send to the remote agent', { stage: 'build' });
      const previous = this.#previousTurn(ctx);
      const message: Message = {
        messageId: randomUUID(),
        contextId: previous.contextId ?? '',
        taskId: previous.taskId ?? '',
        role: Role.ROLE_USER,
        parts,
        metadata: this.#allowAdkMetadata ? adkIdentifierMetadata(ctx) : undefined,
        extensions: [],
        referenceTaskIds: [],
      };
      const request: SendMessageRequest = { tenant: this.#tenant, message, configuration: undefined, metadata: undefined };
      const client = await this.#getClient();
      const options = ctx.abortSignal === undefined ? undefined : { signal: ctx.abortSignal };
      const reply = new ReplyAggregator();
      if (this.#streaming) {
        for await (const response of client.sendMessageStream(request, options)) {
          const progress = reply.add(response);
          if (progress.length > 0) yield this.#event(ctx, { content: modelContent(progress), partial: true, turnComplete: false });
        }
      } else {
        reply.addResult(await client.sendMessage(request, options));
      }
      yield this.#finalEvent(ctx, reply);
    } catch (err) {
      yield this.#event(ctx, {
        errorCode: isDiscoveryError(err) ? err.code : 'A2A_REQUEST_FAILED',
        errorMessage: err instanceof Error ? err.message : String(err),
        turnComplete: true,
      });
    }
  }

  protected override async *runLiveImpl(): AsyncGenerator<Event, void, void> {
    yield* [];
    throw new DiscoveryError('ERR_USAGE', `live mode is not supported by V1RemoteAgent ${this.name}`);
  }

  #getClient(): Promise<Client> {
    if (this.#client === undefined) {
      const factory = new ClientFactory({
        transports: [new JsonRpcTransportFactory({ fetchImpl: this.#fetch }), new RestTransportFactory({ fetchImpl: this.#fetch })],
      });
      // Every call in an A2A client span (a2a-client-span.ts).
      const pending = factory.createFromAgentCard(this.#sdkCard).then((client) => tracedA2aClient(client, this.#target));
      // A failure is retried on the next run rather than remembered.
      pending.catch(() => {
        if (this.#client === pending) this.#client = undefined;
      });
      this.#client = pending;
    }
    return this.#client;
  }

  /** The A2A context (and an interrupted task) from this agent's last reply in the session. */
  #previousTurn(ctx: InvocationContext): { contextId?: string; taskId?: string } {
    const events = ctx.session.events;
    for (let i = events.length - 1; i >= 0; i--) {
      const event = events[i] as Event;
      if (event.author !== this.name) continue;
      const meta = event.customMetadata ?? {};
      const contextId = typeof meta[CONTEXT_ID_KEY] === 'string' ? (meta[CONTEXT_ID_KEY] as string) : undefined;
      if (contextId === undefined) continue;
      const state = meta[TASK_STATE_KEY];
      const interrupted = state === taskStateToJSON(TaskState.TASK_STATE_INPUT_REQUIRED) || state === taskStateToJSON(TaskState.TASK_STATE_AUTH_REQUIRED);
      const taskId = interrupted && typeof meta[TASK_ID_KEY] === 'string' ? (meta[TASK_ID_KEY] as string) : undefined;
      return { contextId, ...(taskId !== undefined && { taskId }) };
    }
    return {};
  }

  #finalEvent(ctx: InvocationContext, reply: ReplyAggregator): Event {
    const customMetadata: Record<string, unknown> = {};
    if (reply.contextId) customMetadata[CONTEXT_ID_KEY] = reply.contextId;
    if (reply.taskId) customMetadata[TASK_ID_KEY] = reply.taskId;
    if (reply.state !== undefined) customMetadata[TASK_STATE_KEY] = taskStateToJSON(reply.state);
    if (reply.droppedParts > 0) customMetadata['a2a:dropped_parts'] = reply.droppedParts;
    const meta = Object.keys(customMetadata).length > 0 ? { customMetadata } : {};
    if (reply.state !== undefined && FAILED_STATES.has(reply.state)) {
      const detail = reply.finalText().join('\n');
      return this.#event(ctx, {
        ...meta,
        errorCode: taskStateToJSON(reply.state),
        errorMessage: `the remote task ended ${taskStateToJSON(reply.state)}${detail === '' ? '' : `: ${detail}`}`,
        turnComplete: true,
      });
    }
    if (reply.kind === 'task' && !(reply.state === TaskState.TASK_STATE_COMPLETED || (reply.state !== undefined && INTERRUPTED_STATES.has(reply.state)))) {
      const state = reply.state === undefined ? 'no state' : taskStateToJSON(reply.state);
      return this.#event(ctx, { ...meta, errorCode: 'A2A_INCOMPLETE', errorMessage: `the remote agent stopped before the task finished (${state})`, turnComplete: true });
    }
    const texts = reply.finalText();
    if (texts.length === 0) {
      return this.#event(ctx, { ...meta, errorCode: 'A2A_EMPTY_REPLY', errorMessage: 'the remote agent replied without any text', turnComplete: true });
    }
    return this.#event(ctx, { ...meta, content: modelContent(texts), partial: false, turnComplete: true });
  }

  #event(ctx: InvocationContext, fields: Partial<Event>): Event {
    return createEvent({ ...fields, invocationId: ctx.invocationId, author: this.name, ...(ctx.branch !== undefined && { branch: ctx.branch }) });
  }
}

/** The text the peer receives: the text parts of this invocation's user message. */
function outgoingText(ctx: InvocationContext): string[] {
  const fromContent = (content: Content | undefined): string[] =>
    (content?.parts ?? []).flatMap((p) => (typeof p.text === 'string' && p.text !== '' && p.thought !== true ? [p.text] : []));
  const direct = fromContent(ctx.userContent);
  if (direct.length > 0) return direct;
  const events = ctx.session.events;
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i] as Event;
    if (event.author !== 'user') continue;
    const texts = fromContent(event.content);
    if (texts.length > 0) return texts;
  }
  return [];
}

function textPart(text: string): Part {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' };
}

function modelContent(texts: readonly string[]): Content {
  return { role: 'model', parts: texts.map((text) => ({ text })) };
}

/** Collects a reply: a Message, or a Task and its status and artifact updates. */
class ReplyAggregator {
  kind: 'message' | 'task' | undefined;
  contextId = '';
  taskId = '';
  state: TaskState | undefined;
  droppedParts = 0;
  #messageText: string[] = [];
  #statusText: string[] = [];
  /** artifactId → text chunks, in first-seen order. */
  readonly #artifacts = new Map<string, string[]>();

  /** A blocking SendMessage result: a Message or a Task. */
  addResult(result: Message | Task): void {
    if ('messageId' in result) this.#onMessage(result);
    else this.#onTask(result);
  }

  /** One streamed response; returns the texts worth showing as progress (partial events). */
  add(response: StreamResponse): string[] {
    const payload = response.payload;
    switch (payload?.$case) {
      case 'message':
        this.#onMessage(payload.value);
        return [];
      case 'task':
        this.#onTask(payload.value);
        return [];
      case 'statusUpdate':
        return this.#onStatus(payload.value);
      case 'artifactUpdate':
        return this.#onArtifact(payload.value);
      default:
        return [];
    }
  }

  /** The reply texts: a direct message, else the artifacts then the final status message. */
  finalText(): string[] {
    if (this.kind === 'message') return [...this.#messageText];
    const artifacts = [...this.#artifacts.values()].map((chunks) => chunks.join('')).filter((t) => t !== '');
    return [...artifacts, ...this.#statusText];
  }

  #onMessage(message: Message): void {
    this.kind = 'message';
    this.contextId = message.contextId || this.contextId;
    this.taskId = message.taskId || this.taskId;
    this.#messageText = this.#texts(message.parts);
  }

  #onTask(task: Task): void {
    this.kind = 'task';
    this.contextId = task.contextId || this.contextId;
    this.taskId = task.id || this.taskId;
    for (const artifact of task.artifacts ?? []) this.#artifacts.set(artifact.artifactId, [this.#texts(artifact.parts).join('')]);
    if (task.status !== undefined) this.#setStatus(task.status.state, task.status.message);
  }

  #onStatus(update: TaskStatusUpdateEvent): string[] {
    this.kind = 'task';
    this.contextId = update.contextId || this.contextId;
    this.taskId = update.taskId || this.taskId;
    if (update.status === undefined) return [];
    return this.#setStatus(update.status.state, update.status.message);
  }

  #onArtifact(update: TaskArtifactUpdateEvent): string[] {
    this.kind = 'task';
    this.contextId = update.contextId || this.contextId;
    this.taskId = update.taskId || this.taskId;
    const artifact = update.artifact;
    if (artifact === undefined) return [];
    const text = this.#texts(artifact.parts).join('');
    const chunks = update.append ? (this.#artifacts.get(artifact.artifactId) ?? []) : [];
    chunks.push(text);
    this.#artifacts.set(artifact.artifactId, chunks);
    return text === '' ? [] : [text];
  }

  /** Keeps the status message only for final and interrupted states; returns progress text otherwise. */
  #setStatus(state: TaskState, message: Message | undefined): string[] {
    this.state = state;
    const texts = message === undefined ? [] : this.#texts(message.parts);
    const settled = state === TaskState.TASK_STATE_COMPLETED || FAILED_STATES.has(state) || INTERRUPTED_STATES.has(state);
    if (settled) {
      this.#statusText = texts;
      return [];
    }
    return texts;
  }

  #texts(parts: readonly Part[]): string[] {
    const out: string[] = [];
    for (const part of parts) {
      if (part.content?.$case === 'text') out.push(part.content.value);
      else this.droppedParts++;
    }
    return out;
  }
}

/** The 1.x interfaces this client can use and the policy admits, in the card's order. */
export function usableV1Interfaces(card: AgentCardModel, policy: HostPolicy): AgentInterfaceModel[] {
  return card.supportedInterfaces.filter((i) => isV1Interface(i) && policy.check(i.url).allowed);
}

function isV1Interface(i: AgentInterfaceModel): boolean {
  return /^1\./.test(i.protocolVersion) && V1_BINDINGS.has(i.protocolBinding);
}

function unusableCardError(card: AgentCardModel, policy: HostPolicy, name: string, tenant: string | undefined): DiscoveryError {
  const candidates = card.supportedInterfaces.filter((i) => isV1Interface(i) && (tenant === undefined || i.tenant === tenant));
  if (candidates.length === 0) {
    const offered = card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}${i.tenant === undefined ? '' : ` tenant ${JSON.stringify(i.tenant)}`}`).join(', ');
    const what = tenant === undefined ? '' : ` of tenant ${JSON.stringify(tenant)}`;
    return new DiscoveryError('ERR_UNSUITABLE', `remote agent ${name}: the card has no A2A 1.x JSONRPC or HTTP+JSON interface${what} (offers ${offered || 'none'})`, { stage: 'build' });
  }
  const first = policy.check((candidates[0] as AgentInterfaceModel).url);
  const code = !first.allowed ? first.code : 'ERR_HOST_NOT_ALLOWED';
  const refused = candidates.map((i) => i.url).join(', ');
  return new DiscoveryError(code, `remote agent ${name}: the host policy refuses every interface of the card (${refused})`, {
    stage: 'build',
    url: (candidates[0] as AgentInterfaceModel).url,
  });
}
