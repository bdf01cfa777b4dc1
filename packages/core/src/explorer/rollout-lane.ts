/**
 * The explorer's rollout explanation: the change from card v1 to card v2 of the modeled agent,
 * classified by the library's `classifyAgentChange`, split by `planRollout` (staged, or published
 * at once), then run by the library's {@link Rollouts} with a real {@link SnapshotStore} on a model
 * clock: new sessions arrive one a second, each lands where `Rollouts.assign` puts it (stable per
 * session id, `rolloutBucket`) and makes one turn whose outcome the scripted calls of its side
 * give; each turn reaches the rollout through `CallHealth.onCall` as in the discovery loop, and
 * `judge()` decides after every turn. The explanation records the decisions and the reasons the
 * library gave; it decides nothing itself.
 *
 * @module
 */
import { parseAgentCard } from '../card/index.js';
import { DiscoveryError } from '../errors.js';
import { VirtualClock } from '../clock/index.js';
import { EventStream } from '../events/index.js';
import { CallHealth } from '../health/call-health.js';
import { planRollout, rolloutBucket } from '../rollout/rollout-plan.js';
import type { RolloutPolicy } from '../rollout/rollouts.js';
import { Rollouts } from '../rollout/rollouts.js';
import { classifyAgentChange } from '../snapshot/change-impact.js';
import type { SnapshotAgent } from '../snapshot/index.js';
import { buildSnapshot, SnapshotStore } from '../snapshot/index.js';
import { ROLLOUT_DEFAULTS } from '../rules/defaults.js';
import { parseCallScript, recordedCall, TRACE_AGENT } from './call-script.js';
import type { ScriptedCall } from './call-script.js';
import { seconds } from './classify.js';
import type { TraceInputs } from './inputs.js';
import { parseRolloutSteps } from './inputs.js';
import { modeledCardBody, TRACE_BASE_URL, TRACE_TAG } from './scripted-endpoint.js';
import type { CardVersionLabel } from './scripted-endpoint.js';
import type { TraceRollout, TraceRolloutDecision, TraceRolloutSample, TraceRolloutStep } from './types.js';
import { secondsText } from './why.js';

/** Sample session ids whose side the explanation shows. */
const ROLLOUT_SAMPLES = 20;

/** Model seconds between two new sessions. */
const SESSION_INTERVAL_MS = 1_000;

/** The policy a run uses: the service's defaults, with the explorer's controls. */
function traceRolloutPolicy(inputs: TraceInputs): RolloutPolicy {
  return {
    trigger: inputs.rolloutTrigger,
    steps: parseRolloutSteps(inputs.rolloutSteps).steps ?? ROLLOUT_DEFAULTS.steps,
    holdMs: inputs.rolloutHoldSeconds * 1000,
    minTurns: inputs.rolloutMinTurns,
    minSamples: inputs.rolloutMinSamples,
    maxErrorRateIncrease: inputs.rolloutMaxErrorRateIncrease,
    maxLatencyRatio: ROLLOUT_DEFAULTS.maxLatencyRatio,
    minLatencyIncreaseMs: ROLLOUT_DEFAULTS.minLatencyIncreaseMs,
  };
}

/** The modeled agent with card `version`, as a snapshot holds it. */
function agentOf(version: CardVersionLabel, inputs: TraceInputs): SnapshotAgent {
  const body = modeledCardBody(version, { streaming: inputs.cardStreaming, insecure: false, breaking: inputs.v2Breaking });
  const parsed = parseAgentCard(body);
  // The modeled cards are valid by construction (test/explorer holds them to it).
  if (!parsed.ok || parsed.card === undefined || parsed.canonicalSha256 === undefined || parsed.protocolVersion === undefined) throw new DiscoveryError('ERR_INTERNAL', `the modeled card ${version} does not parse`);
  return {
    localName: TRACE_AGENT,
    description: 'Answers questions about orders.',
    tags: [TRACE_TAG],
    critical: false,
    baseUrl: TRACE_BASE_URL,
    sources: ['explorer'],
    card: parsed.card,
    canonicalSha256: parsed.canonicalSha256,
    rawSha256: parsed.rawSha256,
    protocolVersion: parsed.protocolVersion,
    degraded: false,
    stale: false,
  };
}

