/**
 * `a2a-discovery trace`: the discovery-trace explorer in the terminal. The same scenarios as the
 * interactive model, run by the library's own card cache, validator and matcher on a virtual
 * clock against a scripted endpoint (see docs/explorer.md). Always exits 0 once it ran; usage
 * errors exit 2.
 */
import type { TraceCondition, TraceHealth, TraceInputs, TraceResult, TraceRollout } from 'a2a-discovery/explorer';
import { rejectedAt, runTrace, TIMELINE_STAGE_NAMES, TIMELINE_STAGES } from 'a2a-discovery/explorer';
import type { Io } from './flags.js';

/** The flags as commander parses them. */
export interface TraceFlags {
  condition: TraceCondition;
  credentials: boolean;
  maxAge?: number;
  publishV2At?: number;
  v2: boolean;
  requireStreaming: boolean;
  cardStreaming: boolean;
  interval?: number;
  rtt?: number;
  attempts?: number;
  backoff: boolean;
  staleOnError: boolean;
  failFrom?: number;
  maxStale?: number;
  jitter: boolean;
  seed?: number;
  calls?: string;
  enterAfter?: number;
  callLeaveAfter?: number;
  v2Breaking: boolean;
  rollout: boolean;
  rolloutTrigger?: TraceInputs['rolloutTrigger'];
  rolloutSteps?: string;
  rolloutHold?: number;
  rolloutMinTurns?: number;
  rolloutMinSamples?: number;
  rolloutMaxErrorIncrease?: number;
  candidateCalls?: string;
  currentCalls?: string;
  sessions?: number;
  json: boolean;
}

/** Flags → explorer controls (unset flags keep the explorer's defaults). */
function traceInputsFromFlags(flags: TraceFlags): Partial<TraceInputs> {
  return {
    condition: flags.condition,
    credentials: flags.credentials,
    requireStreaming: flags.requireStreaming,
    cardStreaming: flags.cardStreaming,
    backoff: flags.backoff,
    staleOnError: flags.staleOnError,
    jitter: flags.jitter,
    ...(flags.maxAge !== undefined && { maxAgeSeconds: flags.maxAge }),
    ...(flags.v2 ? flags.publishV2At !== undefined && { publishV2AtSeconds: flags.publishV2At } : { publishV2AtSeconds: null }),
    ...(flags.interval !== undefined && { intervalSeconds: flags.interval }),
    ...(flags.rtt !== undefined && { rttMs: flags.rtt }),
    ...(flags.attempts !== undefined && { attempts: flags.attempts }),
    ...(flags.failFrom !== undefined && { failFromSeconds: flags.failFrom }),
    ...(flags.maxStale !== undefined && { maxStaleSeconds: flags.maxStale }),
    ...(flags.seed !== undefined && { seed: flags.seed }),
    v2Breaking: flags.v2Breaking,
    rollout: flags.rollout,
    ...(flags.calls !== undefined && { calls: flags.calls }),
    ...(flags.enterAfter !== undefined && { enterAfter: flags.enterAfter }),
    ...(flags.callLeaveAfter !== undefined && { callLeaveAfter: flags.callLeaveAfter }),
    ...(flags.rolloutTrigger !== undefined && { rolloutTrigger: flags.rolloutTrigger }),
    ...(flags.rolloutSteps !== undefined && { rolloutSteps: flags.rolloutSteps }),
    ...(flags.rolloutHold !== undefined && { rolloutHoldSeconds: flags.rolloutHold }),
    ...(flags.rolloutMinTurns !== undefined && { rolloutMinTurns: flags.rolloutMinTurns }),
    ...(flags.rolloutMinSamples !== undefined && { rolloutMinSamples: flags.rolloutMinSamples }),
    ...(flags.rolloutMaxErrorIncrease !== undefined && { rolloutMaxErrorRateIncrease: flags.rolloutMaxErrorIncrease }),
    ...(flags.candidateCalls !== undefined && { rolloutCandidateCalls: flags.candidateCalls }),
    ...(flags.currentCalls !== undefined && { rolloutCurrentCalls: flags.currentCalls }),
    ...(flags.sessions !== undefined && { rolloutSessions: flags.sessions }),
  };
}

