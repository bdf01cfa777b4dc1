// @ts-check
/**
 * What the agent's calls decide, as the run gives it: its health after each attempt (the
 * library's HealthTracker, fed by CallHealth and the card cache) and the staged rollout of card v2
 * (the library's Rollouts). The page words nothing itself: every state, decision and reason is
 * the run's.
 */
import { html } from '../../lib/vendor.js';
import { modelSeconds, num } from '../../lib/format.js';
import { Badge, TableWrap } from '../common.js';

/** @typedef {import('../../lib/types.js').TraceHealth} TraceHealth */
/** @typedef {import('../../lib/types.js').TraceRollout} TraceRollout */

/** @type {Record<string, string>} */
const ACTION_TONE = { started: 'o-info', advanced: 'o-request', promoted: 'o-good', 'rolled-back': 'o-failed' };

/** @param {{ failures: number, usable: boolean, calls?: { failures: number } }} o */
function observed(o) {
  const fetches = `${o.failures} failed fetch${o.failures === 1 ? '' : 'es'}${o.usable ? '' : ', no usable card'}`;
  const calls = o.calls?.failures ?? 0;
  return `${fetches}; ${calls} failed call${calls === 1 ? '' : 's'} in a row`;
}

/** @param {{ health: TraceHealth }} props */
export function HealthPanel({ health }) {
  const { enterAfter, leaveAfter, callLeaveAfter } = health.settings;
  return html`<section class="panel calls-panel" id="trace-health" aria-labelledby="health-h">
    <h2 id="health-h">Health from the agent’s calls</h2>
    <p class="muted">After each attempt the agent’s call is counted and the health tracker observes the card cache and the calls, as the service does: it enters after ${enterAfter} good observations, leaves new snapshots after ${leaveAfter} failed fetches or ${callLeaveAfter} failed calls in a row, and returns after a good call.</p>
    <ul class="calls-lines" id="trace-health-lines">${health.lines.map((l) => html`<li>${l}</li>`)}</ul>
    <${TableWrap} label="Health per attempt">
      <table class="data health" id="trace-health-table">
        <caption>Health per attempt</caption>
        <thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Call</th><th scope="col">Observed</th><th scope="col">State</th><th scope="col">Reason (the library’s words)</th></tr></thead>
        <tbody>
          ${health.steps.map(
            (s) => html`<tr key=${s.attempt} data-attempt=${s.attempt} data-state=${s.state} class=${s.transition ? 'changed-row' : ''}>
              <th scope="row">${s.attempt}</th>
              <td class="num">${modelSeconds(s.at)}</td>
              <td><span class=${`call-token call-${s.callOutcome}`}>${s.call ?? '—'}</span></td>
              <td class="small">${observed(s.observation)}</td>
              <td><${Badge} text=${s.state} />${s.transition ? html`<div class="small ink-2">was ${s.transition.from}</div>` : null}</td>
              <td class="reason-cell" data-reason>${s.reason}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>
  </section>`;
}

/** @param {{ rollout: TraceRollout }} props */
export function RolloutPanel({ rollout: r }) {
  const p = r.policy;
  const early = r.samples.filter((s) => s.candidateAt.length > 0 && s.candidateAt[0] < 100);
  return html`<section class="panel calls-panel" id="trace-rollout" aria-labelledby="rollout-h" data-status=${r.status}>
    <h2 id="rollout-h">Rollout of card v1 → v2</h2>
    <p>
      <${Badge} text=${r.change.impact} tone=${r.change.impact === 'breaking' ? 'o-failed' : 'o-good'} />
      <span class="ink-2"> ${r.change.reasons.length > 0 ? r.change.reasons.join('; ') : 'no breaking difference'}</span>
    </p>
    <p class="rollout-sentence" id="trace-rollout-sentence">${r.sentence}</p>
    ${r.staged
      ? html`
          <p class="muted small">Policy: trigger ${p.trigger}; steps ${p.steps.join(' → ')} %, each held ${num(p.holdMs / 1000)} s and ${p.minTurns} turns; judged after ${p.minSamples} turns on the candidate; bounds +${Math.round(p.maxErrorRateIncrease * 100)} points of error rate, p95 ×${p.maxLatencyRatio} and +${p.minLatencyIncreaseMs} ms.</p>
          <${TableWrap} label="Rollout decisions">
            <table class="data rollout-decisions" id="trace-rollout-decisions">
              <caption>Decisions</caption>
              <thead><tr><th scope="col">Time</th><th scope="col">Decision</th><th scope="col">Share</th><th scope="col">Reason (the library’s words)</th></tr></thead>
              <tbody>
                ${r.decisions.map(
                  (d, i) => html`<tr key=${i} data-action=${d.action}>
                    <td class="num">${modelSeconds(d.at)}</td>
                    <td><${Badge} text=${d.action} tone=${ACTION_TONE[d.action] ?? 'o-info'} /></td>
                    <td class="num">${d.share}%</td>
                    <td class="reason-cell" data-reason>${d.reason}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          <//>
          <${TableWrap} label="Rollout steps">
            <table class="data rollout-steps" id="trace-rollout-steps">
              <caption>Steps: where new sessions started and what their turns came to</caption>
              <thead><tr><th scope="col">Step</th><th scope="col">Share</th><th scope="col">From – to</th><th scope="col">Sessions</th><th scope="col">On the candidate</th><th scope="col">Failed on the candidate</th><th scope="col">Failed on the current</th></tr></thead>
              <tbody>
                ${r.steps.map(
                  (s) => html`<tr key=${s.step}>
                    <th scope="row">${s.step + 1}</th>
                    <td class="num">${s.share}%</td>
                    <td class="num nowrap">${modelSeconds(s.from)} – ${modelSeconds(s.to)}</td>
                    <td class="num">${num(s.sessions)}</td>
                    <td class="num">${num(s.candidateSessions)}</td>
                    <td class="num">${s.candidate.errors} of ${s.candidate.turns}</td>
                    <td class="num">${s.current.errors} of ${s.current.turns}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          <//>
          ${r.alert ? html`<p class="rollout-alert" id="trace-rollout-alert" role="note"><strong>Alert:</strong> ${r.alert}</p>` : null}
          <p class="small" id="trace-rollout-samples">
            Sample sessions: the side depends only on the rollout and the session id, so it is the same on every replica and never changes mid-conversation.
            Of the first ${r.samples.length} (${r.samples[0]?.sessionId} … ${r.samples.at(-1)?.sessionId}):
            ${early.length === 0 ? ' none starts on the candidate before 100 %.' : ` ${early.map((s) => `${s.sessionId} from ${s.candidateAt[0]} %`).join(', ')} start on the candidate; the others only at 100 %.`}
          </p>
        `
      : null}
  </section>`;
}
