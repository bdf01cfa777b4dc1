/** Card fixtures shared by tests. */

/** A valid 0.3 card for endpoint `id` on a fault server (its interface is on the same origin). */
export function cardFor(fs: { origin: string }, id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: `Agent ${id}`,
    description: `The ${id} agent.`,
    url: `${fs.origin}/${id}/jsonrpc`,
    version: '1.0.0',
    protocolVersion: '0.3.0',
    capabilities: { streaming: true },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    skills: [{ id: id, name: id, description: `Does ${id}.`, tags: [id] }],
    ...extra,
  };
}