const onOff = (b: boolean): string => (b ? 'on' : 'off');

/**
 * A readable report: the controls, one row per attempt — with the explorer's own fields: why it
 * went to the network (or not), the `If-None-Match` it sent, the lane that rejected it, why v2
 * stayed hidden — then the freshness sentence and the statistics.
 */
function renderTrace(result: TraceResult): string {
  const i = result.inputs;
  const lines: string[] = [];
  lines.push(`Discovery trace of ${result.model.baseUrl} (teaching model run by the library's card cache, validator and matcher)`);
  const controls = [
    `endpoint ${i.condition}${i.condition === 'unauthorized' ? ` (credentials ${onOff(i.credentials)})` : ''}`,
    `max-age ${i.maxAgeSeconds} s`,
    i.publishV2AtSeconds === null ? 'no v2' : `v2 at ${i.publishV2AtSeconds} s`,
    `interval ${i.intervalSeconds} s`,
    `round trip ${i.rttMs} ms`,
    `${i.attempts} attempts`,
    `requires streaming ${onOff(i.requireStreaming)}`,
    `card streaming ${onOff(i.cardStreaming)}`,
  ];
  const extras = [
    `backoff ${onOff(i.backoff)}`,
    `stale-on-error ${onOff(i.staleOnError)}${i.staleOnError ? ` (${i.maxStaleSeconds} s)` : ''}`,
    ...(i.failFromSeconds !== null ? [`fails from ${i.failFromSeconds} s`] : []),
    `jitter ${onOff(i.jitter)}${i.jitter ? ` (seed ${i.seed})` : ''}`,
  ];
  lines.push(`  ${controls.join(' · ')}`);
  lines.push(`  ${extras.join(' · ')}`);
  lines.push(`  lanes, in the order the code runs them: ${TIMELINE_STAGES.map((l) => TIMELINE_STAGE_NAMES[l]).join(' → ')}`);
  lines.push('');
  const header = ['#', 'time', 'action', 'If-None-Match', 'why', 'status', 'card', 'outcome', 'rejected at: reason / note'];
  const rows = result.attempts.map((a) => [
    String(a.index),
    `${a.at.toFixed(1)} s`,
    a.action,
    a.ifNoneMatch ?? '-',
    a.why,
    a.status !== undefined ? String(a.status) : '-',
    a.cardVersion !== undefined ? `${a.cardVersion}${a.stale ? ' (stale)' : ''}` : '-',
    a.outcome,
    a.outcome === 'rejected' ? `${rejectedAt(a)}: ${a.reason ?? ''}` : [a.note, a.hiddenNewer].filter((n) => n !== undefined).join('; '),
  ]);
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const fmt = (r: string[]): string =>
    `  ${r.map((cell, c) => (c === r.length - 1 ? cell : c === 1 ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0))).join('  ')}`.trimEnd();
  lines.push(fmt(header));
  for (const r of rows) lines.push(fmt(r));
  lines.push('');
  lines.push(`  ${result.freshness.sentence}`);
  const s = result.stats;
  lines.push(
    `  network fetches ${s.networkFetches} · cache hits ${s.cacheHits} · 304 Not Modified ${s.notModified} · bytes transferred ${s.bytesTransferred.toLocaleString('en-US')} · accepted ${s.accepted} · rejected ${s.rejected}` +
      (s.backoffSkips > 0 ? ` · skipped by backoff ${s.backoffSkips}` : '') +
      (s.staleSelections > 0 ? ` · served stale ${s.staleSelections}` : ''),
  );
  if (result.health !== undefined) lines.push('', ...renderHealth(result.health));
  if (result.rollout !== undefined) lines.push('', ...renderRollout(result.rollout));
  return lines.join('\n');
}

