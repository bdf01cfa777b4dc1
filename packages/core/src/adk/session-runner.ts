/**
 * Runs conversation turns on pinned trees: one ADK `Runner` per digest, all sharing one session
 * service, so a session always runs on the tree it started with (ADK resolves the next agent from
 * stored event authors by name: an old session on a new tree could transfer to a vanished agent).
 */
import type { BaseAgent, BaseSessionService, Event } from '@google/adk';
import { InMemorySessionService, Runner } from '@google/adk';
import type { Foreground } from '../cache/foreground.js';
import type { EventStream } from '../events/index.js';
import { preferredInterface } from '../card/index.js';
import type { CallHealth } from '../health/call-health.js';
import { redactUrl } from '../rules/redaction.js';
import type { SnapshotAgent } from '../snapshot/index.js';
import { contentText } from './content-text.js';
import { explainRoute } from './root-agent.js';
import type { AgentCallFailure } from './remote/turn-signal.js';
import { withTurn } from './remote/turn-signal.js';
import { ATTR, SPAN, spanText } from '../telemetry/attributes.js';
import type { SpanScope } from '../telemetry/otel.js';
import { withSpan } from '../telemetry/otel.js';
import type { PinRelease, TreeFactory } from './tree-factory.js';

export interface SessionRunnerOptions {
  trees: TreeFactory;
  /** One app name for every runner (sessions are keyed by it). Default `a2a_discovery`. */
  appName?: string;
  /** Shared by every runner. Default an `InMemorySessionService`. */
  sessionService?: BaseSessionService;
  /** Where a failed history deletion is reported. */
  events?: EventStream;
  /**
   * Where each turn's calls are counted (health from real calls, rollout figures): for every
   * specialist the turn called, whether it failed (by error class) and the turn's latency.
   */
  calls?: CallHealth;
  /**
   * Entered while each turn runs: a card cache given the same one starts fewer refreshes at once
   * meanwhile (`CardCacheOptions.maxConcurrentFetchesDuringTurns`).
   */
  foreground?: Foreground;
}

/**
 * A session service that can hold a turn's appended events and write them together when the turn
 * ends (`SqlSessionService` of `@a2a-discovery/store/adk-sessions`): the runner wraps each turn in
 * it, so a turn's history costs one write where each event cost one. `batchAppends` resolves once
 * the held events are stored, so a turn's answer is given after its history is.
 */
export interface BatchedAppends {
  /** Runs `work` with the session's appended events held, and resolves once they are stored. */
  batchAppends<T>(session: { appName: string; userId: string; sessionId: string }, work: () => Promise<T>): Promise<T>;
}

function batchedAppends(service: BaseSessionService): BatchedAppends | undefined {
  const candidate = service as Partial<BatchedAppends>;
  return typeof candidate.batchAppends === 'function' ? (candidate as BatchedAppends) : undefined;
}

export interface TurnResult {
  readonly sessionId: string;
  readonly digest: string;
  /** Every event of the turn, as ADK produced them. */
  readonly events: readonly Event[];
  /** The text of the final response (or, with a notice, the last progress text when there was none). */
  readonly reply: string;
  /** The agent that gave the reply. */
  readonly author?: string;
  /** Every agent that produced an event in this turn, in order (the root's transfers). */
  readonly agents: readonly string[];
  /**
   * Set when the turn failed: what the called agent answered (`billing_agent answered 401
   * Unauthorized at https://…/jsonrpc`) when its call failed at the HTTP level, else the peer's
   * own message where it gave one.
   */
  readonly error?: string;
  /** Set when the turn failed and the agent it called is known: that agent, and its error. */
  readonly failure?: TurnFailure;
  /** Things the user should know: a fallback answered, the session had expired, no final answer. */
  readonly notices: readonly string[];
  /**
   * Set when the turn's `signal` aborted it: its A2A requests were cut, nothing after the abort
   * was stored (the user message stays in the history, without a reply), `error` says why.
   */
  readonly aborted?: true;
}

