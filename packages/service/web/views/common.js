// @ts-check
/** Small components and hooks shared by the views. */
import { html, useEffect, useId, useLayoutEffect, useRef, useState } from '../lib/vendor.js';
import { outcomeClass, traceHref } from '../lib/format.js';
import { meaningOf } from '../lib/vocabulary.js';

/**
 * A coloured label; the text always carries the meaning (never colour alone).
 * @param {{ tone?: string, text: string, title?: string }} props
 */
export function Badge({ tone, text, title }) {
  return html`<span class=${`badge ${tone ?? outcomeClass(text)}`} title=${title}>${text}</span>`;
}

/**
 * The trace a chat turn or an event was recorded in: its id (`short`: the first 8 characters, the
 * whole id in the title), a link to the trace viewer when `server.telemetry.traceUrl` is set, or a
 * dash when it was not traced.
 * @param {{ traceId: string | null | undefined, template: string | null | undefined, short?: boolean }} props
 */
export function TraceRef({ traceId, template, short }) {
  if (!traceId) return html`<span class="muted trace-none" title="not traced">—</span>`;
  const shown = short ? traceId.slice(0, 8) : traceId;
  const href = traceHref(template, traceId);
  // In a table column named Trace (`short`) the id alone; elsewhere it says what it is.
  const word = short ? '' : 'trace ';
  return href
    ? html`<a class="trace-link" href=${href} target="_blank" rel="noopener noreferrer" title=${`Open trace ${traceId}`} data-trace-id=${traceId}>${word}<code>${shown}</code></a>`
    : html`<span class="trace-id" data-trace-id=${traceId}>${word}<code title=${traceId}>${shown}</code></span>`;
}

/**
 * The current time, re-read every `everyMs` (for "3 s ago").
 * @param {number} everyMs
 */
export function useNow(everyMs = 1000) {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const id = setInterval(() => setNow(Date.now()), everyMs);
    return () => clearInterval(id);
  }, [everyMs]);
  return now;
}

/**
 * Whether a media query matches now, re-rendering when it changes (a phone turned, a window
 * resized).
 * @param {string} query
 */
export function useMedia(query) {
  const [matches, setMatches] = useState(() => window.matchMedia(query).matches);
  useEffect(() => {
    const m = window.matchMedia(query);
    const on = () => setMatches(m.matches);
    on();
    m.addEventListener('change', on);
    return () => m.removeEventListener('change', on);
  }, [query]);
  return matches;
}

/** @typedef {{ col: string, dir: 'ascending' | 'descending' }} Sort */

/**
 * A column header that sorts its table: a button inside `<th scope=col aria-sort>`.
 * @param {{ label: string, col: string, sort: Sort, setSort: (s: Sort) => void }} props
 */
export function SortHeader({ label, col, sort, setSort }) {
  const active = sort.col === col;
  const next = active && sort.dir === 'ascending' ? 'descending' : 'ascending';
  return html`<th scope="col" aria-sort=${active ? sort.dir : 'none'}>
    <button type="button" class="sort" onClick=${() => setSort({ col, dir: next })}>
      ${label}<span class="sort-mark" aria-hidden="true">${active ? (sort.dir === 'ascending' ? ' ▲' : ' ▼') : ' ↕'}</span>
    </button>
  </th>`;
}

/**
 * The heading of a view; focused when the view opens so a screen reader announces it.
 * @param {{ title: string, children?: any }} props
 */
export function ViewHeader({ title, children }) {
  return html`<header class="view-header">
    <h1 tabindex="-1" id="view-title">${title}</h1>
    ${children ? html`<p class="lead">${children}</p>` : null}
  </header>`;
}

/** @param {{ cols: number, text: string }} props */
export function EmptyRow({ cols, text }) {
  return html`<tr class="empty"><td colspan=${cols}>${text}</td></tr>`;
}

/**
 * A summary tile: a number with its label.
 * @param {{ label: string, value: string | number, tone?: string }} props
 */
export function Tile({ label, value, tone }) {
  return html`<div class=${`tile ${tone ?? ''}`}><span class="tile-value">${value}</span><span class="tile-label">${label}</span></div>`;
}

/**
 * The panel a table sits in: it scrolls sideways when the table is wider than the screen, and
 * only then is it a tab stop, so the keyboard can scroll it (a scrolling region must be
 * focusable) without adding a needless stop on wide screens — a named region then (`label`, or
 * the table's caption), so a screen reader says what the stop is.
 * @param {{ class?: string, label?: string, children?: any }} props
 */
