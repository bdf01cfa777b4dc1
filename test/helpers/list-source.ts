/**
 * A source whose list the test sets by hand (a registry or a Kubernetes label set changing
 * between cycles), for loop tests. Implements the real `Source` interface.
 */
import type { EndpointRecord, Source, SourceKind, SourceListener, SourceState } from '../../packages/core/src/sources/index.js';

export interface ListSource extends Source {
  /** Replaces the list and notifies subscribers (the loop runs a cycle). */
  set(records: ReadonlyArray<Pick<EndpointRecord, 'name' | 'baseUrl'> & { metadata?: Record<string, string> }>): void;
}

export function listSource(id: string, kind: SourceKind = 'registry'): ListSource {
  let state: SourceState = Object.freeze({ records: [], ok: true, synced: true });
  const listeners = new Set<SourceListener>();
  return {
    id,
    kind,
    set(records) {
      state = Object.freeze({ records: records.map((r) => Object.freeze({ name: r.name, baseUrl: r.baseUrl, source: id, metadata: r.metadata ?? {} })), ok: true, synced: true });
      for (const l of listeners) l(state);
    },
    refresh: () => Promise.resolve(state),
    current: () => state,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start: () => Promise.resolve(),
    close: () => Promise.resolve(),
  };
}
