/**
 * `a2a-discovery trace`: the discovery-trace explorer in the terminal. The same scenarios as the
 * interactive model, run by the library's own card cache, validator and matcher on a virtual
 * clock against a scripted endpoint (see docs/explorer.md). Always exits 0 once it ran; usage
 * errors exit 2.
 */
import type { Command } from 'commander';
import { InvalidArgumentError, Option } from 'commander';
import type { TraceCondition, TraceHealth, TraceInputs, TraceResult, TraceRollout } from 'a2a-discovery/explorer';
import { rejectedAt, runTrace, TIMELINE_STAGE_NAMES, TIMELINE_STAGES, TRACE_CONDITIONS, TRACE_ROLLOUT_TRIGGERS } from 'a2a-discovery/explorer';
import { COMMANDS } from './flags.js';

/** The flags as commander parses them. */
interface TraceFlags {
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

function number(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('must be a number');
  if (n < 0) throw new InvalidArgumentError('must not be negative');
  return n;
}

function wholeNumber(value: string): number {
  const n = number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('must be a whole number');
  return n;
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

/**
 * Adds the `trace` subcommand to the program.
 *
 * @example registerTraceCommand(program, { out: (s) => process.stdout.write(s) });
 */
export function registerTraceCommand(program: Command, io: { out: (s: string) => void }): Command {
  return program
    .command('trace')
    .description(COMMANDS.trace.description)
    .addOption(new Option('--condition <condition>', 'endpoint / card condition').choices([...TRACE_CONDITIONS]).default('healthy'))
    .option('--credentials', 'supply discovery credentials (simulated: a placeholder header)', false)
    .option('--max-age <s>', 'Cache-Control max-age the endpoint sends, whole seconds (default 10; 0 = revalidate every time)', wholeNumber)
    .addOption(new Option('--publish-v2-at <s>', 'model time at which card v2 is published (default 12)').argParser(number).conflicts('v2'))
    .option('--no-v2', 'never publish card v2 (v1 throughout)')
    .option('--require-streaming', 'the client requires the streaming capability', false)
    .option('--no-card-streaming', 'the card does not advertise streaming')
    .option('--interval <s>', 'seconds between attempts (default 6)', number)
    .option('--rtt <ms>', 'network round trip in milliseconds, at least 1 (default 100)', number)
    .option('--attempts <n>', 'number of attempts (default 5)', wholeNumber)
    .option('--backoff', "the library's capped exponential backoff after failures (5 s doubling to 300 s)", false)
    .option('--stale-on-error', 'serve a card seen before when a refresh fails, within --max-stale', false)
    .option('--fail-from <s>', 'the condition applies only from this model time; healthy before (default: from the start)', number)
    .option('--max-stale <s>', 'with --stale-on-error: how long past expiry a stale card may be used (default 3600)', number)
    .option('--jitter', "the library's expiry jitter (10 %) and backoff jitter (50 %), from a seeded random source", false)
    .option('--seed <n>', 'seed of the random source used by --jitter (default 1)', wholeNumber)
    .option('--calls <script>', 'the agent\'s A2A calls, one per attempt: ok, an HTTP status 400-599, network or -, optionally @<ms>, e.g. "ok ok 500 500 500 500 500 ok ok"; shows its health after each attempt')
    .option('--enter-after <n>', 'health: good observations in a row before the agent enters snapshots (default 2)', wholeNumber)
    .option('--call-leave-after <n>', 'health: failed calls in a row before the agent leaves new snapshots (default 5)', wholeNumber)
    .option('--v2-breaking', 'card v2 renames its skill (order-status → order-tracking): a breaking change', false)
    .option('--rollout', 'explain how the change from card v1 to v2 rolls out (the library\'s Rollouts on a model clock)', false)
    .addOption(new Option('--rollout-trigger <trigger>', 'which changes roll out by stages (default breaking)').choices([...TRACE_ROLLOUT_TRIGGERS]))
    .option('--rollout-steps <shares>', 'shares of new sessions in percent, ascending (default "5 25 100")')
    .option('--rollout-hold <s>', 'each step lasts at least this many model seconds (default 600)', number)
    .option('--rollout-min-turns <n>', 'each step lasts at least this many turns on the candidate (default 20)', wholeNumber)
    .option('--rollout-min-samples <n>', 'turns on the candidate before its figures are judged (default 10)', wholeNumber)
    .option('--rollout-max-error-increase <rate>', 'how much higher the candidate\'s turn error rate may be, a fraction (default 0.05)', number)
    .option('--candidate-calls <pattern>', 'what turns on the candidate come to, repeated: e.g. "ok 500" fails 50 % (default ok)')
    .option('--current-calls <pattern>', 'what turns on the current snapshot come to, repeated (default ok)')
    .option('--sessions <n>', 'new sessions during the rollout, one a model second, one turn each (default 2000)', wholeNumber)
    .option('--json', 'print the whole result as one JSON object (attempts, stats, inputs, events, cacheStates...)', false)
    .addHelpText(
      'after',
      `
Defaults reproduce the seed's healthy run: five attempts six seconds apart, max-age 10 s, v2 at 12 s,
round trip 100 ms, a 1,200-byte card, backoff, stale-on-error and jitter off:
3 network fetches, 2 cache hits (one fetch is a 304), 5 accepted selections v1, v1, v2, v2, v2.

The table has one row per attempt: its start, action, the If-None-Match it sent, why it went to the
network (or not), the status, the card used, the outcome, and where it was rejected — by lane, in the
explorer's names (Cache lookup, Request, Validation, Cache store, Selection), with the library's stage
where it adds one, e.g. "Validation (parse)" — or why v2 stayed hidden; then when v2 was first used.

JSON (schema a2a-discovery/trace@2): attempts [{index, at (s), action "cache-hit"|"fetch"|"backoff",
trigger, why, status, conditional, ifNoneMatch, cardVersion "v1"|"v2", serverVersion,
outcome "accepted"|"rejected", stage, lane, reason, hiddenNewer, ...}], stats {networkFetches, cacheHits,
notModified, bytesTransferred, accepted, rejected, backoffSkips, staleSelections}, events (each with its
lane), freshness, plus inputs, model, library, cacheStates and summary; with --calls, health {settings,
steps [{attempt, call, callOutcome, observation, state "pending"|"healthy"|"degraded"|"removed", reason,
member, transition}], lines}; with --rollout, rollout {change {impact, reasons}, staged, policy, status,
decisions [{at (s), action, by, reason, step, share}], steps, figures, alert, samples, sentence}.
Exit codes: 0 ran (whatever the outcomes), 2 usage error.
With --json every outcome is one JSON object on stdout, with these exit codes: the result, or
{error: {code, failure, message, ...}, exitCode} for a usage error or a failure.

Examples:
  a2a-discovery trace
  a2a-discovery trace --condition malformed --max-age 30
  a2a-discovery trace --condition unauthorized --credentials --json
  a2a-discovery trace --condition unavailable --fail-from 11 --stale-on-error
  a2a-discovery trace --attempts 9 --calls "ok ok 500 500 500 500 500 ok ok"
  a2a-discovery trace --rollout --v2-breaking --candidate-calls "ok 500"`,
    )
    .action(async (flags: TraceFlags) => {
      const result = await runTrace(traceInputsFromFlags(flags));
      io.out(flags.json ? `${JSON.stringify(result, null, 2)}\n` : `${renderTrace(result)}\n`);
      process.exitCode = 0;
    });
}
