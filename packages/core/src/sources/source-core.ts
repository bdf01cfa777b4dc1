/**
 * Internal: the state, listeners and reporting every source shares. A source calls
 * {@link SourceCore.succeed} with a complete new list or {@link SourceCore.fail} with an error;
 * the core keeps the last good list, notifies listeners only when the list changed, and emits
 * `source-problem` alerts and an edge-triggered `source-error` alert: raised when the source
 * starts failing (key `source-error:<id>`), resolved (`alert.resolved`) by its next good list.
 * One an earlier process left open is carried ({@link SourceCore.carryError}), not raised again.
 */
import { DiscoveryError, type Problem } from '../errors.js';
import { systemClock, type Clock } from '../clock/index.js';
import type { EventStream } from '../events/index.js';
import { sourceIdProblem } from '../rules/ids.js';
import type { EndpointRecord, Source, SourceKind, SourceListener, SourceState } from './types.js';
import { transportKey } from './transport-options.js';
import { describe } from '../text.js';
import { frozenCopy } from '../rules/frozen.js';

/** Options every source accepts for observability and time. */
export interface SourceCoreOptions {
  events?: EventStream | undefined;
  clock?: Clock | undefined;
}

export class SourceCore {
  readonly id: string;
  readonly kind: SourceKind;
  readonly clock: Clock;
  readonly #events: EventStream | undefined;
  readonly #listeners = new Set<SourceListener>();
  #state: SourceState = Object.freeze({ records: Object.freeze([]), ok: true, synced: false });
  /** Problems already alerted, so a list that keeps the same bad entry does not alert each time. */
  #reported = new Set<string>();
  /** When the current `source-error` was raised (for its resolution). */
  #errorRaisedAt: number | undefined;
  /** An earlier process's `source-error` still open (see {@link SourceCore.carryError}). */
  #carried = false;

  constructor(id: string, kind: SourceKind, options: SourceCoreOptions = {}) {
    this.id = id;
    this.kind = kind;
    this.clock = options.clock ?? systemClock;
    this.#events = options.events;
  }

  get state(): SourceState {
    return this.#state;
  }

