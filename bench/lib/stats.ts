/** Small statistics and formatting helpers for the benchmark report. */

export interface Summary {
  median: number;
  min: number;
  max: number;
  n: number;
}

export function summarize(values: readonly number[]): Summary {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return { median: NaN, min: NaN, max: NaN, n: 0 };
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
  return { median, min: s[0]!, max: s[s.length - 1]!, n: s.length };
}

/** Nearest-rank percentile (p in [0, 100]) of an unsorted array. */
export function percentile(values: Float64Array | readonly number[], p: number): number {
  const s = Float64Array.from(values).sort();
  if (s.length === 0) return NaN;
  const rank = Math.min(s.length, Math.max(1, Math.ceil((p / 100) * s.length)));
  return s[rank - 1]!;
}

/** `1,234` / `1.23` / `0.0123` depending on magnitude. */
export function fmt(x: number, digits?: number): string {
  if (!Number.isFinite(x)) return String(x);
  const d = digits ?? (Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : Math.abs(x) >= 1 ? 2 : 3);
  return x.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d });
}

/** `median [min–max]` */
export function fmtSummary(s: Summary, digits?: number): string {
  return `${fmt(s.median, digits)} [${fmt(s.min, digits)}–${fmt(s.max, digits)}]`;
}

/** A plain-text table with left-aligned first column and right-aligned others. */
export function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** A deterministic shuffle (mulberry32-driven Fisher–Yates). */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  let a = seed >>> 0;
  const rnd = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
