// @ts-check
/**
 * The a2a-discovery dashboard: hash routes over the views, the live store fed by the API and the
 * event stream, a token prompt when the API asks for one, and a polite live region announcing new
 * snapshots and alerts. No build step: preact + htm are served from node_modules.
 */
import { html, render, useEffect, useRef, useState } from './lib/vendor.js';
import { getToken, setToken } from './lib/api.js';
import { clockTime, shortDigest } from './lib/format.js';
import { LiveStore } from './lib/store.js';
import { CardView } from './views/card.js';
import { ChatView } from './views/chat.js';
import { EndpointsView } from './views/endpoints.js';
import { ExplorerView } from './views/explorer.js';
import { InspectView } from './views/inspect.js';
import { RolloutView } from './views/rollout.js';
import { SearchView } from './views/search.js';
import { SessionsView } from './views/sessions.js';
import { SnapshotsView } from './views/snapshots.js';
import { SourcesView } from './views/sources.js';
import { TimelineView } from './views/timeline.js';
import { Explained, ViewHeader } from './views/common.js';
import { meaningOf } from './lib/vocabulary.js';

/** @typedef {{ view: string, params: URLSearchParams }} Route */

const VIEWS = [
  { id: 'endpoints', label: 'Endpoints' },
  { id: 'search', label: 'Search' },
  { id: 'sources', label: 'Sources' },
  { id: 'timeline', label: 'Timeline' },
  { id: 'snapshots', label: 'Snapshots' },
  { id: 'rollout', label: 'Rollout' },
  { id: 'sessions', label: 'Sessions' },
  { id: 'chat', label: 'Chat' },
  { id: 'card', label: 'Card' },
  { id: 'inspect', label: 'Inspect' },
  { id: 'explorer', label: 'Trace explorer' },
];

/** @returns {Route} */
function parseRoute() {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path = '', query = ''] = hash.split('?');
  const view = VIEWS.some((v) => v.id === path) ? path : 'endpoints';
  return { view, params: new URLSearchParams(query) };
}