  /** A successful list: replaces the records, clears the error, notifies if the list changed. */
  succeed(records: readonly EndpointRecord[], problems: readonly Problem[] = []): SourceState {
    const previous = this.#state;
    const frozen = Object.freeze(records.map(freezeRecord));
    const changed = !sameRecords(previous.records, frozen);
    if (!previous.ok || this.#carried) this.#resolveError(previous.error);
    this.#carried = false;
    this.#state = Object.freeze({
      records: changed ? frozen : previous.records,
      ok: true,
      updatedAt: this.clock.wallNow(),
      synced: true,
      ...(problems.length > 0 && { problems: Object.freeze(problems.map((p) => frozenCopy(p))) }),
    });
    this.#reportProblems(problems);
    if (changed) this.notify();
    return this.#state;
  }

  /**
   * A failed refresh: keeps the last good list and records the error. The first failure after a
   * good list (or at start) raises the `source-error` alert; further failures do not repeat it.
   */
  fail(error: DiscoveryError): SourceState {
    const previous = this.#state;
    const raise = previous.ok && !this.#carried;
    this.#carried = false;
    this.#state = Object.freeze({
      records: previous.records,
      ok: false,
      error,
      synced: previous.synced,
      ...(previous.updatedAt !== undefined && { updatedAt: previous.updatedAt }),
      ...(previous.problems !== undefined && { problems: previous.problems }),
    });
    if (raise) this.#raiseError(error, previous.records.length);
    return this.#state;
  }

  /**
   * Takes over a `source-error` an earlier process raised and did not resolve (`Source.carryError`):
   * the next failure does not raise it again, the next good list resolves it with `raisedAt`.
   * Ignored while this process has an error of its own.
   */
  carryError(alert: { raisedAt: number }): void {
    if (!this.#state.ok) return;
    this.#carried = true;
    this.#errorRaisedAt = alert.raisedAt;
  }

  #raiseError(error: DiscoveryError, kept: number): void {
    this.#errorRaisedAt = this.clock.wallNow();
    this.alert('source-error', `source ${this.id}: ${error.message}`, {
      code: error.code,
      ...(error.url !== undefined && { url: error.url }),
      ...(error.status !== undefined && { status: error.status }),
      ...(error.problems.length > 0 && { problems: error.problems }),
      kept,
    }, `source-error:${this.id}`);
  }

  #resolveError(error: DiscoveryError | undefined): void {
    this.#events?.emit({
      type: 'alert.resolved',
      kind: 'source-error',
      key: `source-error:${this.id}`,
      message: `resolved: source ${this.id} lists again${error ? ` (it had failed: ${error.message})` : ''}`,
      raisedAt: this.#errorRaisedAt ?? this.clock.wallNow(),
    });
  }

  /** Emits an operator alert about this source (no-op without an event stream). */
  alert(kind: string, message: string, detail: Record<string, unknown> = {}, key?: string): void {
    this.#events?.emit({ type: 'alert', kind, message, ...(key !== undefined && { key }), detail: { source: this.id, sourceKind: this.kind, ...detail } });
  }

  subscribe(listener: SourceListener): () => void {
    const entry: SourceListener = (state) => listener(state);
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  notify(): void {
    const state = this.#state;
    for (const listener of [...this.#listeners]) {
      try {
        listener(state);
      } catch (err) {
        this.alert('source-listener-error', `source ${this.id}: a subscriber threw: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
  }

  clearListeners(): void {
    this.#listeners.clear();
  }

  #reportProblems(problems: readonly Problem[]): void {
    const now = new Set<string>();
    for (const p of problems) {
      const key = `${p.path}\u0000${p.message}`;
      now.add(key);
      if (!this.#reported.has(key)) this.alert('source-problem', `source ${this.id}: ${p.path}: ${p.message}`, { path: p.path });
    }
    this.#reported = now;
  }
}

function freezeRecord(record: EndpointRecord): EndpointRecord {
  if (Object.isFrozen(record) && Object.isFrozen(record.metadata) && (record.transport === undefined || Object.isFrozen(record.transport))) return record;
  return Object.freeze({
    name: record.name,
    baseUrl: record.baseUrl,
    source: record.source,
    metadata: frozenCopy(record.metadata),
    ...(record.transport !== undefined && { transport: frozenCopy(record.transport) }),
  });
}

function sameRecords(a: readonly EndpointRecord[], b: readonly EndpointRecord[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x.name !== y.name || x.baseUrl !== y.baseUrl || x.source !== y.source || transportKey(x.transport) !== transportKey(y.transport)) return false;
    const xk = Object.keys(x.metadata);
    const yk = Object.keys(y.metadata);
    if (xk.length !== yk.length) return false;
    for (const k of xk) if (x.metadata[k] !== y.metadata[k]) return false;
  }
  return true;
}

/** Why a value is not a positive integer (milliseconds, counts), in the one sentence every source factory gives. */
export function positiveIntProblem(value: unknown): string | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? undefined : `must be a positive integer, got ${describe(value)}`;
}

/** How many problems an options error's message lists; its `problems` has every one. */
const LISTED_PROBLEMS = 10;

/** Collects option problems and throws one `ERR_CONFIG_INVALID` with all of them. */
export class OptionProblems {
  readonly problems: Problem[] = [];
  constructor(readonly what: string) {}

  add(path: string, message: string): void {
    this.problems.push({ path, message });
  }

  /** A source id (`rules/ids.ts`): 1–64 characters, letters, digits, `.`, `_`, `-`, starting with a letter or digit. */
  id(value: unknown, path = 'id'): string {
    const problem = sourceIdProblem(value);
    if (problem !== undefined) {
      this.add(path, problem);
      return '';
    }
    return value as string;
  }

  /** An optional positive integer (ms, counts). */
  positiveInt(value: unknown, path: string): number | undefined {
    if (value === undefined) return undefined;
    const problem = positiveIntProblem(value);
    if (problem !== undefined) {
      this.add(path, problem);
      return undefined;
    }
    return value as number;
  }

  /**
   * Throws one `ERR_CONFIG_INVALID` listing the first {@link LISTED_PROBLEMS} problems in its
   * message (a static list of 5,000 misnamed agents made a message of 650 KB) and every one in
   * `problems`.
   */
  throwIfAny(): void {
    if (this.problems.length === 0) return;
    const first = this.problems[0]!;
    const listed = this.problems.slice(0, LISTED_PROBLEMS).map((p) => `${p.path}: ${p.message}`);
    if (this.problems.length > LISTED_PROBLEMS) listed.push(`and ${this.problems.length - LISTED_PROBLEMS} more (the error's \`problems\` has each)`);
    throw new DiscoveryError('ERR_CONFIG_INVALID', `${this.what}: ${this.problems.length} problem(s): ${listed.join('; ')}`, {
      stage: 'config',
      path: first.path,
      problems: this.problems,
    });
  }
}

/**
 * A source whose list is known at construction (static configuration, a list of domains): synced
 * before any I/O, and a refresh only re-announces the same list.
 */
export class FixedListSource implements Source {
  readonly id: string;
  readonly kind: SourceKind;
  readonly pollIntervalMs?: number;
  readonly #core: SourceCore;

  constructor(id: string, kind: SourceKind, records: readonly EndpointRecord[], options: { clock?: Clock | undefined; pollIntervalMs?: number | undefined } = {}) {
    this.id = id;
    this.kind = kind;
    if (options.pollIntervalMs !== undefined) this.pollIntervalMs = options.pollIntervalMs;
    this.#core = new SourceCore(id, kind, { clock: options.clock });
    this.#core.succeed(records);
  }

  async refresh(): Promise<SourceState> {
    return this.#core.succeed(this.#core.state.records);
  }

  current(): SourceState {
    return this.#core.state;
  }

  subscribe(listener: SourceListener): () => void {
    return this.#core.subscribe(listener);
  }

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.#core.clearListeners();
  }
}
