/**
 * The A2A endpoint's tasks, bounded: at most `maxTasks` across every caller, the least recently
 * saved dropped first (the SDK's `InMemoryTaskStore` keeps every task for ever). Scoped as the
 * SDK's store is, by tenant and by the caller (`context.user.userName`): a caller never loads or
 * lists another's task. The conversation itself lives in the session (`sessions.*`), not here.
 */
import type { ListTasksRequest, ListTasksResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';

/** Tasks one `tasks/list` page holds by default. */
const DEFAULT_PAGE_SIZE = 50;

export class BoundedTaskStore implements TaskStore {
  readonly #max: number;
  /** Key: tenant, owner and task id; insertion order is save order (a save moves a task last). */
  readonly #tasks = new Map<string, { scope: string; task: Task }>();

  /** @param maxTasks Tasks kept across every caller (`server.a2a.maxTasks`). */
  constructor(maxTasks: number) {
    this.#max = maxTasks;
  }

  get size(): number {
    return this.#tasks.size;
  }

  save(task: Task, context: ServerCallContext): Promise<void> {
    const scope = scopeOf(context);
    const key = `${scope}\u0000${task.id}`;
    this.#tasks.delete(key);
    this.#tasks.set(key, { scope, task: structuredClone(task) });
    for (const oldest of this.#tasks.keys()) {
      if (this.#tasks.size <= this.#max) break;
      this.#tasks.delete(oldest);
    }
    return Promise.resolve();
  }

  load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const found = this.#tasks.get(`${scopeOf(context)}\u0000${taskId}`);
    return Promise.resolve(found && structuredClone(found.task));
  }

  list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const scope = scopeOf(context);
    const after = params.statusTimestampAfter ? Date.parse(params.statusTimestampAfter) : undefined;
    const matching = [...this.#tasks.values()]
      .filter((t) => t.scope === scope)
      .map((t) => t.task)
      .filter((t) => (params.contextId === '' || t.contextId === params.contextId) && (!params.status || t.status?.state === params.status))
      .filter((t) => after === undefined || Date.parse(t.status?.timestamp ?? '') > after)
      .reverse();
    const pageSize = params.pageSize ?? DEFAULT_PAGE_SIZE;
    const start = /^\d{1,9}$/.test(params.pageToken) ? Number(params.pageToken) : 0;
    const page = matching.slice(start, start + pageSize).map((t) => {
      const copy = structuredClone(t);
      if (params.includeArtifacts !== true) copy.artifacts = [];
      if (params.historyLength !== undefined) copy.history = params.historyLength === 0 ? [] : copy.history.slice(-params.historyLength);
      return copy;
    });
    const next = start + pageSize < matching.length ? String(start + pageSize) : '';
    return Promise.resolve({ tasks: page, nextPageToken: next, pageSize, totalSize: matching.length });
  }
}

function scopeOf(context: ServerCallContext): string {
  return `${context.tenant ?? ''}\u0000${context.user?.userName ?? ''}`;
}