function useRoute() {
  const [route, setRoute] = useState(parseRoute);
  useEffect(() => {
    const on = () => setRoute(parseRoute());
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}

/** @param {LiveStore} store */
function useStore(store) {
  const [, setTick] = useState(0);
  useEffect(() => store.subscribe(() => setTick((n) => n + 1)), [store]);
}

const CONNECTION_LABEL = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', unauthorized: 'Token required' };

/** @param {{ store: LiveStore }} props */
function App({ store }) {
  useStore(store);
  const route = useRoute();
  const first = useRef(true);
  const [tokenOpen, setTokenOpen] = useState(false);
  // At phone width the navigation collapses behind a Menu button (CSS shows it expanded on wide screens).
  const [navOpen, setNavOpen] = useState(false);
  useEffect(() => setNavOpen(false), [route.view, route.params.toString()]);

  useEffect(() => {
    if (!store.started) void store.start();
  }, []);

  // Move focus to the new view's heading (not on the first load), so screen readers announce it.
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    const h = document.getElementById('view-title');
    if (h) h.focus({ preventScroll: false });
  }, [route.view]);

  // The newest version with the current digest (a later version may repeat an earlier one's digest).
  const current = store.snapshots?.history.filter((h) => h.digest === store.snapshots?.current).at(-1);
  const counts = {
    endpoints: store.endpoints?.length,
    snapshots: store.snapshots?.history.length,
    sessions: store.sessions?.sessions.length,
    sources: store.sources?.length,
    timeline: undefined,
    // The share of new sessions on the candidate while a rollout is in progress.
    rollout: store.rollout?.active ? `${store.rollout.active.share} %` : undefined,
  };

  // A follower that could not read the leader's lists shows none (not "0 endpoints").
  const leaderless = store.leaderUnreachable !== '' && ((route.view === 'endpoints' && !store.endpoints) || (route.view === 'sources' && !store.sources));

  let view;
  switch (route.view) {
    case 'timeline':
      view = html`<${TimelineView} store=${store} />`;
      break;
    case 'sources':
      view = html`<${SourcesView} store=${store} focus=${route.params.get('source') ?? ''} />`;
      break;
    case 'snapshots':
      view = html`<${SnapshotsView} store=${store} />`;
      break;
    case 'rollout':
      view = html`<${RolloutView} store=${store} />`;
      break;
    case 'sessions':
      view = html`<${SessionsView} store=${store} />`;
      break;
    case 'chat':
      view = html`<${ChatView} store=${store} />`;
      break;
    case 'card':
      view = html`<${CardView} store=${store} url=${route.params.get('url') ?? ''} />`;
      break;
    case 'inspect':
      view = html`<${InspectView} url=${route.params.get('url') ?? ''} allowed=${store.whoami?.can.inspect !== false} />`;
      break;
    case 'explorer':
      view = html`<${ExplorerView} />`;
      break;
    case 'search':
      view = html`<${SearchView} text=${route.params.get('q') ?? ''} />`;
      break;
    default:
      view = html`<${EndpointsView} store=${store} />`;
  }

  return html`
    <button type="button" class="skip-link" onClick=${() => document.getElementById('main')?.focus()}>Skip to content</button>
    ${store.lostAt !== 0
      ? html`<div class="conn-banner" role="alert" id="connection-banner">
          <strong>Connection to the service lost at ${clockTime(store.lostAt).slice(0, 8)}.</strong>
          Everything below is as of ${clockTime(store.updatedAt || store.lostAt).slice(0, 8)} and may be out of date; ${store.connection === 'reconnecting' ? 'reconnecting…' : CONNECTION_LABEL[store.connection]}
        </div>`
      : null}
    <div class=${`shell${navOpen ? ' nav-open' : ''}${store.lostAt !== 0 ? ' data-stale' : ''}`}>
      <aside class="sidebar">
        <div class="brand">
          <span class="brand-mark" aria-hidden="true">A2A</span>
          <span><strong>a2a-discovery</strong><br /><span class="brand-sub">discovery dashboard</span></span>
          <button type="button" class="btn btn-small nav-toggle" id="nav-toggle" aria-expanded=${navOpen ? 'true' : 'false'} aria-controls="nav-views" onClick=${() => setNavOpen(!navOpen)}>Menu</button>
        </div>
        <nav aria-label="Views" id="nav-views">
          <ul>
            ${VIEWS.map(
              (v) => html`<li>
                <a href=${`#/${v.id}`} onClick=${() => setNavOpen(false)} aria-current=${route.view === v.id ? 'page' : undefined} id=${`nav-${v.id}`}>
                  <span>${v.label}</span>
                  ${/** @type {Record<string, number | string | undefined>} */ (counts)[v.id] !== undefined ? html`<span class="count">${/** @type {Record<string, number | string | undefined>} */ (counts)[v.id]}</span>` : null}
                </a>
              </li>`,
            )}
          </ul>
        </nav>
        <div class="side-status">
          <p><span class=${`dot dot-${store.connection}`} aria-hidden="true"></span> <span id="connection">${CONNECTION_LABEL[store.connection]}</span></p>
          <p class="muted small">${current ? html`Current <strong>v${current.version}</strong> <code>${shortDigest(current.digest)}</code>` : store.needsToken ? 'Snapshot not shown without a token' : 'No snapshot yet'}</p>
          ${store.replica
            ? html`<p class="small" id="replica-role">${store.replica.role === 'leader' ? html`<strong>Leader</strong> · epoch ${store.replica.epoch}` : html`<strong>Follower</strong> of <code>${store.replica.leader ?? 'no leader yet'}</code> · epoch ${store.replica.epoch}`}<br /><span class="muted">this replica: <code>${store.replica.id}</code></span></p>
                <p class="small replica-badges"><${Explained} tone=${store.replica.role === 'leader' ? 'o-good' : 'o-info'} text=${store.replica.role === 'leader' ? 'leader' : 'follower'} explain=${meaningOf('badge', store.replica.role === 'leader' ? 'leader' : 'follower') ?? ''} />${store.replica.role !== 'leader' && store.leaderUnreachable ? html` <${Explained} tone="o-failed" text="leader unreachable" explain=${meaningOf('badge', 'leader unreachable') ?? ''} />` : null}</p>`
            : null}
          ${store.whoami ? html`<p class="small" id="signed-in">${signedIn(store.whoami)}</p>` : null}
          <button type="button" class="btn btn-small btn-ghost" onClick=${() => setTokenOpen(!tokenOpen)} aria-expanded=${tokenOpen ? 'true' : 'false'}>API token</button>
        </div>
        <section class="live" aria-labelledby="live-h">
          <h2 id="live-h">Latest</h2>
          <ul id="live-region" aria-live="polite" aria-relevant="additions text">
            ${store.announcements.length === 0 ? html`<li class="muted small">Announcements of new snapshots and alerts appear here.</li>` : null}
            ${store.announcements.map((a) => html`<li key=${a.id} class=${`announce announce-${a.kind}`}><time class="announce-at" datetime=${new Date(a.at).toISOString()}>${clockTime(a.at).slice(0, 8)}</time> ${a.text}</li>`)}
          </ul>
        </section>
      </aside>
      <main id="main" tabindex="-1">
        ${store.needsToken || tokenOpen ? html`<${TokenForm} store=${store} onDone=${() => setTokenOpen(false)} required=${store.needsToken} />` : null}
        ${store.error ? html`<p class="error" role="alert">${store.error}</p>` : null}
        ${store.leaderUnreachable
          ? html`<p class="error" role="alert" id="leader-unreachable"><strong>The leader's lists cannot be shown.</strong> ${store.leaderUnreachable}${store.endpoints ? ` Endpoints, sources and activity below are as of ${clockTime(store.updatedAt).slice(0, 8)}.` : ''}</p>`
          : null}
        ${store.lostAt !== 0 ? html`<p class="as-of" id="as-of">Data as of ${clockTime(store.updatedAt || store.lostAt).slice(0, 8)} (not live)</p>` : null}
        ${store.needsToken ? html`<p class="muted" id="token-wait">The service's state is shown once it accepts your token: nothing below would be true without it.</p>` : leaderless ? html`<${ViewHeader} title=${VIEWS.find((v) => v.id === route.view)?.label ?? ''} />` : view}
      </main>
    </div>
  `;
}

/**
 * Who the API takes this page for: a person's name (or `sub`) and role, the admin token, or
 * nobody in particular (an open loopback service).
 * @param {import('./lib/types.js').WhoAmI} w
 */
function signedIn(w) {
  if (w.kind === 'person') return html`Signed in as <strong>${w.name ?? w.sub}</strong> (${w.role ?? 'no role'})`;
  if (w.kind === 'admin-token') return html`Signed in with the <strong>admin token</strong>`;
  return html`<span class="muted">Not signed in (open loopback service)</span>`;
}

/** @param {{ store: LiveStore, onDone: () => void, required: boolean }} props */
function TokenForm({ store, onDone, required }) {
  const [value, setValue] = useState(getToken());
  return html`<form class="panel token-form" aria-labelledby="token-h" onSubmit=${(/** @type {Event} */ ev) => {
    ev.preventDefault();
    setToken(value.trim());
    onDone();
    void store.start();
  }}>
    <h2 id="token-h">${required ? 'This service requires an API token' : 'API token'}</h2>
    <p class="small">The service's admin token, or your own sign-in token (an access token your identity provider issued for this service). It is sent as <code>Authorization: Bearer …</code> and kept in this tab’s session storage only; it never travels in a URL.</p>
    <div class="row">
      <label for="token-input">Bearer token</label>
      <input id="token-input" type="password" autocomplete="off" spellcheck="false" value=${value} onInput=${(/** @type {any} */ ev) => setValue(ev.currentTarget.value)} />
      <button type="submit" class="btn btn-primary">Save and connect</button>
      ${getToken() !== '' ? html`<button type="button" class="btn" onClick=${() => { setToken(''); setValue(''); onDone(); void store.start(); }}>Forget token</button>` : null}
    </div>
  </form>`;
}

const root = document.getElementById('app');
if (root) {
  root.textContent = '';
  render(html`<${App} store=${new LiveStore()} />`, root);
}
