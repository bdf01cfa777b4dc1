/**
 * A global pool of slots shared fairly by clients (docs/security.md, "Fair pools"): inspector
 * slots, chat turns, registry searches and event streams. A per-client cap alone does not stop a
 * handful of clients from taking a whole pool first-come (two addresses held both inspector slots);
 * here a client never holds more than its share while others wait.
 *
 * - **Per-client cap**: a client never holds more than `perClient` slots (refused at once).
 * - **Share**: when the pool is full, a client's share is `capacity / clients` (rounded down, at
 *   least 1) over the clients holding or waiting, this one counted. A client already at its share
 *   is refused at once, so it cannot queue ahead of the others.
 * - **Fair queuing** ({@link FairPool.acquire}): a client under its share waits (one request per
 *   client, `queueLength` in all, at most `waitMs`). A freed slot goes to the waiter whose client
 *   holds fewest, then was served longest ago (never: first), then waited longest: round-robin
 *   across clients, so ten busy clients cannot starve an eleventh.
 * - **Preemption** ({@link FairPool.admit}, for long-lived slots such as event streams, which are
 *   never released by themselves): a newcomer under its share takes the oldest slot of the client
 *   holding the most, when that client holds more than its share; the preempted holder is told.
 *
 * Bounded: the maps hold only clients with slots or waiters, plus `recentClients` service times.
 */

/** A pool's limits, read at each request (a reload updates them in place). */
export interface FairPoolLimits {
  /** Slots in all. */
  readonly capacity: number;
  /** Slots one client may hold. */
  readonly perClient: number;
  /** Requests waiting for a slot, every client together (at most one per client). 0: no waiting. */
  readonly queueLength: number;
  /** The longest a request waits for a slot. */
  readonly waitMs: number;
}

/** Why a slot was not given. */
export type PoolRefusal =
  /** The client holds `perClient` slots. */
  | 'per_client'
  /** The pool is full and the client holds its share (or nobody holds more than theirs). */
  | 'full'
  /** The pool is full and the queue too (or this client already waits). */
  | 'queue'
  /** Waited `waitMs` without a slot freeing for it. */
  | 'timeout'
  /** The request went away while it waited. */
  | 'aborted';

/** A slot given, or why not. */
export type Admission = { readonly ok: true; readonly release: () => void } | { readonly ok: false; readonly reason: PoolRefusal };

interface Lease {
  readonly client: string;
  readonly onPreempt: (() => void) | undefined;
  released: boolean;
}

interface Waiter {
  readonly client: string;
  readonly seq: number;
  readonly resolve: (a: Admission) => void;
  readonly cleanup: () => void;
}

/** Clients whose last service time is remembered (beyond, the one served longest ago is forgotten: it counts as never served). */
const RECENT_CLIENTS = 4_096;

/** A fair pool. No I/O; timers only while a request waits. */
export class FairPool {
  readonly #limits: () => FairPoolLimits;
  /** Leases held, per client, oldest first. */
  readonly #held = new Map<string, Lease[]>();
  #running = 0;
  readonly #waiting: Waiter[] = [];
  /** When each client was last given a slot (a counter), oldest first. */
  readonly #served = new Map<string, number>();
  #seq = 0;

  constructor(limits: () => FairPoolLimits) {
    this.#limits = limits;
  }

  /** Slots held now. */
  get running(): number {
    return this.#running;
  }

  /** Requests waiting now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Slots `client` holds. */
  heldBy(client: string): number {
    return this.#held.get(client)?.length ?? 0;
  }

