/**
 * {@link ActiveCheck}: health from a real call, made on a schedule to each agent of the current
 * snapshot, so an agent whose card fetches fine but whose A2A endpoint fails is seen before a
 * user's turn meets it.
 *
 * The call is the cheapest side-effect-free request of the A2A spec: `GetTask` for an id that
 * cannot exist (`a2ad-check-<uuid>`), answered by a working agent with the spec's TaskNotFound.
 * It goes to the interface the orchestrator calls (`reviewedInterface` then `preferredInterface`,
 * as `remoteAgentFor` chooses), with that agent's `A2A-Version` and extra headers
 * (`setAgentHeaders`, as its calls) and its timeout, through the policy fetch the remote agents use (allowlist, guarded DNS, no
 * redirects, credentials to their own origin only) and, when given, within the upstream budget
 * of the origin (never waiting for it).
 *
 * | interface | request | success |
 * |---|---|---|
 * | JSONRPC, A2A 1.x | `POST {url}` `{"method":"GetTask","params":{"id","tenant"?}}` | JSON-RPC error -32001 |
 * | JSONRPC, A2A 0.2/0.3 | `POST {url}` `{"method":"tasks/get","params":{"id"}}` | JSON-RPC error -32001 |
 * | HTTP+JSON, A2A 1.x | `GET {url}[/{tenant}]/tasks/{id}` | 404 with reason `TASK_NOT_FOUND` |
 * | HTTP+JSON, A2A 0.2/0.3 | `GET {url}/v1/tasks/{id}` | 404 with code -32001 |
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import type { AgentCardModel, ChosenInterface } from '../card/index.js';
import { preferredInterface, reviewedInterface } from '../card/index.js';
import type { Clock, Random, TimerHandle } from '../clock/index.js';
import { systemClock, systemRandom } from '../clock/index.js';
import { DiscoveryError, isDiscoveryError } from '../errors.js';
import type { DiscoveryErrorCode } from '../errors.js';
import type { EventStream } from '../events/index.js';
import type { HostPolicy, OriginBudget } from '../fetch/index.js';
import { NetworkOptionCheck, readBoundedStream, redactUrl } from '../fetch/index.js';
import { backoffDelay } from '../rules/backoff.js';
import { setAgentHeaders } from '../rules/headers.js';
import type { TransportOptions } from '../sources/index.js';
import { describe } from '../text.js';

/** One agent to check: what the current snapshot says of it (see `SnapshotAgent`). */
export interface ActiveCheckTarget {
  /** The agent's local name (our configuration's), the key of its schedule. */
  readonly localName: string;
  /** The endpoint the agent was discovered at. */
  readonly baseUrl: string;
  /** Its card, as parsed and normalized. */
  readonly card: AgentCardModel;
  /** How it is called: `tenant`, `interfaceUrl`, extra `headers`, `timeoutMs` apply to the check too. */
  readonly transport?: TransportOptions;
}

/**
 * Why a check failed: `http_<status>` (an answer that is not 2xx and not the spec's
 * TaskNotFound), `timeout` (no answer within `timeoutMs`), `network` (refused, reset, DNS),
 * `refused` (the host policy refused the request: nothing was sent), `protocol` (an answer that is
 * not the spec's: not JSON-RPC, another JSON-RPC error, a task for an id that cannot exist).
 */
export type ActiveCheckErrorClass = `http_${number}` | 'timeout' | 'network' | 'refused' | 'protocol';

/** What one check found. */
export interface ActiveCheckResult {
  /** The agent checked (its {@link ActiveCheckTarget.localName}). */
  readonly localName: string;
  /** The endpoint it was discovered at. */
  readonly baseUrl: string;
  /** The interface called (redacted). */
  readonly interfaceUrl: string;
  /** The agent answered the spec's TaskNotFound. */
  readonly ok: boolean;
  /** From sending the request to reading its answer, on the injected clock. 0 when nothing was sent. */
  readonly latencyMs: number;
  /** Absent when `ok`. */
  readonly errorClass?: ActiveCheckErrorClass;
  /** The error code of a `refused`, `timeout` or `network` failure. */
  readonly code?: DiscoveryErrorCode;
  /** Absent when `ok`: the agent's name and what happened, URLs redacted. */
  readonly message?: string;
}

