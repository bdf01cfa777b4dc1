/**
 * The filter of `GET /api/registry/agents` (ARD Appendix A): read from its query string, and
 * applied to a listed entry or, in the change feed, to a tombstone.
 *
 * @module
 */

/** The filter of `GET /agents` (Appendix A). */
export interface ListFilter {
  readonly displayName?: readonly string[];
  readonly type?: ReadonlySet<string>;
  readonly publisherId?: ReadonlySet<string>;
  readonly createdAfter?: number;
  readonly updatedAfter?: number;
}

/**
 * Appendix A's filter: terms joined by ` AND ` (or `;`), each `key:value`, `key = 'value'` or
 * `key > 'time'`; comma-separated values are OR'ed. Keys: `displayName` (case-insensitive
 * substring), `type`, `publisherId` (exact, case-insensitive), `createdAfter`, `updatedAfter`
 * (ISO 8601).
 */
export function parseListFilter(raw: string | undefined, maxKeys: number, maxValues: number): ListFilter | string {
  if (raw === undefined || raw.trim() === '') return {};
  if (raw.length > 4_096) return 'filter is longer than 4096 characters';
  const terms = raw.split(/\s+AND\s+|;/i).map((t) => t.trim()).filter((t) => t !== '');
  if (terms.length > maxKeys) return `filter has ${terms.length} terms; at most ${maxKeys} are accepted (server.registry.maxFilterKeys)`;
  const out: { -readonly [K in keyof ListFilter]: ListFilter[K] } = {};
  let count = 0;
  for (const term of terms) {
    const m = /^([A-Za-z]+)\s*(?:=|:|>=|>)\s*(.*)$/.exec(term);
    if (!m) return `filter term ${JSON.stringify(term.slice(0, 64))} is not key:value (Appendix A: displayName, type, publisherId, createdAfter, updatedAfter)`;
    const key = m[1]!;
    const value = m[2]!.trim().replace(/^'(.*)'$/, '$1').replace(/^"(.*)"$/, '$1');
    const values = value.split(',').map((v) => v.trim()).filter((v) => v !== '');
    count += values.length;
    if (values.length === 0) return `filter term ${key} has no value`;
    if (count > maxValues) return `filter has more than ${maxValues} values in all (server.registry.maxFilterValues)`;
    if (key === 'displayName') out.displayName = values.map((v) => v.toLowerCase());
    else if (key === 'type') out.type = new Set(values.map((v) => v.toLowerCase()));
    else if (key === 'publisherId') out.publisherId = new Set(values.map((v) => v.toLowerCase()));
    else if (key === 'createdAfter' || key === 'updatedAfter') {
      const t = Date.parse(value);
      if (!Number.isFinite(t)) return `filter ${key} must be an ISO 8601 time, got ${JSON.stringify(value.slice(0, 64))}`;
      out[key] = t;
    } else return `filter key ${JSON.stringify(key)} is not one of displayName, type, publisherId, createdAfter, updatedAfter`;
  }
  return out;
}

/** Whether a listed entry (or, in the change feed, a tombstone: `type` only) passes the list filter. */
export function keepListed(view: Readonly<Record<string, unknown>>, createdAt: number | undefined, f: ListFilter): boolean {
  if (f.type && !f.type.has(String(view['type']).toLowerCase())) return false;
  if (view['status'] === 'deleted') return true;
  if (f.displayName) {
    const name = String(view['displayName']).toLowerCase();
    if (!f.displayName.some((v) => name.includes(v))) return false;
  }
  if (f.publisherId && !f.publisherId.has(String(view['publisher']).toLowerCase())) return false;
  if (f.createdAfter !== undefined && createdAt !== undefined && createdAt <= f.createdAfter) return false;
  return true;
}