/**
 * The agent a failed turn called and what it answered: the agent whose A2A call failed (noted
 * by its fetch, remote/turn-signal.ts), else the author of the failing event, else the agent the
 * router chose for the message (`explainRoute`).
 */
export interface TurnFailure {
  /** Its local name. */
  readonly agent: string;
  /** One sentence naming the agent and its error (URLs redacted, no credential). */
  readonly message: string;
  /** The HTTP status it answered, when its call got one. */
  readonly status?: number;
  /** The URL called (redacted), when the call failed at the HTTP level. */
  readonly url?: string;
}

/** Options of {@link SessionRunner.run}. */
export interface RunTurnOptions {
  /** The ADK user id the session is stored under. Default `user`. */
  userId?: string;
  /**
   * Ends the turn early (e.g. its HTTP client went away): the A2A requests the turn has in flight
   * are aborted (the peer sees its connection closed; through the policy fetch, see
   * `createPolicyFetch`), ADK stops and stores no further event, and the result has `aborted`.
   */
  signal?: AbortSignal;
  /**
   * For a NEW session: start it on the retained snapshot with this digest rather than the current
   * one (see `TreeFactory.pin`), e.g. to compare how two snapshots answer the same question.
   */
  startOn?: string;
}

/**
 * @example
 * const sessions = new SessionRunner({ trees });
 * const turn = await sessions.run('s1', 'Is serial 123 under warranty?');
 * turn.author // 'warranty_agent'; turn.digest // the snapshot s1 is pinned to
 * sessions.close();
 */
export class SessionRunner {
  readonly #trees: TreeFactory;
  readonly #appName: string;
  readonly #sessions: BaseSessionService;
  readonly #runners = new Map<string, { root: BaseAgent; runner: Runner }>();
  /** The user id each pinned session was created under (its ADK session key). */
  readonly #users = new Map<string, string>();
  /**
   * Sessions whose history this runner created or found since they were pinned, by the user id
   * it is stored under: their turns skip the read that asks whether it exists (on PostgreSQL a
   * round trip of 1–2 ms a turn). Freed with the pin.
   */
  readonly #stored = new Map<string, string>();
  readonly #deletions = new Set<Promise<void>>();
  readonly #unsubscribe: Array<() => void>;
  readonly #events: EventStream | undefined;
  readonly #calls: CallHealth | undefined;
  readonly #foreground: Foreground | undefined;

