// @ts-check
/**
 * Chat: send a message to a new or existing session and see which agent answered, on which
 * snapshot. Replies are peer-supplied text and are shown as text only.
 */
import { html, useState } from '../lib/vendor.js';
import { api, ApiError } from '../lib/api.js';
import { shortDigest } from '../lib/format.js';
import { TraceRef, ViewHeader } from './common.js';

/** @typedef {import('../lib/store.js').LiveStore} LiveStore */
/** @typedef {import('../lib/types.js').ChatTurn} ChatTurn */
/** @typedef {{ id: number, sessionId: string, message: string, turn?: ChatTurn, error?: string }} Entry */

const NEW = '';
/** The select's value for a new session started on the retained snapshot `digest`. */
const NEW_ON = 'new@';

/** Kept across view changes for the life of the page. */
/** @type {Entry[]} */
let transcript = [];
let nextId = 1;
let lastSession = NEW;

/** @param {{ store: LiveStore }} props */
export function ChatView({ store }) {
  const [session, setSession] = useState(lastSession);
  const [message, setMessage] = useState('');
  const [entries, setEntries] = useState(transcript);
  const [sending, setSending] = useState(false);
  // Only sessions this page can continue: its caller's own (the others — another caller's, or one
  // started in the service's process — would be refused).
  const sessions = (store.sessions?.sessions ?? []).filter((s) => s.owned === true);
  const known = new Set(sessions.map((s) => s.sessionId));
  for (const e of entries) if (e.turn) known.add(e.turn.sessionId);
  // Earlier snapshots still retained: a new session can start on one, to compare answers.
  const earlier = (store.sessions?.retained ?? []).filter((r) => !r.current);

  /** @param {Entry[]} next */
  const save = (next) => {
    transcript = next;
    setEntries(next);
  };
  /** @param {string} id */
  const choose = (id) => {
    lastSession = id;
    setSession(id);
  };

  /** @param {Event} ev */
  const send = async (ev) => {
    ev.preventDefault();
    const text = message.trim();
    if (text === '' || sending) return;
    setSending(true);
    const entry = /** @type {Entry} */ ({ id: nextId++, sessionId: session, message: text });
    const pending = [...transcript, entry];
    save(pending);
    setMessage('');
    try {
      const body = session.startsWith(NEW_ON) ? { message: text, snapshot: session.slice(NEW_ON.length) } : { message: text, ...(session !== NEW && { sessionId: session }) };
      /** @type {ChatTurn} */
      const turn = await api('/api/chat', { method: 'POST', body });
      save(pending.map((e) => (e.id === entry.id ? { ...e, sessionId: turn.sessionId, turn } : e)));
      choose(turn.sessionId);
    } catch (err) {
      // 502 agent-failed: the agent the turn called failed; the session is kept (continue it).
      const failed = err instanceof ApiError && err.status === 502 && err.code === 'agent-failed' ? /** @type {ChatTurn} */ (err.body) : undefined;
      if (failed !== undefined) {
        save(pending.map((e) => (e.id === entry.id ? { ...e, sessionId: failed.sessionId, turn: failed } : e)));
        choose(failed.sessionId);
      } else save(pending.map((e) => (e.id === entry.id ? { ...e, error: err instanceof Error ? err.message : String(err) } : e)));
    } finally {
      setSending(false);
      void store.refresh('sessions');
      void store.refresh('snapshots');
    }
  };

  const version = store.snapshots?.history.at(-1)?.version;
  return html`<section aria-labelledby="view-title">
    <${ViewHeader} title="Chat">Talk to the orchestrator. A new session is pinned to the current snapshot${version !== undefined ? ` (v${version})` : ''}${store.rollout?.active ? ` (while a rollout is in progress, ${store.rollout.active.share} % of new sessions start on its candidate instead)` : ''} or, to compare, to an earlier snapshot still retained; an existing one answers on the snapshot it is pinned to.<//>
    <form class="chat-form" onSubmit=${send} aria-label="Send a message">
      <div class="row">
        <label>Session
          <select id="chat-session" value=${session} onChange=${(/** @type {any} */ ev) => choose(ev.currentTarget.value)}>
            <option value=${NEW}>New session (current snapshot)</option>
            ${earlier.map((r) => html`<option value=${`${NEW_ON}${r.digest}`}>New session on v${r.version} (retained)</option>`)}
            ${[...known].map((id) => {
              const pinned = sessions.find((s) => s.sessionId === id);
              return html`<option value=${id}>${id}${pinned ? ` (v${pinned.version})` : ''}</option>`;
            })}
          </select>
        </label>
      </div>
      <label for="chat-message">Message</label>
      <textarea id="chat-message" rows="3" value=${message} placeholder="e.g. Is serial 123 under warranty?"
        onInput=${(/** @type {any} */ ev) => setMessage(ev.currentTarget.value)}
        onKeyDown=${(/** @type {KeyboardEvent} */ ev) => { if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) void send(ev); }}></textarea>
      <div class="row">
        <button type="submit" class="btn btn-primary" disabled=${sending || message.trim() === '' || store.whoami?.can.chat === false}>${sending ? 'Sending…' : 'Send'}</button>
        <span class="muted small">${store.whoami?.can.chat === false ? 'Chatting needs the operator role; you are a viewer.' : 'Ctrl+Enter sends'}</span>
      </div>
    </form>
    <h2 id="transcript-h">Conversation</h2>
    <div class="transcript-log" role="log" aria-live="polite" aria-labelledby="transcript-h">
    <ol class="transcript">
      ${entries.length === 0 ? html`<li class="muted">No message sent from this page yet.</li>` : null}
      ${entries.map(
        (e) => html`<li key=${e.id} class="turn" data-turn=${e.id}>
          <div class="you"><span class="who">You</span>${e.sessionId ? html` <span class="muted small">in ${e.sessionId}</span>` : html` <span class="muted small">new session</span>`}<p>${e.message}</p></div>
          ${e.error ? html`<div class="reply error" role="alert">Failed: ${e.error}</div>` : null}
          ${!e.turn && !e.error ? html`<div class="reply muted">Waiting for the answer…</div>` : null}
          ${e.turn
            ? html`<div class="reply">
                <div class="meta">
                  ${e.turn.error === 'agent-failed'
                    ? html`<span class="who">Failed: <strong class="failed-agent">${e.turn.agent}</strong>${e.turn.agentStatus !== undefined ? html` <span class="chip">answered ${e.turn.agentStatus}</span>` : null}</span>`
                    : html`<span class="who">Answered by <strong class="author">${e.turn.author ?? 'no agent'}</strong></span>`}
                  <span class="chip">on snapshot <span class="version">v${e.turn.version ?? '?'}</span></span>
                  <code class="digest" title=${e.turn.digest}>${shortDigest(e.turn.digest)}</code>
                  <span class="muted small">session ${e.turn.sessionId}</span>
                  ${e.turn.traceId ? html`<span class="small turn-trace"><${TraceRef} traceId=${e.turn.traceId} template=${store.whoami?.traceUrl} /></span>` : null}
                </div>
                ${(e.turn.notices ?? []).map((n) => html`<p class="notice" role="note">${n}</p>`)}
                <p class="reply-text">${e.turn.reply}</p>
                ${e.turn.error ? html`<p class="error" role="alert">${e.turn.error === 'agent-failed' ? e.turn.message : e.turn.error}</p>` : null}
                ${(e.turn.agents ?? []).length > 1 ? html`<p class="muted small agents">Agents in this turn: ${(e.turn.agents ?? []).join(' → ')}</p>` : null}
                ${e.turn.events.length > 1
                  ? html`<details><summary>${e.turn.events.length} events in this turn</summary><ol>${e.turn.events.map((x) => html`<li><strong>${x.author}</strong>: ${x.text}${x.error ? ` (${x.error})` : ''}</li>`)}</ol></details>`
                  : null}
              </div>`
            : null}
        </li>`,
      )}
    </ol>
    </div>
  </section>`;
}