/** Turns of one side, cycling through its scripted pattern. */
class Side {
  readonly #calls: readonly ScriptedCall[];
  #next = 0;

  constructor(script: string, latencyMs: number) {
    this.#calls = parseCallScript(script, latencyMs).calls ?? [{ token: 'ok', outcome: { ok: true, latencyMs } }];
  }

  /** The next turn's call. */
  next(): ScriptedCall {
    const call = this.#calls[this.#next % this.#calls.length]!;
    this.#next++;
    return call;
  }
}

/**
 * Explains how v1 → v2 rolls out under the run's controls. Deterministic.
 *
 * @example (await explainRollout(resolveTraceInputs({ rollout: true, v2Breaking: true, rolloutCandidateCalls: 'ok 500' }))).status // "rolled-back"
 */
export async function explainRollout(inputs: TraceInputs): Promise<TraceRollout> {
  const clock = new VirtualClock({ start: 0 });
  const wallStart = clock.wallNow();
  const at = (wallMs: number): number => seconds(wallMs - wallStart);
  const policy = traceRolloutPolicy(inputs);
  const v1 = agentOf('v1', inputs);
  const v2 = agentOf('v2', inputs);
  const impact = classifyAgentChange(v1, v2);
  const change = { from: 'v1', to: 'v2', impact: impact.impact, reasons: [...impact.reasons] } as const;
  const buckets = (id: string): TraceRolloutSample[] =>
    Array.from({ length: ROLLOUT_SAMPLES }, (_, i) => {
      const sessionId = `session-${i + 1}`;
      const bucket = rolloutBucket(id, sessionId);
      return { sessionId, bucket: Math.round(bucket * 1e6) / 1e6, candidateAt: policy.steps.filter((share) => bucket * 100 < share) };
    });

  const store = new SnapshotStore();
  const current = buildSnapshot([v1], 1, clock.wallNow());
  store.publish(current);
  const plan = planRollout(current, [v2], policy.trigger, new Map());
  if (plan.staged === undefined) {
    const why = policy.trigger === 'off' ? 'rollout.trigger is off' : `the change is ${impact.impact} and rollout.trigger is "${policy.trigger}"`;
    return {
      agent: TRACE_AGENT,
      change,
      staged: false,
      policy,
      status: 'published',
      decisions: [],
      steps: [],
      sessions: 0,
      candidateSessions: 0,
      samples: [],
      sentence: `v1 → v2 is ${impact.impact}${reasonsText(impact.reasons)}: not staged (${why}), so it is published to every new session at once.`,
    };
  }

  const { id, changes, agents } = plan.staged;
  const candidate = buildSnapshot(agents, 2, clock.wallNow());
  const events = new EventStream({ wallNow: () => clock.wallNow() });
  let alert: string | undefined;
  events.subscribe((e) => {
    if (e.type === 'alert' && e.kind === 'rollout-rolled-back') alert = e.message;
  });
  const rollouts = new Rollouts({ policy, snapshots: store, clock, events });
  const calls = new CallHealth(clock);
  // As the discovery loop wires it: every recorded turn reaches the rollout's figures.
  const off = calls.onCall((call) => rollouts.record(call));
  const sides = { candidate: new Side(inputs.rolloutCandidateCalls, inputs.rttMs), current: new Side(inputs.rolloutCurrentCalls, inputs.rttMs) };
  const samples = buckets(id);
  const steps: TraceRolloutStep[] = [];
  let step = newStep(0, policy.steps[0] ?? 100, 0);
  let figures: TraceRollout['figures'];
  let sessions = 0;
  let candidateSessions = 0;
  try {
    rollouts.stage(id, changes, candidate, current);
    for (let n = 1; n <= inputs.rolloutSessions && rollouts.active !== undefined; n++) {
      await clock.advanceTo(n * SESSION_INTERVAL_MS);
      const sessionId = `session-${n}`;
      const onCandidate = rollouts.assign(sessionId) === candidate.digest;
      const digest = onCandidate ? candidate.digest : current.digest;
      sessions++;
      step.sessions++;
      if (onCandidate) {
        candidateSessions++;
        step.candidateSessions++;
      }
      if (n <= ROLLOUT_SAMPLES) samples[n - 1] = { ...samples[n - 1]!, landed: onCandidate ? 'candidate' : 'current' };
      const call = (onCandidate ? sides.candidate : sides.current).next();
      if (call.outcome !== undefined) {
        calls.record(recordedCall({ ...call, outcome: call.outcome }, TRACE_BASE_URL, digest));
        const side = onCandidate ? step.candidate : step.current;
        side.turns++;
        if (!call.outcome.ok) side.errors++;
      }
      const action = rollouts.judge();
      if (action === undefined) continue;
      const seen = rollouts.figures();
      figures = { ...(seen?.candidate[TRACE_AGENT] && { candidate: seen.candidate[TRACE_AGENT] }), ...(seen?.baseline[TRACE_AGENT] && { current: seen.baseline[TRACE_AGENT] }) };
      rollouts.done(action);
      steps.push({ ...step, to: seconds(clock.now()) });
      const next = rollouts.active;
      if (next !== undefined) step = newStep(next.step, next.share, seconds(clock.now()));
    }
    if (rollouts.active !== undefined) {
      steps.push({ ...step, to: seconds(clock.now()) });
      const seen = rollouts.figures();
      figures = { ...(seen?.candidate[TRACE_AGENT] && { candidate: seen.candidate[TRACE_AGENT] }), ...(seen?.baseline[TRACE_AGENT] && { current: seen.baseline[TRACE_AGENT] }) };
    }
  } finally {
    off();
    events.close();
  }
  const state = rollouts.active ?? rollouts.history.at(-1)!;
  rollouts.close();
  const decisions: TraceRolloutDecision[] = state.decisions.map((d) => ({ at: at(d.at), action: d.action, by: d.by, reason: d.reason, step: d.step, share: d.share }));
  const status = state.status === 'held' ? 'running' : state.status;
  return {
    agent: TRACE_AGENT,
    change,
    staged: true,
    id,
    policy,
    status,
    decisions,
    steps,
    ...(figures !== undefined && { figures }),
    ...(alert !== undefined && { alert }),
    sessions,
    candidateSessions,
    samples,
    sentence: sentenceOf(status, decisions, steps.at(-1)?.share ?? 0, sessions, candidateSessions, impact.impact, impact.reasons),
  };
}

