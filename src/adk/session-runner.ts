/**
 * Runs conversation turns on pinned trees: one ADK `Runner` per digest, all sharing one session
 * service, so a session always runs on the tree it started with (ADK resolves the next agent from
 * stored event authors by name: an old session on a new tree could transfer to a vanished agent).
 */
import type { BaseAgent, BaseSessionService, Event } from '@google/adk';
import { InMemorySessionService, Runner } from '@google/adk';
import type { TreeFactory } from './tree-factory.js';

export interface SessionRunnerOptions {
  trees: TreeFactory;
  /** One app name for every runner (sessions are keyed by it). Default `a2a_discovery`. */
  appName?: string;
  /** Shared by every runner. Default an `InMemorySessionService`. */
  sessionService?: BaseSessionService;
}

export interface TurnResult {
  readonly sessionId: string;
  readonly digest: string;
  /** Every event of the turn, as ADK produced them. */
  readonly events: readonly Event[];
  /** The text of the final response. */
  readonly reply: string;
  /** The agent that gave the final response. */
  readonly author?: string;
  /** Set when the turn ended with an error event. */
  readonly error?: string;
}

/**
 * @example
 * const sessions = new SessionRunner({ trees });
 * const turn = await sessions.run('s1', 'Is serial 123 under warranty?');
 * turn.author // 'warranty_agent'; turn.digest // the snapshot s1 is pinned to
 */
export class SessionRunner {
  readonly #trees: TreeFactory;
  readonly #appName: string;
  readonly #sessions: BaseSessionService;
  readonly #runners = new Map<string, { root: BaseAgent; runner: Runner }>();
  readonly #unsubscribe: () => void;

  constructor(options: SessionRunnerOptions) {
    this.#trees = options.trees;
    this.#appName = options.appName ?? 'a2a_discovery';
    this.#sessions = options.sessionService ?? new InMemorySessionService();
    this.#unsubscribe = this.#trees.onEvict((digest) => this.#runners.delete(digest));
  }

  get appName(): string {
    return this.#appName;
  }

  get sessionService(): BaseSessionService {
    return this.#sessions;
  }

  /** Runs one turn of `sessionId` (created on first use) on its pinned tree. */
  async run(sessionId: string, message: string, options: { userId?: string } = {}): Promise<TurnResult> {
    const userId = options.userId ?? 'user';
    const root = this.#trees.rootFor(sessionId);
    const digest = this.#trees.digestOf(sessionId)!;
    const runner = this.#runnerFor(digest, root);
    const existing = await this.#sessions.getSession({ appName: this.#appName, userId, sessionId });
    if (!existing) await this.#sessions.createSession({ appName: this.#appName, userId, sessionId, state: { pinned_digest: digest } });

    const events: Event[] = [];
    let reply = '';
    let author: string | undefined;
    let error: string | undefined;
    try {
      for await (const event of runner.runAsync({ userId, sessionId, newMessage: { role: 'user', parts: [{ text: message }] } })) {
        events.push(event);
        if (event.errorMessage) error = event.errorMessage;
        const text = (event.content?.parts ?? []).map((p) => ('text' in p && typeof p.text === 'string' ? p.text : '')).join('');
        if (text && event.author && event.author !== 'user' && !event.partial) {
          reply = text;
          author = event.author;
        }
      }
    } catch (err) {
      error = err instanceof Error ? err.message : String(err);
    }
    return { sessionId, digest, events, reply, ...(author !== undefined && { author }), ...(error !== undefined && { error }) };
  }

  /** Agent names the session's history contains (event authors other than the user). */
  async authors(sessionId: string, userId = 'user'): Promise<string[]> {
    const session = await this.#sessions.getSession({ appName: this.#appName, userId, sessionId });
    return [...new Set((session?.events ?? []).map((e) => e.author).filter((a): a is string => a !== undefined && a !== 'user'))];
  }

  /** Moves a session to the current snapshot, refusing when its history names a vanished agent. */
  async upgrade(sessionId: string, options: { userId?: string; force?: boolean } = {}): Promise<{ from?: string; to: string; changed: boolean }> {
    const authors = await this.authors(sessionId, options.userId);
    return this.#trees.upgrade(sessionId, { authors, ...(options.force !== undefined && { force: options.force }) });
  }

  /** Ends a session: its pin is released and its stored events are deleted. */
  async end(sessionId: string, userId = 'user'): Promise<void> {
    this.#trees.endSession(sessionId);
    await this.#sessions.deleteSession({ appName: this.#appName, userId, sessionId });
  }

  /** Digests with a live runner. */
  get runnerDigests(): string[] {
    return [...this.#runners.keys()];
  }

  close(): void {
    this.#unsubscribe();
    this.#runners.clear();
  }

  #runnerFor(digest: string, root: BaseAgent): Runner {
    const existing = this.#runners.get(digest);
    if (existing && existing.root === root) return existing.runner;
    const runner = new Runner({ agent: root, appName: this.#appName, sessionService: this.#sessions });
    this.#runners.set(digest, { root, runner });
    return runner;
  }
}