/** Inputs of {@link ActiveCheck}. Durations in milliseconds. */
export interface ActiveCheckOptions {
  /** The agents to check, read at every tick (the current snapshot's agents). */
  targets: () => readonly ActiveCheckTarget[];
  /** The host policy of the orchestrator's remote agents: the interface is chosen among those it admits. Required. */
  policy: HostPolicy;
  /**
   * The policy fetch the orchestrator's remote agents use (`createPolicyFetch`): every check goes
   * through it. Not closed by {@link ActiveCheck.close}.
   */
  fetch: typeof fetch;
  /** Schedule and deadlines. Default the system clock. */
  clock?: Clock;
  /** Jitter of the schedule. Default `Math.random`. */
  random?: Random;
  /** Each agent is checked this often, ±10 % at random. Default 60000. */
  intervalMs?: number;
  /** Bound on one check, from sending to the answer read (an agent's own `transport.timeoutMs` may shorten it). Default 5000. */
  timeoutMs?: number;
  /** Checks in flight at most, over every agent. Default 4. */
  maxConcurrent?: number;
  /** The upstream budget per origin shared with discovery: a check takes a token or is skipped, never waits. */
  originBudget?: OriginBudget;
  /** Told of each result (skipped checks and checks cut by `close()` are not results). */
  onResult: (result: ActiveCheckResult) => void;
  /** Where an agent that cannot be checked (no JSONRPC or HTTP+JSON interface, e.g. gRPC only) is told, once: an `alert` of kind `active-check-skipped`. */
  events?: EventStream;
}

/** Counters of an {@link ActiveCheck}. */
export interface ActiveCheckStats {
  /** Agents known from the last reading of `targets`. */
  targets: number;
  /** Checks running now (not counting those waiting for a slot). */
  inFlight: number;
  /** Requests handed to the policy fetch. */
  sent: number;
  /** Results with `ok`. */
  ok: number;
  /** Results without `ok` (a policy refusal before sending included). */
  failed: number;
  /** Checks not made: no interface a client here speaks, or the origin's budget was spent. */
  skipped: number;
}

/** The A2A error code of TaskNotFound (JSON-RPC binding, A2A 0.3 and 1.0). */
const TASK_NOT_FOUND = -32001;
/** JSON-RPC's internal error, which ADK JS's `toA2a` answers instead (see {@link judgeJsonRpc}). */
const INTERNAL_ERROR = -32603;
/** An answer to GetTask for an unknown id is a few hundred bytes; nothing more is read. */
const MAX_ANSWER_BYTES = 65_536;
/** The schedule's spread: each interval is drawn from [0.9, 1.1] × `intervalMs`. */
const SPREAD = 0.1;
/** The event stream's `caller` and the alert's kind. */
const CALLER = 'active-check';

interface TargetState {
  target: ActiveCheckTarget;
  /** Monotonic time the next scheduled check is due. */
  dueAt: number;
  inFlight?: Promise<ActiveCheckResult | undefined>;
  /** The agent cannot be checked, and it was said. */
  told: boolean;
}

type Outcome = { kind: 'result'; result: ActiveCheckResult } | { kind: 'skipped' };

/**
 * Calls each agent on a schedule and reports each result. Construction does no I/O; `start()`
 * begins the schedule, `close()` ends it.
 *
 * - Each agent is checked every `intervalMs` ± 10 % (at the default, 60 requests per agent per
 *   hour); a new agent's first check comes at a random point of its first interval, so checks of
 *   many agents never come together. New agents are picked up at the next tick (at most
 *   `intervalMs` later); an agent that left is forgotten.
 * - One check per agent at a time, at most `maxConcurrent` at once; a due check waits for a slot.
 * - A check's failures are results, never exceptions.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` (stage `config`) for bad options.
 * @example
 * const check = new ActiveCheck({ targets: () => loop.current()?.agents ?? [], policy, fetch: policyFetch, onResult: (r) => calls.record(r) });
 * check.start();
 * // ... later
 * await check.close();
 */
