// @ts-check
/**
 * The live state of the dashboard: the API's lists, kept current by the event stream. Events are
 * appended as they arrive; the lists they affect are re-read (throttled) from the API, so the page
 * never reloads and never drifts from what the service reports.
 */
import { ApiError, api, followStream, onUnauthorized } from './api.js';
import { describeEvent, shortDigest } from './format.js';

/** @typedef {import('./types.js').DiscoveryEvent} DiscoveryEvent */
/** @typedef {import('./types.js').EndpointStatus} EndpointStatus */
/** @typedef {import('./types.js').SnapshotsJson} SnapshotsJson */
/** @typedef {import('./types.js').SessionsJson} SessionsJson */
/** @typedef {'endpoints' | 'snapshots' | 'sessions'} Resource */
/** @typedef {{ id: number, text: string, kind: 'snapshot' | 'alert' | 'info', at: number }} Announcement */

const MAX_EVENTS = 3_000;
const MAX_ANNOUNCEMENTS = 4;

export class LiveStore {
  /** @type {EndpointStatus[] | undefined} */
  endpoints;
  /** @type {SnapshotsJson | undefined} */
  snapshots;
  /** @type {SessionsJson | undefined} */
  sessions;
  /** @type {DiscoveryEvent[]} every event received, oldest first (bounded) */
  events = [];
  /** @type {DiscoveryEvent[]} alerts and held snapshots, oldest first */
  alerts = [];
  /** @type {Announcement[]} what the live region says, newest last */
  announcements = [];
  /** @type {'connecting' | 'live' | 'reconnecting' | 'unauthorized'} */
  connection = 'connecting';
  needsToken = false;
  /** @type {string} */
  error = '';
  /** Epoch ms of the last change from the server. */
  updatedAt = 0;

  /** @type {Set<() => void>} */
  #listeners = new Set();
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  #notifyTimer;
  /** @type {Map<Resource, ReturnType<typeof setTimeout>>} */
  #refreshTimers = new Map();
  #lastSeq = 0;
  #announceId = 0;
  /** @type {(() => void) | undefined} */
  #stopStream;
  #started = false;

  constructor() {
    onUnauthorized(() => {
      this.needsToken = true;
      this.connection = 'unauthorized';
      this.#changed();
    });
  }

  /** @param {() => void} listener @returns {() => void} */
  subscribe(listener) {
    this.#listeners.add(listener);
    return () => void this.#listeners.delete(listener);
  }

  /** Loads every list, then follows the stream. Calling it again (a new token) starts over. */
  async start() {
    this.#stopStream?.();
    this.#started = true;
    this.needsToken = false;
    this.error = '';
    try {
      const [endpoints, snapshots, sessions, events] = await Promise.all([
        api('/api/endpoints'),
        api('/api/snapshots'),
        api('/api/sessions'),
        api(`/api/events?since=${this.#lastSeq}`),
      ]);
      this.endpoints = endpoints.endpoints;
      this.snapshots = snapshots;
      this.sessions = sessions;
      for (const e of /** @type {DiscoveryEvent[]} */ (events.events)) this.#add(e, false);
      this.updatedAt = Date.now();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        this.needsToken = true;
        this.connection = 'unauthorized';
      } else {
        this.error = `Could not load the API: ${err instanceof Error ? err.message : String(err)}`;
      }
      this.#changed();
      if (this.needsToken) return;
    }
    this.#changed();
    this.#stopStream = followStream({
      lastEventId: () => this.#lastSeq,
      onState: (state) => {
        this.connection = state;
        if (state === 'live') this.error = '';
        this.#changed();
      },
      onMessage: (type, data) => this.#message(type, data),
    });
  }

  stop() {
    this.#stopStream?.();
    for (const t of this.#refreshTimers.values()) clearTimeout(t);
    this.#refreshTimers.clear();
  }

  get started() {
    return this.#started;
  }

  /** Re-reads a list now (after an action of the user's, e.g. a chat turn). @param {Resource} what */
  async refresh(what) {
    try {
      if (what === 'endpoints') this.endpoints = (await api('/api/endpoints')).endpoints;
      else if (what === 'snapshots') this.snapshots = await api('/api/snapshots');
      else this.sessions = await api('/api/sessions');
      this.updatedAt = Date.now();
      this.#changed();
    } catch {
      // the stream state or the token prompt says what is wrong
    }
  }

  /** @param {string} text @param {Announcement['kind']} kind */
  announce(text, kind = 'info') {
    this.announcements = [...this.announcements, { id: ++this.#announceId, text, kind, at: Date.now() }].slice(-MAX_ANNOUNCEMENTS);
    this.#changed();
  }

  /** @param {string} type @param {string} data */
  #message(type, data) {
    if (type === 'hello' || type === 'ping') return;
    if (type === 'gap') {
      // Some events were lost while disconnected: the lists are re-read, the timeline says so.
      this.announce('Reconnected after a gap: some events were not received; lists reloaded.');
      for (const r of /** @type {Resource[]} */ (['endpoints', 'snapshots', 'sessions'])) void this.refresh(r);
      return;
    }
    /** @type {DiscoveryEvent} */
    let event;
    try {
      event = JSON.parse(data);
    } catch {
      return;
    }
    this.#add(event, true);
  }

  /** @param {DiscoveryEvent} e @param {boolean} live */
  #add(e, live) {
    if (typeof e.seq !== 'number' || e.seq <= this.#lastSeq) return;
    this.#lastSeq = e.seq;
    this.events.push(e);
    if (this.events.length > MAX_EVENTS) this.events.splice(0, this.events.length - MAX_EVENTS);
    if (e.type === 'alert' || e.type === 'snapshot.held') this.alerts.push(e);
    if (!live) return;
    switch (e.type) {
      case 'snapshot.published':
        this.announce(`Snapshot v${e.version} published (${shortDigest(e.digest)}): ${(e.agents ?? []).join(', ') || 'no agents'}`, 'snapshot');
        this.#schedule('snapshots');
        this.#schedule('sessions');
        this.#schedule('endpoints');
        break;
      case 'snapshot.held':
        this.announce(`Snapshot v${e.version} held back: ${e.reason ?? ''}`, 'alert');
        this.#schedule('snapshots');
        break;
      case 'alert':
        this.announce(`Alert ${describeEvent(e)}`, 'alert');
        break;
      default:
        this.#schedule('endpoints');
    }
    this.updatedAt = Date.now();
    this.#changed();
  }

  /** @param {Resource} what */
  #schedule(what) {
    if (this.#refreshTimers.has(what)) return;
    this.#refreshTimers.set(
      what,
      setTimeout(() => {
        this.#refreshTimers.delete(what);
        void this.refresh(what);
      }, 200),
    );
  }

  #changed() {
    if (this.#notifyTimer !== undefined) return;
    this.#notifyTimer = setTimeout(() => {
      this.#notifyTimer = undefined;
      for (const l of this.#listeners) l();
    }, 40);
  }
}
