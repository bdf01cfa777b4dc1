/**
 * The rollout resource (docs/rollouts.md): the staged rollout in progress with the figures of both
 * sides, the last ones and the changes quarantined after a rollback; an operator's hold, resume,
 * promotion or rollback (journaled with who did it); and the health the orchestrator's real calls
 * give each agent.
 *
 * @module
 */
import { Hono } from 'hono';
import type { Context } from 'hono';
import type { AppContext } from '../context.js';
import { problem } from '../problem.js';
import { json, problemJson } from '../route.js';
import { AnyObjectSchema, CallHealthSchema, RolloutDecidedSchema, RolloutSchema } from '../schemas.js';
import { jsonBody } from '../validate.js';

const DECISIONS = ['hold', 'resume', 'promote', 'rollback'] as const;

/** The rollout's routes. */
export function rolloutRoutes(ctx: AppContext): Hono {
  const { o, route } = ctx;
  const app = new Hono();
  const emptyBody = jsonBody(AnyObjectSchema, ctx.bodyLimit('maxBodyBytes'), { required: false });

  app.get('/api/rollout', ...route('viewer', { tags: ['snapshots'], summary: 'The staged rollout in progress (steps, share, the figures of both sides, the decisions and why) and the last ones', responses: { 200: json('the rollouts', RolloutSchema) } }), (c) => {
    const rollouts = o.loop.rollouts;
    return c.json({
      enabled: rollouts !== undefined,
      ...(rollouts && { policy: rollouts.policy }),
      active: rollouts?.active ?? null,
      figures: rollouts?.figures() ?? null,
      history: [...(rollouts?.history ?? [])].reverse(),
      quarantined: [...(rollouts?.quarantined ?? [])].map(([localName, version]) => ({ localName, version })),
      ...ctx.servedBy(),
    });
  });

  for (const decision of DECISIONS) {
    const summary = { hold: 'Hold the rollout at its share (an automatic rollback still happens)', resume: 'Resume a held rollout', promote: 'Promote the candidate now: it becomes the current snapshot', rollback: 'Roll the candidate back now' }[decision];
    app.post(`/api/rollout/${decision}`, ...route('operator', { tags: ['snapshots'], summary, responses: { 200: json('the rollout after the decision', RolloutDecidedSchema), 409: problemJson('no rollout is in progress, or this replica follows (the leader decides)') } }), emptyBody, async (c) => decide(ctx, c, decision));
  }

  app.get('/api/calls', ...route('viewer', { tags: ['endpoints'], summary: "Health from real calls: each agent's calls by outcome and error class, latency, per snapshot and interface", responses: { 200: json('call health', CallHealthSchema) } }), (c) =>
    c.json({ agents: o.calls?.views() ?? [], ...ctx.servedBy() }),
  );
  return app;
}

async function decide(ctx: AppContext, c: Context, decision: (typeof DECISIONS)[number]): Promise<Response> {
  const { o } = ctx;
  // The leader decides the steps: a decision taken on a follower's copy would be undone at its next sync.
  const replica = o.replicaStatus?.();
  if (replica?.role === 'follower') {
    return problem(c, 409, 'not-leader', `this replica follows; send the decision to the leader${replica.leaderUrl !== null ? ` (${replica.leaderUrl})` : ''}`, { leader: replica.leader, leaderUrl: replica.leaderUrl });
  }
  if (o.loop.rollouts?.active === undefined) return problem(c, 409, 'no-rollout', 'no rollout is in progress');
  const actor = ctx.actorName(c);
  const rollout = await o.loop.decideRollout(decision, actor);
  if (rollout === undefined) return problem(c, 409, 'no-rollout', 'no rollout is in progress');
  ctx.acted(c, `rollout.${decision}`, { digest: rollout.candidate });
  return c.json({ decision, rollout, current: o.loop.current()?.digest ?? null });
}