export class ActiveCheck {
  readonly #o: Required<Pick<ActiveCheckOptions, 'intervalMs' | 'timeoutMs' | 'maxConcurrent' | 'clock' | 'random'>> & ActiveCheckOptions;
  readonly #states = new Map<string, TargetState>();
  readonly #controllers = new Set<AbortController>();
  readonly #waiters: Array<() => void> = [];
  readonly #stats = { sent: 0, ok: 0, failed: 0, skipped: 0 };
  #active = 0;
  #timer: TimerHandle | undefined;
  #started = false;
  #closed = false;

  constructor(options: ActiveCheckOptions) {
    const check = new NetworkOptionCheck('active check', options);
    const intervalMs = check.positive('intervalMs', 60_000);
    const timeoutMs = check.positive('timeoutMs', 5_000);
    const maxConcurrent = check.positive('maxConcurrent', 4, true);
    check.fn('targets', '() => targets');
    check.fn('fetch', '(input, init) => Promise<Response>');
    check.fn('onResult', '(result) => void');
    check.done();
    this.#o = { ...options, intervalMs, timeoutMs, maxConcurrent, clock: options.clock ?? systemClock, random: options.random ?? systemRandom };
  }

  /** Begins the schedule. Idempotent. @throws DiscoveryError `ERR_USAGE` after `close()`. */
  start(): void {
    if (this.#closed) throw new DiscoveryError('ERR_USAGE', 'the active check was closed');
    if (this.#started) return;
    this.#started = true;
    this.#tick();
  }

  /**
   * Checks every agent now (or only `localName`), whatever their schedule, and resolves with the
   * results (each also told to `onResult`). An agent whose check is in flight is not called again:
   * that check's result is returned. Skipped agents give no result.
   *
   * @throws DiscoveryError `ERR_USAGE` after `close()`, or when no current agent is `localName`.
   */
  async checkNow(localName?: string): Promise<ActiveCheckResult[]> {
    if (this.#closed) throw new DiscoveryError('ERR_USAGE', 'the active check was closed');
    this.#sync(this.#o.clock.now());
    const states = localName === undefined ? [...this.#states.values()] : [this.#states.get(localName)];
    if (states[0] === undefined && localName !== undefined) throw new DiscoveryError('ERR_USAGE', `no current agent is named ${describe(localName)}`);
    const results = await Promise.all(states.map((s) => (s === undefined ? undefined : (s.inFlight ?? this.#launch(s)))));
    return results.filter((r): r is ActiveCheckResult => r !== undefined);
  }

  /** The counters (a copy). */
  get stats(): ActiveCheckStats {
    return { targets: this.#states.size, inFlight: this.#active, ...this.#stats };
  }

  /** Stops the schedule and aborts the checks in flight (their results are not told). Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#timer?.cancel();
    this.#timer = undefined;
    const pending = [...this.#states.values()].flatMap((s) => (s.inFlight === undefined ? [] : [s.inFlight]));
    for (const c of this.#controllers) c.abort(new DiscoveryError('ERR_USAGE', 'the active check was closed'));
    for (const wake of this.#waiters.splice(0)) wake();
    await Promise.allSettled(pending);
    this.#states.clear();
  }

  /** Reads the targets, starts the checks that are due and a slot allows, and arms the next tick. */
  #tick(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    if (this.#closed || !this.#started) return;
    const now = this.#o.clock.now();
    this.#sync(now);
    let next = now + this.#o.intervalMs;
    const due = [...this.#states.values()].filter((s) => s.inFlight === undefined).sort((a, b) => a.dueAt - b.dueAt);
    for (const s of due) {
      if (s.dueAt > now) {
        next = Math.min(next, s.dueAt);
        break;
      }
      // A due check left waiting for a slot starts when a running one ends (which ticks again).
      if (this.#active + this.#waiters.length >= this.#o.maxConcurrent) break;
      void this.#launch(s);
    }
    this.#timer = this.#o.clock.setTimer(() => this.#tick(), next - now);
  }

  /** Brings the states in line with the targets: new ones scheduled, departed ones forgotten. */
  #sync(now: number): void {
    let targets: readonly ActiveCheckTarget[];
    try {
      targets = this.#o.targets();
    } catch {
      // The agents are not known right now: the last ones known stay scheduled.
      return;
    }
    const seen = new Set<string>();
    for (const target of targets) {
      seen.add(target.localName);
      const state = this.#states.get(target.localName);
      if (state !== undefined) state.target = target;
      // The first check at a random point of the first interval (the backoff rule with full jitter).
      else this.#states.set(target.localName, { target, dueAt: now + backoffDelay(1, { baseMs: this.#o.intervalMs, maxMs: this.#o.intervalMs, jitter: 1, random: this.#o.random }), told: false });
    }
    for (const name of this.#states.keys()) if (!seen.has(name)) this.#states.delete(name);
  }

  /** Runs one check of `state`'s agent when a slot is free; reports and counts its outcome. */
  #launch(state: TargetState): Promise<ActiveCheckResult | undefined> {
    const { intervalMs, random, clock } = this.#o;
    // interval × [0.9, 1.1]: the backoff rule's jitter around a mean of exactly `intervalMs`.
    const base = intervalMs * (1 + SPREAD);
    state.dueAt = clock.now() + backoffDelay(1, { baseMs: base, maxMs: base, jitter: (2 * SPREAD) / (1 + SPREAD), random });
    const controller = new AbortController();
    this.#controllers.add(controller);
    const run = async (): Promise<ActiveCheckResult | undefined> => {
      await this.#acquire();
      try {
        if (this.#closed) return undefined;
        const outcome = await this.#probe(state, controller.signal);
        if (this.#closed) return undefined;
        if (outcome.kind === 'skipped') {
          this.#stats.skipped++;
          return undefined;
        }
        const { result } = outcome;
        if (result.ok) this.#stats.ok++;
        else this.#stats.failed++;
        try {
          this.#o.onResult(result);
        } catch {
          // A listener's fault is not the agent's.
        }
        return result;
      } finally {
        this.#release();
      }
    };
    const promise = run().finally(() => {
      this.#controllers.delete(controller);
      if (state.inFlight === promise) delete state.inFlight;
      if (this.#started && !this.#closed) this.#tick();
    });
    state.inFlight = promise;
    return promise;
  }

  #acquire(): Promise<void> {
    if (this.#active < this.#o.maxConcurrent) {
      this.#active++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.#waiters.push(() => (this.#active++, resolve())));
  }

  #release(): void {
    this.#active--;
    this.#waiters.shift()?.();
  }

  /** Sends the check of one agent and judges its answer. Never throws. */
  async #probe(state: TargetState, signal: AbortSignal): Promise<Outcome> {
    const { target } = state;
    const { localName, baseUrl, transport } = target;
    const tenant = transport?.tenant === undefined ? {} : { tenant: transport.tenant };
    const { card } = reviewedInterface(target.card, { ...tenant, ...(transport?.interfaceUrl !== undefined && { interfaceUrl: transport.interfaceUrl }) });
    const chosen = preferredInterface(card, this.#o.policy, tenant);
    if (chosen === undefined) {
      const spoken = preferredInterface(card, undefined, tenant);
      if (spoken === undefined) {
        this.#tellSkipped(state, card);
        return { kind: 'skipped' };
      }
      const verdict = this.#o.policy.check(spoken.url);
      const code: DiscoveryErrorCode = verdict.allowed ? 'ERR_HOST_NOT_ALLOWED' : verdict.code;
      const url = redactUrl(spoken.url);
      const message = `${localName}: not checked: the host policy refuses every interface of its card (${code}, first ${url})`;
      return { kind: 'result', result: { localName, baseUrl, interfaceUrl: url, ok: false, latencyMs: 0, errorClass: 'refused', code, message } };
    }
    const budget = this.#o.originBudget;
    if (budget !== undefined && budget.reserve(new URL(chosen.url).origin, 0, CALLER) === undefined) return { kind: 'skipped' };

    const request = checkRequest(chosen, `a2ad-check-${randomUUID()}`);
    const interfaceUrl = redactUrl(chosen.url);
    const say = (what: string): string => `${localName}: the active check (${request.label} on ${interfaceUrl}) ${what}`;
    const fail = (errorClass: ActiveCheckErrorClass, latencyMs: number, message: string, code?: DiscoveryErrorCode): Outcome => ({
      kind: 'result',
      result: { localName, baseUrl, interfaceUrl, ok: false, latencyMs, errorClass, ...(code !== undefined && { code }), message },
    });

    // The agent's calls' headers: its A2A-Version (0.3 from ADK's client, the interface's 1.x from the 1.x client) and extra headers.
    const headers = new Headers(request.init.headers);
    setAgentHeaders(headers, request.url, {
      version: chosen.client === 'adk-0.3' ? '0.3' : (/^1\.\d+/.exec(chosen.protocolVersion)?.[0] ?? '1.0'),
      origin: new URL(chosen.url).origin,
      ...(transport?.headers !== undefined && { headers: transport.headers }),
    });
    const { clock } = this.#o;
    // The agent's own timeoutMs can only shorten the check's, as it shortens its calls'.
    const timeoutMs = Math.min(this.#o.timeoutMs, transport?.timeoutMs ?? Infinity);
    const expired = new DiscoveryError('ERR_FETCH_TIMEOUT', say(`had no answer within ${timeoutMs} ms`), { url: interfaceUrl, stage: 'health' });
    const deadline = new AbortController();
    const timer = clock.setTimer(() => deadline.abort(expired), timeoutMs);
    const started = clock.now();
    this.#stats.sent++;
    try {
      const response = await this.#o.fetch(request.url, { ...request.init, headers, signal: AbortSignal.any([signal, deadline.signal]) });
      const body = await readBoundedStream(response.body, MAX_ANSWER_BYTES);
      const latencyMs = clock.now() - started;
      const verdict = body === undefined ? `answered more than ${MAX_ANSWER_BYTES} bytes` : request.judge(response.status, body);
      if (verdict === undefined) return { kind: 'result', result: { localName, baseUrl, interfaceUrl, ok: true, latencyMs } };
      if (typeof verdict === 'number') return fail(`http_${verdict}`, latencyMs, say(`answered HTTP ${verdict}`));
      return fail('protocol', latencyMs, say(verdict));
    } catch (err) {
      const latencyMs = clock.now() - started;
      if (deadline.signal.aborted || (isDiscoveryError(err) && err.code === 'ERR_FETCH_TIMEOUT')) {
        return fail('timeout', latencyMs, isDiscoveryError(err) && err !== expired ? say(`had no answer in time: ${err.message}`) : expired.message, 'ERR_FETCH_TIMEOUT');
      }
      if (isDiscoveryError(err) && err.failure === 'policy') return fail('refused', latencyMs, say(`was refused by the host policy (${err.code}): ${err.message}`), err.code);
      if (isDiscoveryError(err)) return fail(err.code === 'ERR_BODY_TOO_LARGE' ? 'protocol' : 'network', latencyMs, say(`failed (${err.code}): ${err.message}`), err.code);
      return fail('network', latencyMs, say(`failed: ${err instanceof Error ? err.message : String(err)}`), 'ERR_FETCH_NETWORK');
    } finally {
      timer.cancel();
    }
  }

  /** Says once per agent that it cannot be checked. */
  #tellSkipped(state: TargetState, card: AgentCardModel): void {
    if (state.told) return;
    state.told = true;
    const offered = card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`).join(', ') || 'none';
    this.#o.events?.emit({
      type: 'alert',
      kind: 'active-check-skipped',
      message: `${state.target.localName} is not actively checked: its card has no JSONRPC or HTTP+JSON interface in A2A 0.3 or 1.x (offers ${offered})`,
      endpoint: state.target.baseUrl,
      detail: { localName: state.target.localName },
    });
  }
}

/** One check's request: where, how, and the judge of its answer (undefined: TaskNotFound, a success; a number: that HTTP status; a string: what was wrong). */
interface CheckRequest {
  readonly label: string;
  readonly url: string;
  readonly init: RequestInit;
  judge(status: number, body: Buffer): undefined | number | string;
}

function checkRequest(chosen: ChosenInterface, taskId: string): CheckRequest {
  const legacy = chosen.client === 'adk-0.3';
  const tenant = chosen.tenant !== undefined && chosen.tenant !== '' && !legacy ? chosen.tenant : undefined;
  if (chosen.binding === 'JSONRPC') {
    const method = legacy ? 'tasks/get' : 'GetTask';
    const body = JSON.stringify({ jsonrpc: '2.0', id: taskId, method, params: { id: taskId, ...(tenant !== undefined && { tenant }) } });
    return {
      label: `JSON-RPC ${method}`,
      url: chosen.url,
      init: { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json' }, body },
      judge: (status, raw) => (status < 200 || status > 299 ? status : judgeJsonRpc(raw, taskId)),
    };
  }
  // HTTP+JSON: A2A 0.3 `GET /v1/tasks/{id}`; A2A 1.0 `GET [/{tenant}]/tasks/{id}` (the tenant as the first segment, as @a2a-js/sdk 1.x routes it).
  const root = chosen.url.replace(/\/+$/, '');
  const path = legacy ? `/v1/tasks/${encodeURIComponent(taskId)}` : `${tenant !== undefined ? `/${encodeURIComponent(tenant)}` : ''}/tasks/${encodeURIComponent(taskId)}`;
  return {
    label: `HTTP+JSON GET ${legacy ? '/v1' : ''}/tasks/{id}`,
    url: `${root}${path}`,
    init: { method: 'GET', headers: { accept: 'application/json' } },
    judge: (status, raw) => {
      if (status >= 200 && status <= 299) return 'answered a task for an id that cannot exist';
      return status === 404 && isRestTaskNotFound(raw) ? undefined : status;
    },
  };
}

/**
 * Undefined for the spec's TaskNotFound error; otherwise what the answer was instead.
 *
 * One leniency, recorded from a real peer (test/health/active-check.test.ts): ADK JS 2.0's
 * `toA2a` answers `tasks/get` for an unknown task with JSON-RPC -32603 (internal error) and the
 * message `Task not found: <id>`, the 0.3 SDK's TaskNotFound text. An internal error whose message
 * says exactly that of the id sent is read as TaskNotFound: such an agent is answering.
 */
function judgeJsonRpc(raw: Buffer, taskId: string): string | undefined {
  const answer = parseJson(raw);
  if (typeof answer !== 'object' || answer === null || (answer as { jsonrpc?: unknown }).jsonrpc !== '2.0') return 'answered something that is not JSON-RPC 2.0';
  const error = (answer as { error?: unknown }).error;
  if (typeof error === 'object' && error !== null) {
    const { code, message } = error as { code?: unknown; message?: unknown };
    if (code === TASK_NOT_FOUND || (code === INTERNAL_ERROR && message === `Task not found: ${taskId}`)) return undefined;
    return `answered JSON-RPC error ${describe(code)} (${describe(message)}) instead of TaskNotFound (${TASK_NOT_FOUND})`;
  }
  return 'answered a task for an id that cannot exist';
}

/** The TaskNotFound body of HTTP+JSON: A2A 1.0's `{ error: { details: [{ reason: 'TASK_NOT_FOUND' }] } }` or A2A 0.3's `{ code: -32001 }`. */
function isRestTaskNotFound(raw: Buffer): boolean {
  const answer = parseJson(raw) as { code?: unknown; error?: { details?: unknown } } | undefined;
  if (typeof answer !== 'object' || answer === null) return false;
  if (answer.code === TASK_NOT_FOUND) return true;
  const details = answer.error?.details;
  return Array.isArray(details) && details.some((d) => typeof d === 'object' && d !== null && (d as { reason?: unknown }).reason === 'TASK_NOT_FOUND');
}

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}