/** Pads the cells of `rows` into columns (the last one free), two spaces in. */
function columns(rows: readonly (readonly string[])[]): string[] {
  const widths = (rows[0] ?? []).map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows.map((r) => `  ${r.map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c] ?? 0))).join('  ')}`.trimEnd());
}

/** The agent's health after each attempt: its call, what the tracker observed, the state and the library's reason. */
function renderHealth(h: TraceHealth): string[] {
  const { enterAfter, leaveAfter, callLeaveAfter } = h.settings;
  const rows = h.steps.map((s) => [
    String(s.attempt),
    s.call ?? '-',
    `${s.observation.failures} failed fetch${s.observation.failures === 1 ? '' : 'es'}${s.observation.usable ? '' : ', no usable card'}, ${s.observation.calls?.failures ?? 0} failed call(s) in a row`,
    `${s.state}${s.transition !== undefined ? ' *' : ''}`,
    s.reason,
  ]);
  return [
    `Health of the agent from its card and its calls (HealthTracker: enter after ${enterAfter} good observations, leave after ${leaveAfter} failed fetches or ${callLeaveAfter} failed calls in a row; * = changed)`,
    ...columns([['#', 'call', 'observed', 'state', 'reason (the library\'s words)'], ...rows]),
    '',
    ...h.lines.map((l) => `  ${l}`),
  ];
}

/** The rollout of v1 → v2: the change, each decision with its reason, the steps' sessions, the alert and the sample sessions. */
function renderRollout(r: TraceRollout): string[] {
  const p = r.policy;
  const lines = [
    `Rollout of card v1 → v2 of ${r.agent} (Rollouts: trigger ${p.trigger}, steps ${p.steps.join(' → ')} %, each held ${p.holdMs / 1000} s and ${p.minTurns} turns; judged after ${p.minSamples} turns, error rate bound +${Math.round(p.maxErrorRateIncrease * 100)} points)`,
    `  change: ${r.change.impact}${r.change.reasons.length > 0 ? ` — ${r.change.reasons.join('; ')}` : ''}`,
    `  ${r.sentence}`,
  ];
  if (!r.staged) return lines;
  lines.push('', ...columns([['time', 'decision', 'share', 'reason (the library\'s words)'], ...r.decisions.map((d) => [`${d.at} s`, d.action, `${d.share}%`, d.reason])]));
  lines.push(
    '',
    ...columns([
      ['step', 'share', 'from', 'to', 'sessions', 'on the candidate', 'candidate turns failed', 'current turns failed'],
      ...r.steps.map((s) => [String(s.step + 1), `${s.share}%`, `${s.from} s`, `${s.to} s`, String(s.sessions), String(s.candidateSessions), `${s.candidate.errors} of ${s.candidate.turns}`, `${s.current.errors} of ${s.current.turns}`]),
    ]),
  );
  if (r.alert !== undefined) lines.push('', `  alert: ${r.alert}`);
  const on = r.samples.filter((s) => s.candidateAt.length > 0 && s.candidateAt[0]! < 100);
  lines.push(
    '',
    `  sample sessions (the same side on every replica): ${r.samples.length} ids; on the candidate before 100 %: ${on.length === 0 ? 'none' : on.map((s) => `${s.sessionId} from ${s.candidateAt[0]}%`).join(', ')}`,
  );
  return lines;
}

/** Runs the trace the flags describe and prints it (text, or with `--json` the whole result). */
export async function runTraceCommand(flags: TraceFlags, io: Pick<Io, 'out'>): Promise<void> {
  const result = await runTrace(traceInputsFromFlags(flags));
  io.out(flags.json ? `${JSON.stringify(result, null, 2)}\n` : `${renderTrace(result)}\n`);
}