type MutableStep = { -readonly [K in keyof TraceRolloutStep]: TraceRolloutStep[K] } & { candidate: { turns: number; errors: number }; current: { turns: number; errors: number } };

function newStep(index: number, share: number, from: number): MutableStep {
  return { step: index, share, from, to: from, sessions: 0, candidateSessions: 0, candidate: { turns: 0, errors: 0 }, current: { turns: 0, errors: 0 } };
}

function reasonsText(reasons: readonly string[]): string {
  return reasons.length === 0 ? '' : ` (${reasons.join('; ')})`;
}

function sentenceOf(status: TraceRollout['status'], decisions: readonly TraceRolloutDecision[], lastShare: number, sessions: number, onCandidate: number, impact: string, reasons: readonly string[]): string {
  const last = decisions.at(-1);
  const change = `v1 → v2 is ${impact}${reasonsText(reasons)}, so it rolls out by stages`;
  const share = `${onCandidate} of ${sessions} new sessions started on the candidate`;
  if (status === 'rolled-back' && last !== undefined) return `${change}: rolled back at ${secondsText(last.at)}, at the step of ${lastShare}%: ${last.reason}. ${share}; every later one starts on the current snapshot, and no session moved.`;
  if (status === 'promoted' && last !== undefined) return `${change}: promoted at ${secondsText(last.at)} (${last.reason}); ${share} before, and every new session starts on it now.`;
  return `${change}: still in progress at the step of ${lastShare}% when the ${sessions} sessions ran out; ${share}.`;
}
