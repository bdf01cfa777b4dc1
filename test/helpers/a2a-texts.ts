/**
 * The texts of an A2A result as the interop tests read them, whatever its shape: a 0.3 result (a
 * Message, or a Task's status message, history and artifacts: `{ kind: "text", text }` parts) or
 * a decoded 1.x one (`{ content: { $case: "text", value } }` parts).
 */

/** Every text in a 0.3 result. */
export function texts03(result: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (o['kind'] === 'text' && typeof o['text'] === 'string') out.push(o['text']);
      else Object.values(o).forEach(walk);
    }
  };
  walk(result);
  return out;
}

/** Every text part in a decoded 1.x result. */
export function texts1x(result: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      const c = o['content'] as { $case?: unknown; value?: unknown } | undefined;
      if (c && c.$case === 'text' && typeof c.value === 'string') out.push(c.value);
      else Object.values(o).forEach(walk);
    }
  };
  walk(result);
  return out;
}
