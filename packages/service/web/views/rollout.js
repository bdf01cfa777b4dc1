// @ts-check
/**
 * Rollout: the staged rollout in progress — the agents it stages with what their change breaks,
 * its step and share of new sessions, how long the step has held and how many turns it has seen,
 * the figures of both sides per agent and for every agent, and each decision with who took it and
 * why — with an operator's Hold / Resume, Promote and Roll back; then the last rollouts and the
 * changes quarantined after a rollback. Read from `GET /api/rollout`, re-read on every rollout
 * event of the stream.
 */
import { html, useEffect, useState } from '../lib/vendor.js';
import { api } from '../lib/api.js';
import { ROLLOUT_WORD, ago, clockTime, duration, num, percent, rolloutBy, rolloutClass, shortDigest } from '../lib/format.js';
import { Badge, ConfirmButton, EmptyRow, TableWrap, ViewHeader, useNow } from './common.js';

/** @typedef {import('../lib/store.js').LiveStore} LiveStore */
/** @typedef {import('../lib/types.js').RolloutStateJson} RolloutStateJson */
/** @typedef {import('../lib/types.js').RolloutPolicyJson} RolloutPolicyJson */
/** @typedef {import('../lib/types.js').RolloutFiguresJson} RolloutFiguresJson */
/** @typedef {import('../lib/types.js').CallFiguresJson} CallFiguresJson */
/** @typedef {import('../lib/types.js').RolloutDecisionJson} RolloutDecisionJson */

/** The figures of every agent's turns, in `figures.candidate` and `figures.baseline`. */
const ALL_AGENTS = '*';
/** While a rollout runs, its figures move with every turn (no event says so): re-read this often. */
const FIGURES_EVERY_MS = 5_000;
/** The steps when the service does not say (its defaults). */
const DEFAULT_STEPS = [5, 25, 100];

/** What each operator decision does, in the words of its button, its question and its answer. */
const DECISIONS = /** @type {const} */ ({
  hold: { label: 'Hold', confirm: 'Hold', done: 'Held: the share stays where it is until someone resumes; an automatic rollback still happens.' },
  resume: { label: 'Resume', confirm: 'Resume', done: 'Resumed: the rollout goes on to its next step once the step has held long enough.' },
  promote: { label: 'Promote', confirm: 'Promote now', done: 'Promoted: the candidate is the current snapshot for every new session.' },
  rollback: { label: 'Roll back', confirm: 'Roll back now', done: 'Rolled back: new sessions start on the current snapshot again; the change is quarantined.' },
});

