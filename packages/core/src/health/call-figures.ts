/**
 * Figures of A2A calls: how many, how many failed and by which error class, and the latency of
 * the most recent ones (for the p95). Bounded: at most {@link MAX_CLASSES} error classes (the
 * rest counted as `other`) and the last {@link LATENCY_SAMPLES} latencies (or as many as given).
 */

/** Error classes kept apart; any further class is counted as `other`. */
const MAX_CLASSES = 16;
/** Latencies kept (the most recent), for percentiles, by default. */
const LATENCY_SAMPLES = 512;

/** What one call (or one turn) of an agent came to. */
export interface CallOutcome {
  readonly ok: boolean;
  /** Why it failed: `http_500`, `network`, `timeout`, `refused`, `rpc`, `no_reply`… */
  readonly errorClass?: string;
  /** Milliseconds from the request to its answer (a turn: to its last event). */
  readonly latencyMs: number;
}

/** A snapshot of {@link CallFigures}, as the API and the rollout view show it. */
export interface CallFiguresView {
  readonly calls: number;
  readonly errors: number;
  /** `errors / calls` (0 without calls). */
  readonly errorRate: number;
  /** Failures by error class. */
  readonly byClass: Readonly<Record<string, number>>;
  /** Over the most recent latencies (undefined without calls). */
  readonly p50Ms?: number;
  readonly p95Ms?: number;
}

/** Counters of one agent's calls (or of one side of a rollout). */
export class CallFigures {
  #calls = 0;
  #errors = 0;
  readonly #byClass = new Map<string, number>();
  readonly #latencies: number[] = [];
  readonly #samples: number;
  #next = 0;
  /** The latencies sorted, until the next {@link add}: a percentile read between two calls sorts nothing. */
  #sorted: number[] | undefined;
  /** A moving mean of the latencies (each new one weighs 1/8), kept as they come: read without a sort. */
  #meanMs: number | undefined;

  /** `samples`: the most recent latencies kept for percentiles. */
  constructor(samples = LATENCY_SAMPLES) {
    this.#samples = Math.max(1, samples);
  }

  /** Counts one outcome. */
  add(outcome: CallOutcome): void {
    this.#calls++;
    if (!outcome.ok) {
      this.#errors++;
      const known = outcome.errorClass ?? 'other';
      const cls = this.#byClass.has(known) || this.#byClass.size < MAX_CLASSES ? known : 'other';
      this.#byClass.set(cls, (this.#byClass.get(cls) ?? 0) + 1);
    }
    const ms = Math.max(0, outcome.latencyMs);
    this.#sorted = undefined;
    this.#meanMs = this.#meanMs === undefined ? ms : this.#meanMs + (ms - this.#meanMs) / 8;
    if (this.#latencies.length < this.#samples) this.#latencies.push(ms);
    else {
      this.#latencies[this.#next] = ms;
      this.#next = (this.#next + 1) % this.#samples;
    }
  }

  get calls(): number {
    return this.#calls;
  }

  get errors(): number {
    return this.#errors;
  }

  /** `errors / calls`, 0 without calls. */
  get errorRate(): number {
    return this.#calls === 0 ? 0 : this.#errors / this.#calls;
  }

  /** The moving mean of the recent latencies (each new one weighs 1/8); undefined without calls. Costs no sort. */
  get meanMs(): number | undefined {
    return this.#meanMs;
  }

  /** The `p`-th percentile (0–100) of the recent latencies, nearest rank; undefined without calls. */
  percentile(p: number): number | undefined {
    if (this.#latencies.length === 0) return undefined;
    const sorted = (this.#sorted ??= [...this.#latencies].sort((a, b) => a - b));
    const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
    return sorted[rank - 1];
  }

  /** The figures as plain data. */
  view(): CallFiguresView {
    const p50 = this.percentile(50);
    const p95 = this.percentile(95);
    return {
      calls: this.#calls,
      errors: this.#errors,
      errorRate: this.errorRate,
      byClass: Object.fromEntries(this.#byClass),
      ...(p50 !== undefined && { p50Ms: Math.round(p50) }),
      ...(p95 !== undefined && { p95Ms: Math.round(p95) }),
    };
  }
}