  /**
   * A slot for `client`: at once when one is free and nobody waits, else after waiting its turn
   * (fair queuing), else refused. `signal` ends the wait.
   */
  acquire(client: string, signal?: AbortSignal): Promise<Admission> {
    const l = this.#limits();
    const held = this.heldBy(client);
    if (held >= l.perClient) return Promise.resolve({ ok: false, reason: 'per_client' });
    if (this.#running < l.capacity && this.#waiting.length === 0) return Promise.resolve(this.#give(client, undefined));
    if (held >= this.#share(client, l)) return Promise.resolve({ ok: false, reason: 'full' });
    if (this.#waiting.length >= l.queueLength || this.#waiting.some((w) => w.client === client)) return Promise.resolve({ ok: false, reason: 'queue' });
    if (signal?.aborted === true) return Promise.resolve({ ok: false, reason: 'aborted' });
    return new Promise<Admission>((resolve) => {
      const seq = ++this.#seq;
      const leave = (reason: PoolRefusal): void => {
        const i = this.#waiting.findIndex((w) => w.seq === seq);
        if (i < 0) return;
        this.#waiting.splice(i, 1);
        waiter.cleanup();
        resolve({ ok: false, reason });
      };
      const timer = setTimeout(() => leave('timeout'), l.waitMs);
      const onAbort = (): void => leave('aborted');
      signal?.addEventListener('abort', onAbort, { once: true });
      const waiter: Waiter = {
        client,
        seq,
        resolve,
        cleanup: () => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
        },
      };
      this.#waiting.push(waiter);
    });
  }

  /**
   * A slot for `client` now, without waiting, taking one from the client holding the most when the
   * pool is full and that client holds more than its share (its `onPreempt` is called: it must end
   * what the slot held and may call its release, which is then a no-op). For slots that last until
   * their holder leaves (event streams).
   */
  admit(client: string, onPreempt: () => void): Admission {
    const l = this.#limits();
    const held = this.heldBy(client);
    if (held >= l.perClient) return { ok: false, reason: 'per_client' };
    if (this.#running < l.capacity) return this.#give(client, onPreempt);
    const share = this.#share(client, l);
    if (held >= share) return { ok: false, reason: 'full' };
    let top: Lease[] | undefined;
    for (const leases of this.#held.values()) if (top === undefined || leases.length > top.length) top = leases;
    const victim = top !== undefined && top.length > share ? top.find((x) => x.onPreempt !== undefined) : undefined;
    if (victim === undefined) return { ok: false, reason: 'full' };
    this.#release(victim);
    victim.onPreempt?.();
    return this.#give(client, onPreempt);
  }

  /** Ends every wait (refused as `aborted`); held slots stay until released. */
  close(): void {
    for (const w of this.#waiting.splice(0)) {
      w.cleanup();
      w.resolve({ ok: false, reason: 'aborted' });
    }
  }

  /** A client's share of a full pool: capacity over the clients holding or waiting, this one counted. */
  #share(client: string, l: FairPoolLimits): number {
    const clients = new Set(this.#held.keys());
    for (const w of this.#waiting) clients.add(w.client);
    clients.add(client);
    return Math.max(1, Math.floor(l.capacity / clients.size));
  }

  #give(client: string, onPreempt: (() => void) | undefined): Admission {
    const lease: Lease = { client, onPreempt, released: false };
    const leases = this.#held.get(client);
    if (leases === undefined) this.#held.set(client, [lease]);
    else leases.push(lease);
    this.#running++;
    this.#served.delete(client);
    this.#served.set(client, ++this.#seq);
    if (this.#served.size > RECENT_CLIENTS) this.#served.delete(this.#served.keys().next().value!);
    return { ok: true, release: () => this.#release(lease) };
  }

  #release(lease: Lease): void {
    if (lease.released) return;
    lease.released = true;
    this.#running--;
    const leases = this.#held.get(lease.client);
    if (leases !== undefined) {
      leases.splice(leases.indexOf(lease), 1);
      if (leases.length === 0) this.#held.delete(lease.client);
    }
    this.#dispatch();
  }

  /** Gives freed slots to waiters: fewest held, then served longest ago, then waited longest. */
  #dispatch(): void {
    const l = this.#limits();
    while (this.#running < l.capacity && this.#waiting.length > 0) {
      let best = 0;
      for (let i = 1; i < this.#waiting.length; i++) if (this.#before(this.#waiting[i]!, this.#waiting[best]!)) best = i;
      const [w] = this.#waiting.splice(best, 1);
      w!.cleanup();
      w!.resolve(this.#give(w!.client, undefined));
    }
  }

  #before(a: Waiter, b: Waiter): boolean {
    const ha = this.heldBy(a.client);
    const hb = this.heldBy(b.client);
    if (ha !== hb) return ha < hb;
    const sa = this.#served.get(a.client) ?? 0;
    const sb = this.#served.get(b.client) ?? 0;
    if (sa !== sb) return sa < sb;
    return a.seq < b.seq;
  }
}

/** A pool as its refusals name it: what it holds, its size and the configuration keys of its limits. */
export interface PoolNames {
  /** What one slot runs, singular ("inspection", "chat turn"). */
  readonly what: string;
  readonly capacity: number;
  readonly perClient: number;
  /** The keys of `capacity` and `perClient` (`server.limits.maxInspections`, …). */
  readonly capacityKey: string;
  readonly perClientKey: string;
  /** `server.limits.queueWaitMs`, for the message. */
  readonly waitMs: number;
}

/**
 * What a refusal (not `aborted`) says: the key of the limit that bit, and the sentence (without the key).
 * One wording for every pool, whatever shape its route's error takes.
 */
export function describeRefusal(why: Exclude<PoolRefusal, 'aborted'>, p: PoolNames): { perClient: boolean; limit: string; message: string } {
  const out = (limit: string, message: string) => ({ perClient: why === 'per_client', limit, message });
  switch (why) {
    case 'per_client':
      return out(p.perClientKey, `this client has ${p.perClient} ${p.what}(s) running; wait for one to finish`);
    case 'full':
      return out(p.capacityKey, `all ${p.capacity} ${p.what} slots are taken and this client holds its share of them while others wait; try again shortly`);
    case 'queue':
      return out('server.limits.queueLength', `all ${p.capacity} ${p.what} slots are taken and the queue for them is full (or this client already waits in it); try again shortly`);
    case 'timeout':
      return out('server.limits.queueWaitMs', `waited ${p.waitMs} ms for one of the ${p.capacity} ${p.what} slots without one freeing; try again shortly`);
  }
}