/** @param {{ store: LiveStore }} props */
export function RolloutView({ store }) {
  const now = useNow(1000);
  const r = store.rollout;
  const active = r?.active ?? null;
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);
  // Rollout decisions are an operator's (as a refresh is); an open loopback service lets anyone.
  const mayDecide = store.whoami?.can.refresh !== false;

  // Read when the view opens; while a rollout runs, again every few seconds for its figures.
  useEffect(() => void store.refresh('rollout'), []);
  useEffect(() => {
    if (active === null) return;
    const id = setInterval(() => void store.refresh('rollout'), FIGURES_EVERY_MS);
    return () => clearInterval(id);
  }, [active?.id]);

  /** @param {keyof typeof DECISIONS} decision */
  const decide = async (decision) => {
    setBusy(true);
    try {
      await api(`/api/rollout/${decision}`, { method: 'POST', body: {} });
      setStatus(DECISIONS[decision].done);
    } catch (err) {
      setStatus(`Could not ${DECISIONS[decision].label.toLowerCase()}: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setBusy(false);
      await Promise.all([store.refresh('rollout'), store.refresh('snapshots')]);
    }
  };

  const history = store.snapshots?.history ?? [];
  /** A digest as its version (`v4`), else short. @param {string} digest */
  const versionOf = (digest) => {
    const h = history.filter((x) => x.digest === digest).at(-1);
    return h ? `v${h.version}` : shortDigest(digest);
  };

  return html`<section aria-labelledby="view-title">
    <${ViewHeader} title="Rollout">A breaking card change is not made current at once: new sessions go to the candidate snapshot by a share that grows step by step, and the change is promoted or rolled back on the figures of real calls on both sides. Sessions never move between snapshots mid-conversation.<//>
    <p class="status-line" role="status" id="rollout-status">${status}</p>
    ${r === undefined
      ? html`<p class="muted">Loading…</p>`
      : !r.enabled
        ? html`<p class="panel" id="rollout-off">Staged rollouts are off on this service: every change that passes validation is published to all new sessions at once.</p>`
        : active
          ? html`<${Active} s=${active} policy=${r.policy} figures=${r.figures} now=${now} versionOf=${versionOf} mayDecide=${mayDecide} busy=${busy} decide=${decide} />`
          : html`<div class="panel" id="rollout-none">
              <h2>No rollout in progress</h2>
              <p>${r.policy?.trigger === 'any' ? 'Every card change' : 'A breaking card change'} that passes validation will roll out here by steps (${stepsText(r.policy)}) instead of reaching every new session at once.${r.history.length > 0 ? ' The last rollouts are below.' : ''}</p>
            </div>`}
    ${r?.enabled ? html`<${History} list=${r.history} versionOf=${versionOf} />` : null}
    ${r?.enabled ? html`<${Quarantined} list=${r.quarantined} />` : null}
  </section>`;
}

/** @param {RolloutPolicyJson | undefined} policy */
function stepsText(policy) {
  return (policy?.steps ?? DEFAULT_STEPS).map((s) => percent(s)).join(' → ');
}

/**
 * The rollout in progress.
 * @param {{ s: RolloutStateJson, policy: RolloutPolicyJson | undefined, figures: RolloutFiguresJson | null, now: number, versionOf: (d: string) => string, mayDecide: boolean, busy: boolean, decide: (d: keyof typeof DECISIONS) => Promise<void> }} props
 */
function Active({ s, policy, figures, now, versionOf, mayDecide, busy, decide }) {
  const steps = policy?.steps ?? DEFAULT_STEPS;
  const held = s.status === 'held';
  const agents = s.changes.map((c) => c.localName).join(', ');
  const holdMs = policy?.holdMs ?? 0;
  const elapsed = Math.max(0, now - s.stepStartedAt);
  const turns = figures?.stepTurns ?? 0;
  const minTurns = policy?.minTurns ?? 0;
  const next = steps[s.step + 1];
  return html`<div class="panel rollout-active" id="rollout-active" data-status=${s.status} data-step=${s.step}>
    <h2 class="rollout-title">Rollout of ${agents} <${Badge} tone=${rolloutClass(s.status)} text=${ROLLOUT_WORD[s.status] ?? s.status} /></h2>
    <p>Candidate <strong>v${s.candidateVersion}</strong> <code title=${s.candidate}>${shortDigest(s.candidate)}</code> against the current snapshot <strong>${versionOf(s.baseline)}</strong> <code title=${s.baseline}>${shortDigest(s.baseline)}</code>; started <time datetime=${new Date(s.startedAt).toISOString()} title=${new Date(s.startedAt).toISOString()}>${ago(s.startedAt, now)}</time>.</p>
    <ol class="rollout-steps" aria-label="Steps: share of new sessions on the candidate">
      ${steps.map((share, i) => {
        const state = i < s.step ? 'done' : i === s.step ? 'current' : 'next';
        return html`<li class=${`step-${state}`} aria-current=${i === s.step ? 'step' : undefined}>
          <span class="step-share">${percent(share)}</span>${' '}<span class="step-word">${state === 'done' ? 'passed' : state === 'current' ? (held ? 'held here' : 'now') : share >= 100 ? 'promotion' : 'next'}</span>
        </li>`;
      })}
    </ol>
    <p id="rollout-progress">
      <strong>Step ${s.step + 1} of ${steps.length}: ${percent(s.share)} of new sessions</strong> start on the candidate.
      ${held
        ? html` <strong>Held by an operator</strong>: the share stays until someone resumes it; an automatic rollback still happens if the figures go out of bounds.`
        : html` Held ${duration(elapsed)} of ${duration(holdMs)}${elapsed < holdMs ? ` (${duration(holdMs - elapsed)} left)` : ''} and ${num(turns)} of ${num(minTurns)} turns on the candidate; then ${next === undefined || next >= 100 ? 'it is promoted' : `it advances to ${percent(next)}`} if its figures stay within bounds.`}
    </p>
    ${mayDecide
      ? html`<div class="rollout-actions" role="group" aria-label="Rollout decisions">
          ${held
            ? html`<${ConfirmButton} id="rollout-resume" label="Resume" question=${`Resume the rollout of ${agents} at ${percent(s.share)}?`} confirmLabel=${DECISIONS.resume.confirm} disabled=${busy} onConfirm=${() => decide('resume')} />`
            : html`<${ConfirmButton} id="rollout-hold" label="Hold" question=${`Hold the rollout of ${agents} at ${percent(s.share)}?`} confirmLabel=${DECISIONS.hold.confirm} disabled=${busy} onConfirm=${() => decide('hold')} />`}
          <${ConfirmButton} id="rollout-promote" label="Promote" question=${`Make v${s.candidateVersion} current for every new session now?`} confirmLabel=${DECISIONS.promote.confirm} disabled=${busy} onConfirm=${() => decide('promote')} />
          <${ConfirmButton} id="rollout-rollback" label="Roll back" danger=${true} question=${`Roll back ${agents}? New sessions go back to ${versionOf(s.baseline)} and the change is not rolled out again while its card stays the same.`} confirmLabel=${DECISIONS.rollback.confirm} disabled=${busy} onConfirm=${() => decide('rollback')} />
        </div>`
      : html`<p class="muted small" id="rollout-read-only">Only an operator may hold, resume, promote or roll back a rollout.</p>`}
    <h3>Staged agents</h3>
    <${TableWrap}>
      <table class="data rollout-changes">
        <caption>What the candidate changes, and why it rolls out by steps</caption>
        <thead><tr><th scope="col">Agent</th><th scope="col">Impact</th><th scope="col">What the change breaks or changes</th></tr></thead>
        <tbody>
          ${s.changes.map(
            (c) => html`<tr key=${c.localName} data-agent=${c.localName}>
              <th scope="row"><code>${c.localName}</code></th>
              <td><${Badge} tone=${c.impact === 'breaking' ? 'o-failed' : 'o-good'} text=${c.impact} /></td>
              <td class="wrap">${c.reasons.length > 0 ? html`<ul class="reasons">${c.reasons.map((x) => html`<li>${x}</li>`)}</ul>` : html`<span class="muted">changed (no reason given)</span>`}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>
    <h3>Figures of both sides</h3>
    <${Figures} s=${s} figures=${figures} policy=${policy} versionOf=${versionOf} />
    <h3>Decisions</h3>
    <${Decisions} list=${s.decisions} id="rollout-decisions" />
  </div>`;
}

/**
 * The turns of each staged agent, and of every agent, on the candidate and on the current
 * snapshot, side by side.
 * @param {{ s: RolloutStateJson, figures: RolloutFiguresJson | null, policy: RolloutPolicyJson | undefined, versionOf: (d: string) => string }} props
 */
function Figures({ s, figures, policy, versionOf }) {
  const rows = [...s.changes.map((c) => c.localName), ALL_AGENTS];
  const cells = (/** @type {CallFiguresJson | undefined} */ f) =>
    f && f.calls > 0
      ? html`<td class="num">${num(f.calls)}</td><td class="num">${num(f.errors)}</td><td class="num">${percent(f.errorRate, true)}</td><td class="num">${f.p95Ms !== undefined ? `${num(Math.round(f.p95Ms))} ms` : '—'}</td>`
      : html`<td class="num muted" colspan="4">no turns yet</td>`;
  return html`<${TableWrap}>
    <table class="data rollout-figures">
      <caption>Turns on the candidate v${s.candidateVersion} and on the current snapshot ${versionOf(s.baseline)}${policy
        ? `; rolled back when, after ${policy.minSamples} turns, the candidate's error rate is more than ${Math.round(policy.maxErrorRateIncrease * 100)} points above the current snapshot's, or its p95 more than ×${policy.maxLatencyRatio} and +${policy.minLatencyIncreaseMs} ms`
        : ''}</caption>
      <thead>
        <tr><td></td><th scope="colgroup" colspan="4">Candidate v${s.candidateVersion}</th><th scope="colgroup" colspan="4">Current ${versionOf(s.baseline)}</th></tr>
        <tr><th scope="col">Agent</th>${[0, 1].map(() => html`<th scope="col">Turns</th><th scope="col">Errors</th><th scope="col">Error rate</th><th scope="col">p95</th>`)}</tr>
      </thead>
      <tbody>
        ${rows.map(
          (name) => html`<tr key=${name} data-agent=${name}>
            <th scope="row">${name === ALL_AGENTS ? 'all agents' : html`<code>${name}</code>`}</th>
            ${cells(figures?.candidate[name])}
            ${cells(figures?.baseline[name])}
          </tr>`,
        )}
      </tbody>
    </table>
  <//>`;
}

/**
 * A rollout's decisions, newest first: when, what, the share after it, who and why.
 * @param {{ list: RolloutDecisionJson[], id?: string }} props
 */
function Decisions({ list, id }) {
  return html`<ol class="decisions" id=${id} reversed>
    ${[...list].reverse().map(
      (d) =>
        html`<li data-action=${d.action}><time datetime=${new Date(d.at).toISOString()}>${clockTime(d.at).slice(0, 8)}</time> <${Badge} tone=${rolloutClass(d.action)} text=${ROLLOUT_WORD[d.action] ?? d.action} /> <span class="decision-share">${percent(d.share)} of new sessions</span> <span class="decision-by">${rolloutBy(d.by)}</span>${d.reason && !operatorsOwn(d) ? html`: <span class="decision-reason">${d.reason}</span>` : null}</li>`,
    )}
  </ol>`;
}

/**
 * An operator's own decision, whose reason only repeats who did what ("rolled back by Ada").
 * @param {RolloutDecisionJson} d
 */
function operatorsOwn(d) {
  return d.by !== 'auto' && ['held', 'resumed', 'promoted', 'rolled-back'].includes(d.action);
}

/**
 * The last rollouts, newest first, each with its status and decisions.
 * @param {{ list: RolloutStateJson[], versionOf: (d: string) => string }} props
 */
function History({ list, versionOf }) {
  return html`<h2 id="rollout-history-h">Last rollouts</h2>
    <${TableWrap}>
      <table class="data rollout-history" aria-describedby="rollout-history-h">
        <caption>Newest first: how each ended, and its decisions</caption>
        <thead><tr><th scope="col">Started</th><th scope="col">Agents</th><th scope="col">Candidate</th><th scope="col">Status</th><th scope="col">Decisions</th></tr></thead>
        <tbody>
          ${list.length === 0 ? html`<${EmptyRow} cols=${5} text="No rollout has ended yet." />` : null}
          ${list.map(
            (s) => html`<tr key=${`${s.id}|${s.startedAt}`} data-status=${s.status}>
              <td class="num"><time datetime=${new Date(s.startedAt).toISOString()}>${clockTime(s.startedAt).slice(0, 8)}</time></td>
              <th scope="row" class="wrap">${s.changes.map((c) => html`<div><code>${c.localName}</code> <span class="muted small">${c.impact}${c.reasons.length > 0 ? `: ${c.reasons.join('; ')}` : ''}</span></div>`)}</th>
              <td>v${s.candidateVersion} <code class="muted small" title=${s.candidate}>${shortDigest(s.candidate)}</code><div class="muted small">against ${versionOf(s.baseline)}</div></td>
              <td><${Badge} tone=${rolloutClass(s.status)} text=${ROLLOUT_WORD[s.status] ?? s.status} />${s.endedAt !== undefined ? html`<div class="muted small">after ${duration(s.endedAt - s.startedAt)}</div>` : null}</td>
              <td class="wrap"><${Decisions} list=${s.decisions} /></td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>`;
}

/**
 * Changes rolled back and kept out until the agent's card changes again.
 * @param {{ list: { localName: string, version: string }[] }} props
 */
function Quarantined({ list }) {
  return html`<h2 id="rollout-quarantine-h">Quarantined changes</h2>
    <p class="muted small">A change that was rolled back is not rolled out again while the agent's card stays the same; the agent's current version keeps serving. A new card (another version) rolls out afresh.</p>
    ${list.length === 0
      ? html`<p class="muted" id="rollout-quarantine-none">None.</p>`
      : html`<ul class="quarantined" aria-labelledby="rollout-quarantine-h">
          ${list.map((q) => html`<li key=${q.localName}><code>${q.localName}</code>: ${q.version === 'removed' ? 'leaving the snapshot' : html`card <code title=${q.version}>${shortDigest(q.version)}</code>`} is kept out</li>`)}
        </ul>`}`;
}