  constructor(options: SessionRunnerOptions) {
    this.#calls = options.calls;
    this.#foreground = options.foreground;
    this.#trees = options.trees;
    this.#appName = options.appName ?? 'a2a_discovery';
    this.#sessions = options.sessionService ?? new InMemorySessionService();
    this.#events = options.events;
    this.#unsubscribe = [
      this.#trees.onEvict((digest) => this.#runners.delete(digest)),
      this.#trees.onRelease((sessionId, why) => this.#released(sessionId, why)),
    ];
  }

  get appName(): string {
    return this.#appName;
  }

  get sessionService(): BaseSessionService {
    return this.#sessions;
  }

  /**
   * Runs one turn of `sessionId` (created on first use) on its pinned tree. A session that idled
   * out starts anew on the current snapshot, with a notice: its old history was deleted with
   * its pin, so it never runs on a tree its history does not fit.
   *
   * With `options.signal`, an abort ends the turn at once (see {@link RunTurnOptions.signal}); the
   * session stays pinned and usable for the next turn.
   *
   * With an OpenTelemetry SDK installed, the turn is an `a2a_discovery.chat.turn` span (session
   * id, pinned digest and version, the agents that answered, status ERROR with `error.type` when
   * the turn failed), the parent of ADK's `invoke_agent` spans and of the A2A client spans.
   */
  run(sessionId: string, message: string, options: RunTurnOptions = {}): Promise<TurnResult> {
    return withSpan(SPAN.chatTurn, { attributes: { [ATTR.sessionId]: sessionId } }, async (span) => {
      const started = performance.now();
      // A turn in flight: a card cache given the same foreground starts fewer refreshes meanwhile.
      const leave = this.#foreground?.enter();
      const { turn, errorType } = await this.#run(span, sessionId, message, options).finally(leave);
      if (this.#calls !== undefined && turn.aborted !== true) recordTurnCalls(this.#calls, turn, performance.now() - started, (name) => this.#trees.agentOf(turn.digest, name));
      if (span.recording) {
        span.set({ [ATTR.chatAgents]: turn.agents, ...(turn.failure !== undefined && { [ATTR.chatFailedAgent]: turn.failure.agent }) });
        if (turn.error !== undefined) span.fail(new Error(spanText(turn.error)), turn.aborted === true ? 'aborted' : (errorType ?? '_OTHER'));
      }
      return turn;
    });
  }

  async #run(span: SpanScope, sessionId: string, message: string, options: RunTurnOptions): Promise<{ turn: TurnResult; errorType?: string }> {
    const userId = options.userId ?? 'user';
    const { root, digest, restartedFrom } = this.#trees.pin(sessionId, options.startOn === undefined ? {} : { startOn: options.startOn });
    if (span.recording) span.set({ [ATTR.snapshotDigest]: digest, [ATTR.snapshotVersion]: this.#trees.versionOf(digest) });
    this.#users.set(sessionId, userId);
    const notices: string[] = [];
    if (restartedFrom !== undefined) {
      await Promise.all(this.#deletions);
      await this.#deleteHistory(sessionId, userId);
      notices.push(`session ${sessionId} had expired (idle); it starts anew on snapshot ${digest.slice(0, 12)} without its earlier history`);
    }
    const runner = this.#runnerFor(digest, root);
    const create = async () => {
      await this.#sessions.createSession({ appName: this.#appName, userId, sessionId, state: { pinned_digest: digest } });
      this.#stored.set(sessionId, userId);
    };
    const known = this.#stored.get(sessionId) === userId;
    if (!known) {
      // Whether it exists: its latest event is enough (the runner reads the whole session next).
      const existing = await this.#sessions.getSession({ appName: this.#appName, userId, sessionId, config: { numRecentEvents: 1 } });
      if (existing) this.#stored.set(sessionId, userId);
      else await create();
    }
    const route = explainRoute(root, message);
    if (route?.notice !== undefined) notices.push(route.notice);

    const events: Event[] = [];
    const agents: string[] = [];
    let reply = '';
    let author: string | undefined;
    let progress: { text: string; author: string } | undefined;
    let error: string | undefined;
    /** The failing event's `errorCode` (or the thrown error's name): the turn span's `error.type`. */
    let errorType: string | undefined;
    /** The turn's failed A2A calls, noted by each remote agent's fetch (remote/turn-signal.ts). */
    const failedCalls: AgentCallFailure[] = [];
    /** The author of the event that carried the error. */
    let errorAuthor: string | undefined;
    const { signal } = options;
    // ADK's abortSignal stops its loop between events (and keeps it from storing later ones); the
    // turn signal reaches the A2A requests themselves (remote/turn-signal.ts), and the digest
    // their client spans; the agent fetch adds what it repaired in an answer to the notices.
    const runTurn = () => withTurn({ signal, digest, notice: (text) => notices.push(text), failures: failedCalls }, async () => {
      try {
        const request = { userId, sessionId, newMessage: { role: 'user', parts: [{ text: message }] }, ...(signal !== undefined && { abortSignal: signal }) };
        const turnEvents = async function* (): AsyncGenerator<Event> {
          try {
            yield* runner.runAsync(request);
          } catch (err) {
            // Deleted since this runner last saw it (another replica ended it, a restore): it
            // starts anew, as it would have had its existence been asked.
            if (!known || events.length > 0 || !sessionNotFound(err)) throw err;
            await create();
            yield* runner.runAsync(request);
          }
        };
        for await (const event of turnEvents()) {
          events.push(event);
          if (event.author && event.author !== 'user' && agents.at(-1) !== event.author) agents.push(event.author);
          if (event.errorMessage) {
            error = event.errorMessage;
            errorType = event.errorCode || undefined;
            errorAuthor = event.author && event.author !== 'user' ? event.author : undefined;
          }
          const text = contentText(event.content);
          if (!text || !event.author || event.author === 'user') continue;
          if (event.partial) progress = { text, author: event.author };
          else {
            reply = text;
            author = event.author;
          }
        }
      } catch (err) {
        error = err instanceof Error ? err.message : String(err);
        errorType = err instanceof Error ? err.name : undefined;
      }
    });
    // The turn's events are stored together when it ends, where the service can (`BatchedAppends`).
    try {
      const batched = batchedAppends(this.#sessions);
      await (batched === undefined ? runTurn() : batched.batchAppends({ appName: this.#appName, userId, sessionId }, runTurn));
    } catch (err) {
      error = `the turn's history could not be stored: ${err instanceof Error ? err.message : String(err)}`;
      errorType = err instanceof Error ? err.name : undefined;
    }
    if (signal?.aborted === true) {
      const why = signal.reason instanceof Error ? signal.reason.message : String(signal.reason ?? 'aborted');
      return { turn: { sessionId, digest, events, reply: '', agents, notices, aborted: true, error: `the turn was aborted: ${why}` } };
    }
    if (reply === '' && error === undefined) {
      const who = agents.at(-1) ?? 'the agent';
      if (progress) {
        reply = progress.text;
        author = progress.author;
        notices.push(`${progress.author} gave no final answer; this is its last progress update`);
      } else {
        error = `${who} ended the turn without any reply text`;
        errorType = 'no_reply';
      }
    }
    // The specialist called: a leaf of the tree (not the root, not a domain router).
    const called = [errorAuthor, agents.at(-1), route?.agent].find((name) => name !== undefined && root.findAgent(name)?.subAgents.length === 0);
    const failure = error === undefined ? undefined : turnFailure(error, failedCalls, called);
    if (failure !== undefined) {
      // The agent called is one of the turn's agents, even when it produced no event.
      if (!agents.includes(failure.agent)) agents.push(failure.agent);
      if (failure.url !== undefined) error = failure.message;
      if (failure.status !== undefined && errorType === undefined) errorType = String(failure.status);
    }
    const turn: TurnResult = { sessionId, digest, events, reply, agents, notices, ...(author !== undefined && { author }), ...(error !== undefined && { error }), ...(failure !== undefined && { failure }) };
    return { turn, ...(errorType !== undefined && { errorType }) };
  }

  /** The ADK user id a pinned session's history is stored under. */
  userOf(sessionId: string): string | undefined {
    return this.#users.get(sessionId);
  }

  /** Restores a pinned session's user id recorded by an earlier process. */
  restoreUser(sessionId: string, userId: string): void {
    this.#users.set(sessionId, userId);
  }

  /** Agent names the session's history contains (event authors other than the user). */
  async authors(sessionId: string, userId = this.#users.get(sessionId) ?? 'user'): Promise<string[]> {
    const session = await this.#sessions.getSession({ appName: this.#appName, userId, sessionId });
    return [...new Set((session?.events ?? []).map((e) => e.author).filter((a): a is string => a !== undefined && a !== 'user'))];
  }

  /** Moves a session to the current snapshot, refusing when its history names a vanished agent. */
  async upgrade(sessionId: string, options: { userId?: string; force?: boolean } = {}): Promise<{ from: string; to: string; changed: boolean }> {
    const authors = await this.authors(sessionId, options.userId);
    return this.#trees.upgrade(sessionId, { authors, ...(options.force !== undefined && { force: options.force }) });
  }

  /** Ends a session: its pin is released and its stored events are deleted. */
  async end(sessionId: string, userId?: string): Promise<void> {
    const user = userId ?? this.#users.get(sessionId) ?? 'user';
    this.#trees.endSession(sessionId);
    await Promise.all(this.#deletions);
    await this.#deleteHistory(sessionId, user);
  }

  /** Digests with a live runner. */
  get runnerDigests(): string[] {
    return [...this.#runners.keys()];
  }

  /** Waits for history deletions in progress and stops listening to the tree factory. */
  async close(): Promise<void> {
    for (const off of this.#unsubscribe.splice(0)) off();
    await Promise.all(this.#deletions);
    this.#runners.clear();
  }

  #released(sessionId: string, why: PinRelease): void {
    const userId = this.#users.get(sessionId) ?? 'user';
    this.#users.delete(sessionId);
    this.#stored.delete(sessionId);
    // An ended session's history is deleted by `end`; an expired one's here, with its pin.
    if (why !== 'expired') return;
    const p: Promise<void> = this.#deleteHistory(sessionId, userId)
      .catch((err: unknown) => {
        this.#events?.emit({ type: 'alert', kind: 'session-delete-failed', message: `the history of expired session ${sessionId} could not be deleted: ${err instanceof Error ? err.message : String(err)}` });
      })
      .finally(() => this.#deletions.delete(p));
    this.#deletions.add(p);
  }

  #deleteHistory(sessionId: string, userId: string): Promise<void> {
    this.#stored.delete(sessionId);
    return this.#sessions.deleteSession({ appName: this.#appName, userId, sessionId });
  }

  #runnerFor(digest: string, root: BaseAgent): Runner {
    const existing = this.#runners.get(digest);
    if (existing && existing.root === root) return existing.runner;
    const runner = new Runner({ agent: root, appName: this.#appName, sessionService: this.#sessions });
    this.#runners.set(digest, { root, runner });
    return runner;
  }
}

/**
 * Counts a turn's calls: each specialist of the snapshot that took part (an author, or the agent
 * a failure names) made one call, failed when the turn's failure names it. The error class is the
 * HTTP status it answered (`http_503`), `network` when no answer came, `no_reply` or `rpc` (it
 * answered with an error).
 */
function recordTurnCalls(calls: CallHealth, turn: TurnResult, latencyMs: number, agentOf: (name: string) => SnapshotAgent | undefined): void {
  for (const name of turn.agents) {
    const agent = agentOf(name);
    if (agent === undefined) continue;
    const failed = turn.failure?.agent === name;
    const f = turn.failure;
    const errorClass = !failed || f === undefined ? undefined : f.status !== undefined ? `http_${f.status}` : f.url !== undefined ? 'network' : turn.reply === '' && /without any reply/.test(turn.error ?? '') ? 'no_reply' : 'rpc';
    const interfaceUrl = failed && f?.url !== undefined ? f.url : preferredInterface(agent.card, undefined, agent.transport?.tenant === undefined ? {} : { tenant: agent.transport.tenant })?.url;
    calls.record({
      agent: name,
      baseUrl: agent.baseUrl,
      digest: turn.digest,
      ok: !failed,
      latencyMs,
      source: 'turn',
      ...(errorClass !== undefined && { errorClass }),
      ...(failed && f !== undefined && { message: f.message }),
      ...(interfaceUrl !== undefined && { interfaceUrl: redactUrl(interfaceUrl) }),
    });
  }
}

/**
 * What a failed turn says about the agent it called: the last failed call of that agent (or, with
 * no agent known from the events, the last failed call), else that agent with the turn's error.
 */
function turnFailure(error: string, calls: readonly AgentCallFailure[], called: string | undefined): TurnFailure | undefined {
  const call = [...calls].reverse().find((c) => called === undefined || c.agent === called);
  if (call !== undefined) return { agent: call.agent, message: call.message, url: call.url, ...(call.status !== undefined && { status: call.status }) };
  if (called === undefined) return undefined;
  return { agent: called, message: error.startsWith(called) ? error : `${called} failed: ${error}` };
}

/** ADK's Runner found no session to run the turn on (its message is the only sign: `Session not found: <id>`). */
function sessionNotFound(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('Session not found');
}