export function TableWrap({ class: cls, label, children }) {
  const ref = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [scrolls, setScrolls] = useState(false);
  const [caption, setCaption] = useState('');
  const check = () => {
    const el = ref.current;
    if (!el) return;
    setScrolls(el.scrollWidth > el.clientWidth + 1);
    setCaption(el.querySelector('caption')?.textContent?.trim() ?? '');
  };
  // After every render, and whenever the panel or its table changes size without one (the
  // window resizes, a font arrives, a cell's text wraps differently).
  useEffect(check);
  useEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const observer = new ResizeObserver(check);
    observer.observe(el);
    if (el.firstElementChild) observer.observe(el.firstElementChild);
    return () => observer.disconnect();
  }, []);
  const name = label ?? (caption || 'Table');
  return html`<div ref=${ref} class=${cls ? `table-wrap ${cls}` : 'table-wrap'} tabindex=${scrolls ? '0' : undefined} role=${scrolls ? 'region' : undefined} aria-label=${scrolls ? `${name} (scrolls sideways)` : undefined}>${children}</div>`;
}

/** What "critical" means beside a health state: never removed for health reasons, kept (flagged degraded) while it fails. @param {{ degraded: boolean }} props */
export function CriticalChip({ degraded }) {
  return html`<${Explained} className="chip chip-critical" text=${degraded ? 'critical (kept while degraded)' : 'critical: never removed'} explain=${meaningOf('badge', 'critical') ?? ''} />`;
}

/**
 * A badge that explains itself (docs/vocabulary.md): its words in a button, the explanation in a
 * tooltip shown on hover, on keyboard focus and on a tap (a phone has no hover), dismissed with
 * Escape. `className`: the badge's classes (default a badge coloured by its text).
 * @param {{ text: string, explain: string, tone?: string, className?: string }} props
 */
export function Explained({ text, explain, tone, className }) {
  const id = `tip-${useId()}`;
  const [open, setOpen] = useState(false);
  const [dismissed, setDismissed] = useState(false);
  if (!explain) return html`<span class=${className ?? `badge ${tone ?? outcomeClass(text)}`}>${text}</span>`;
  return html`<span class=${`tip-wrap${dismissed ? ' tip-dismissed' : ''}`} onMouseLeave=${() => setDismissed(false)}>
    <button
      type="button"
      class=${`tip-btn ${className ?? `badge ${tone ?? outcomeClass(text)}`}`}
      aria-describedby=${id}
      aria-expanded=${open ? 'true' : 'false'}
      onClick=${() => setOpen(!open)}
      onBlur=${() => {
        setOpen(false);
        setDismissed(false);
      }}
      onKeyDown=${(/** @type {KeyboardEvent} */ ev) => {
        if (ev.key !== 'Escape') return;
        setOpen(false);
        setDismissed(true);
      }}
    >${text}</button>
    <span role="tooltip" id=${id} class=${`tip${open ? ' tip-open' : ''}`}>${explain}</span>
  </span>`;
}

/**
 * A button whose action asks first: pressing it shows the question with the action's own word
 * and Cancel in its place (Cancel has focus, so a second Enter does nothing harmful); only the
 * second button acts. `id` names the first button; the confirming one is `${id}-confirm`.
 * @param {{ id: string, label: string, question: string, confirmLabel: string, danger?: boolean, disabled?: boolean, onConfirm: () => unknown }} props
 */
export function ConfirmButton({ id, label, question, confirmLabel, danger, disabled, onConfirm }) {
  const [asking, setAsking] = useState(false);
  const cancel = useRef(/** @type {HTMLButtonElement | null} */ (null));
  const first = useRef(/** @type {HTMLButtonElement | null} */ (null));
  const back = useRef(false);
  // Before the browser paints: focus never rests on the page's body in between.
  useLayoutEffect(() => {
    if (asking) cancel.current?.focus();
    else if (back.current) first.current?.focus();
    back.current = false;
  }, [asking]);
  const tone = danger ? 'btn btn-danger' : 'btn';
  if (!asking) return html`<button type="button" ref=${first} id=${id} class=${tone} disabled=${disabled} onClick=${() => setAsking(true)}>${label}</button>`;
  return html`<span class="confirm" role="group" aria-labelledby=${`${id}-question`}>
    <span class="confirm-question" id=${`${id}-question`}>${question}</span>${' '}<button type="button" id=${`${id}-confirm`} class=${`${tone} btn-strong`} onClick=${() => {
      setAsking(false);
      void onConfirm();
    }}>${confirmLabel}</button>${' '}<button type="button" ref=${cancel} id=${`${id}-cancel`} class="btn" onClick=${() => {
      back.current = true;
      setAsking(false);
    }}>Cancel</button>
  </span>`;
}
