// @ts-check
/**
 * The live state of the dashboard: the API's lists, kept current by the event stream. The story
 * (snapshots, alerts and resolutions, admissions, refusals, health and verdicts) is read from the
 * service's journal (`/api/journal`, paged back to the retention horizon) and then followed live;
 * cache chatter (hits, 304s, fetches, stale serving, backoff) is never kept as events, only as
 * per-endpoint counts (`/api/activity`, every page). The lists an event affects are re-read (throttled), so
 * the page never reloads and never drifts from what the service reports. When the stream drops,
 * `lostAt` says since when the data is old; on reconnecting everything is read again.
 */
import { ApiError, api, followStream, onUnauthorized } from './api.js';
import { describeEvent, isChatter, restarted, shortDigest } from './format.js';

/** @typedef {import('./types.js').DiscoveryEvent} DiscoveryEvent */
/** @typedef {import('./types.js').EndpointStatus} EndpointStatus */
/** @typedef {import('./types.js').SnapshotsJson} SnapshotsJson */
/** @typedef {import('./types.js').SessionsJson} SessionsJson */
/** @typedef {import('./types.js').ActivityJson} ActivityJson */
/** @typedef {import('./types.js').JournalPage} JournalPage */
/** @typedef {import('./types.js').SourceJson} SourceJson */
/** @typedef {import('./types.js').ReplicaJson} ReplicaJson */
/** @typedef {import('./types.js').RolloutJson} RolloutJson */
/** @typedef {import('./types.js').CallsJson} CallsJson */
/** @typedef {'endpoints' | 'snapshots' | 'sessions' | 'activity' | 'sources' | 'rollout' | 'calls'} Resource */
/** @typedef {{ id: number, text: string, kind: 'snapshot' | 'alert' | 'info', at: number }} Announcement */

/** Journal events the page keeps (the oldest go first). */
const MAX_EVENTS = 20_000;
/** Journal events read per page at start (the API's bound is 1,000). */
const PAGE = 1_000;
/** Endpoints per `/api/activity` page (the API's bound), and the pages read at most: 20,000 endpoints, twice the service's default bound. */
const ACTIVITY_PAGE = 1_000;
const MAX_ACTIVITY_PAGES = 20;

/**
 * The cache chatter of every endpoint: `/api/activity` page by page (`after` = the previous page's
 * `nextAfter`), merged into one answer, at most {@link MAX_ACTIVITY_PAGES} pages (then `nextAfter`
 * stays set). The counts, totals and window are the last page's. `query`: more parameters (the
 * timeline's rate series, `from=…&bucketMs=…`).
 * @param {string} [query]
 * @returns {Promise<ActivityJson>}
 */
export async function readActivity(query = '') {
  /** @type {ActivityJson['endpoints']} */
  const endpoints = [];
  /** @type {ActivityJson | undefined} */
  let page;
  for (let i = 0; i < MAX_ACTIVITY_PAGES && (page === undefined || page.nextAfter); i++) {
    const after = page?.nextAfter ? `&after=${encodeURIComponent(page.nextAfter)}` : '';
    page = /** @type {ActivityJson} */ (await api(`/api/activity?limit=${ACTIVITY_PAGE}${after}${query ? `&${query}` : ''}`));
    endpoints.push(...page.endpoints);
  }
  return { .../** @type {ActivityJson} */ (page), endpoints };
}

/**
 * One event's identity across the stream and the journal, and across replicas (whose `seq` numbers
 * are each their own process's): its seq, time and type.
 * @param {{ seq: number, at: number, type: string }} e
 */
function eventKey(e) {
  return `${e.seq}|${e.at}|${e.type}`;
}

/** Oldest first: by time, then by seq. @param {{ seq: number, at: number }} a @param {{ seq: number, at: number }} b */
function byTime(a, b) {
  return a.at - b.at || a.seq - b.seq;
}
const MAX_ANNOUNCEMENTS = 6;
/** A follower's stream carries none of the leader's events: its page reads the leader's lists this often. */
const FOLLOWER_POLL_MS = 5_000;

/**
 * What *Latest* says of a story event (a snapshot published or held, an alert, a resolution, a
 * restart or a takeover),
 * or undefined for any other event.
 * @param {DiscoveryEvent} e
 * @returns {{ text: string, kind: 'alert' | 'snapshot' | 'info' } | undefined}
 */
function storyLine(e) {
  switch (e.type) {
    case 'snapshot.published':
      return { text: `Snapshot v${e.version} published (${shortDigest(e.digest)}): ${(e.agents ?? []).join(', ') || 'no agents'}`, kind: 'snapshot' };
    case 'snapshot.held':
      return { text: `Snapshot v${e.version} held back: ${e.reason ?? ''}`, kind: 'alert' };
    case 'alert':
      return { text: `Alert ${describeEvent(e)}`, kind: 'alert' };
    case 'alert.resolved':
      return { text: `Resolved ${describeEvent(e)}`, kind: 'info' };
    case 'service.started':
      return { text: `${restarted(e) ? 'Restart' : 'Start'}: ${describeEvent(e)}`, kind: 'info' };
    case 'replica.leader':
      return { text: `${e.previousLeader ? 'Takeover' : 'Leader'}: ${describeEvent(e)}`, kind: 'info' };
    case 'config.reloaded':
      return { text: `Reload: ${describeEvent(e)}`, kind: 'info' };
    case 'config.refused':
      return { text: `Reload refused: ${describeEvent(e)}`, kind: 'alert' };
    default:
      // A rollout's decisions; an automatic rollback is said by its alert.
      if (e.type.startsWith('rollout.') && !(e.type === 'rollout.rolled-back' && (e.by ?? 'auto') === 'auto')) {
        const text = describeEvent(e);
        return { text: `${text.charAt(0).toUpperCase()}${text.slice(1)}`, kind: e.type === 'rollout.rolled-back' ? 'alert' : 'snapshot' };
      }
      return undefined;
  }
}

export class LiveStore {
  /** @type {EndpointStatus[] | undefined} */
  endpoints;
  /** @type {SnapshotsJson | undefined} */
  snapshots;
  /** @type {SessionsJson | undefined} */
  sessions;
  /** @type {DiscoveryEvent[]} the journal: every story event since the retention horizon, oldest first (bounded) */
  events = [];
  /** @type {DiscoveryEvent[]} alerts, their resolutions and held snapshots, oldest first */
  alerts = [];
  /** @type {ActivityJson | undefined} cache chatter per endpoint */
  activity;
  /** @type {SourceJson[] | undefined} what each source is doing (`/api/sources`) */
  sources;
  /** @type {RolloutJson | undefined} the staged rollout in progress, the last ones and the quarantined changes (`/api/rollout`) */
  rollout;
  /** @type {CallsJson | undefined} health from real calls, per agent (`/api/calls`) */
  calls;
  /** @type {ReplicaJson | null | undefined} several replicas: this one's role, epoch and leader (`/api/snapshots`) */
  replica;
  /** Why a follower could not show the leader's lists (its 503), or '' (they are the leader's). */
  leaderUnreachable = '';
  /** True once the journal was read back to the retention horizon (false: `MAX_EVENTS` cut it). */
  journalComplete = false;
  /** @type {Map<string, string>} base URL → the agent's local name (the latest known; stable once known) */
  localNames = new Map();
  /** Epoch ms the stream dropped (0 while live): the data shown is as of then. */
  lostAt = 0;
  /** @type {Announcement[]} what the live region says, newest last */
  announcements = [];
  /** @type {'connecting' | 'live' | 'reconnecting' | 'unauthorized'} */
  connection = 'connecting';
  needsToken = false;
  /**
   * Who the API takes this page for, and what they may do (`GET /api/whoami`); undefined until
   * read. The views hide or disable what the role cannot do.
   * @type {import('./types.js').WhoAmI | undefined}
   */
  whoami;
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
  /**
   * Where this page stands in the event stream (the last seq it received, or the stream position
   * its first journal page was read at), in the numbering of `#replica`; -1 before it knows.
   */
  #lastSeq = -1;
  /** The process whose numbering `#lastSeq` is in. */
  #replica = '';
  #wasLive = false;
  /** @type {Set<number>} the seqs in `events` */
  /** Identities of the events held (see {@link eventKey}). */
  #keys = new Set();
  #announceId = 0;
  /** @type {(() => void) | undefined} */
  #stopStream;
  #started = false;
  /** `replica|epoch` of each takeover announced (the event, or the role change the page saw). */
  #leaderships = new Set();
  /** @type {ReturnType<typeof setInterval> | undefined} */
  #followTimer;

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
      const [endpoints, snapshots, sessions, activity, sources, rollout, calls] = await Promise.all([
        this.#fromLeader(api('/api/endpoints')),
        api('/api/snapshots'),
        api('/api/sessions'),
        this.#fromLeader(readActivity()),
        this.#fromLeader(api('/api/sources')),
        // Optional: a page whose service answers neither still shows everything else.
        api('/api/rollout').catch(() => undefined),
        api('/api/calls').catch(() => undefined),
        this.#readJournal(),
        api('/api/whoami').then(
          (/** @type {import('./types.js').WhoAmI} */ w) => (this.whoami = w),
          () => (this.whoami = undefined),
        ),
      ]);
      if (endpoints) this.#setEndpoints(endpoints.endpoints);
      this.#setSnapshots(snapshots);
      this.sessions = sessions;
      if (activity) this.activity = activity;
      if (sources) this.sources = sources.sources;
      if (rollout) this.rollout = rollout;
      if (calls) this.calls = calls;
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
    // A follower's page re-reads the leader's lists (and sees a takeover) without events of the leader's.
    if (this.#followTimer === undefined) {
      this.#followTimer = setInterval(() => {
        if (this.replica?.role !== 'follower') return;
        for (const r of /** @type {Resource[]} */ (['snapshots', 'endpoints', 'sources', 'activity', 'rollout', 'calls'])) this.#schedule(r, 0);
      }, FOLLOWER_POLL_MS);
    }
    this.#stopStream = followStream({
      lastEventId: () => (this.#lastSeq >= 0 ? this.#lastSeq : undefined),
      replica: () => this.#replica || undefined,
      onState: (state) => {
        const resumed = state === 'live' && this.lostAt !== 0;
        if (state === 'live') {
          this.error = '';
          this.lostAt = 0;
          this.#wasLive = true;
        } else if (state === 'reconnecting' && this.lostAt === 0 && this.#wasLive) this.lostAt = Date.now();
        this.connection = state;
        // Back after a drop: read everything again (events missed meanwhile may be past the buffer).
        if (resumed) void this.resync();
        this.#changed();
      },
      onMessage: (type, data) => this.#message(type, data),
    });
  }

  stop() {
    this.#stopStream?.();
    clearInterval(this.#followTimer);
    this.#followTimer = undefined;
    for (const t of this.#refreshTimers.values()) clearTimeout(t);
    this.#refreshTimers.clear();
  }

  get started() {
    return this.#started;
  }

  /**
   * Reads the journal: newest page first, then older pages down to the retention horizon (or
   * until the page holds `MAX_EVENTS`), stopping at events already held. Events are merged by seq.
   */
  async #readJournal() {
    const first = this.events.length === 0;
    /** @type {DiscoveryEvent[]} */
    const read = [];
    let before = /** @type {number | null} */ (null);
    let complete = false;
    for (;;) {
      /** @type {JournalPage} */
      const page = await api(`/api/journal?limit=${PAGE}${before !== null ? `&before=${before}` : ''}`);
      // Journal positions order every replica's events; seq numbers are per process, so events
      // are told apart by their identity, and only this replica's seq can resume its stream.
      const fresh = page.events.filter((e) => !this.#keys.has(eventKey(e)));
      read.unshift(...fresh);
      // The page follows the stream from where it stood when this newest page was read: nothing
      // between the read and the stream is missed, and nothing before is announced as missed.
      if (first && before === null && this.#lastSeq < 0 && page.streamSeq !== undefined) {
        this.#lastSeq = page.streamSeq;
        this.#replica = page.replica ?? '';
      }
      before = page.nextBefore;
      if (before === null) complete = true;
      // Newest first: a page with nothing new means the rest is known already.
      if (before === null || fresh.length < page.events.length || read.length + this.events.length >= MAX_EVENTS) break;
    }
    if (first) this.journalComplete = complete;
    for (const e of read) this.#add(e, false);
    // A page opened late still shows what happened last: the newest story events of the journal.
    if (first) {
      for (const e of read.filter((x) => storyLine(x) !== undefined).slice(-MAX_ANNOUNCEMENTS)) {
        const line = /** @type {NonNullable<ReturnType<typeof storyLine>>} */ (storyLine(e));
        this.announce(line.text, line.kind, e.at);
      }
    }
    this.events.sort(byTime);
    this.alerts.sort(byTime);
  }

  /** Reads every list and the journal's newest events again (after a reconnect or a gap). */
  async resync(why = 'Reconnected: lists and history read again.') {
    try {
      await this.#readJournal();
    } catch {
      // the stream state says what is wrong
    }
    await Promise.all(/** @type {Resource[]} */ (['endpoints', 'snapshots', 'sessions', 'activity', 'sources', 'rollout', 'calls']).map((r) => this.refresh(r)));
    this.announce(why);
  }

  /**
   * A list a follower answers with the leader's: its value, or undefined when the follower says the
   * leader cannot be reached (503 `leaderUnreachable`; `leaderUnreachable` then says why).
   * @template T
   * @param {Promise<T>} read
   * @returns {Promise<T | undefined>}
   */
  async #fromLeader(read) {
    try {
      const value = await read;
      this.leaderUnreachable = '';
      return value;
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 503 || err.body?.leaderUnreachable !== true) throw err;
      this.leaderUnreachable = err.message;
      this.#changed();
      return undefined;
    }
  }

  /**
   * The snapshots and this replica's role; a role or leader that changed while the page was open
   * is announced (once: a takeover's `replica.leader` event may say it first).
   * @param {SnapshotsJson} s
   */
  #setSnapshots(s) {
    const before = this.replica;
    this.snapshots = s;
    const now = s.replica ?? null;
    this.replica = now;
    if (!before || !now || (before.role === now.role && before.leader === now.leader)) return;
    const key = `${now.leader ?? ''}|${now.epoch}`;
    if (this.#leaderships.has(key)) return;
    this.#leaderships.add(key);
    if (now.role === 'leader') this.announce(`Takeover: ${now.id} leads now (epoch ${now.epoch})${before.leader ? `, taking over from ${before.leader}` : ''}; this replica runs discovery itself.`);
    else this.announce(`${now.leader ?? 'Another replica'} leads now (epoch ${now.epoch}); this replica (${now.id}) follows it and shows its lists.`);
  }

  /** @param {EndpointStatus[]} list */
  #setEndpoints(list) {
    this.endpoints = list;
    for (const e of list) if (e.verdict?.localName) this.localNames.set(e.baseUrl, e.verdict.localName);
  }

  /** The agent's local name of an endpoint (its latest known), else the first name its sources gave. @param {string} baseUrl */
  nameOf(baseUrl) {
    return this.localNames.get(baseUrl) ?? this.endpoints?.find((e) => e.baseUrl === baseUrl)?.names[0] ?? '';
  }

  /** Re-reads a list now (after an action of the user's, e.g. a chat turn). @param {Resource} what */
  async refresh(what) {
    try {
      if (what === 'endpoints') {
        const read = await this.#fromLeader(api('/api/endpoints'));
        if (read) this.#setEndpoints(read.endpoints);
      } else if (what === 'snapshots') this.#setSnapshots(await api('/api/snapshots'));
      else if (what === 'activity') this.activity = (await this.#fromLeader(readActivity())) ?? this.activity;
      else if (what === 'sources') this.sources = (await this.#fromLeader(api('/api/sources')))?.sources ?? this.sources;
      else if (what === 'rollout') this.rollout = await api('/api/rollout');
      else if (what === 'calls') this.calls = await api('/api/calls');
      else this.sessions = await api('/api/sessions');
      this.updatedAt = Date.now();
      this.#changed();
    } catch {
      // the stream state or the token prompt says what is wrong
    }
  }

  /** @param {string} text @param {Announcement['kind']} kind */
  announce(text, kind = 'info', at = Date.now()) {
    this.announcements = [...this.announcements, { id: ++this.#announceId, text, kind, at }].slice(-MAX_ANNOUNCEMENTS);
    this.#changed();
  }

  /** @param {string} type @param {string} data */
  #message(type, data) {
    if (type === 'ping') return;
    if (type === 'hello') {
      /** @type {{ lastSeq?: number, replica?: string, resumedFrom?: string }} */
      let hello = {};
      try {
        hello = JSON.parse(data);
      } catch {
        // an older service: no position to take
      }
      const known = this.#lastSeq >= 0;
      if (typeof hello.lastSeq === 'number') this.#lastSeq = hello.lastSeq;
      this.#replica = hello.replica ?? '';
      // Another process numbers the events now (the service restarted, or another replica
      // answers): what happened meanwhile is read from the journal and the lists.
      if (known && hello.resumedFrom !== undefined) void this.resync('The service restarted or another replica answers now: lists and history read again.');
      return;
    }
    if (type === 'gap') {
      // Some events were lost while disconnected: the lists are re-read, the timeline says so.
      this.announce('Reconnected after a gap: some events were not received live; history and lists read again.');
      void this.resync();
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
    if (typeof e.seq !== 'number') return;
    // The stream and the journal overlap after a resync: one event, once.
    const key = eventKey(e);
    if (this.#keys.has(key)) return;
    if (live) {
      if (e.seq <= this.#lastSeq) return;
      this.#lastSeq = e.seq;
    }
    if (isChatter(e)) {
      // Counted per endpoint by the service; the page re-reads the counts, throttled. A cycle's
      // chatter also means the sources were polled (a catalog revalidated emits no event itself).
      if (live) {
        this.#schedule('activity', 2_000);
        this.#schedule('sources', 2_000);
        this.#schedule('endpoints');
      }
      return;
    }
    this.events.push(e);
    this.#keys.add(key);
    if (this.events.length > MAX_EVENTS) {
      for (const old of this.events.splice(0, this.events.length - MAX_EVENTS)) this.#keys.delete(eventKey(old));
      this.journalComplete = false;
    }
    if (e.type === 'match.verdict' && e.endpoint && e.localName) this.localNames.set(e.endpoint, e.localName);
    if (e.type === 'alert' || e.type === 'alert.resolved' || e.type === 'snapshot.held') {
      this.alerts.push(e);
      if (!live) this.alerts.sort(byTime);
    }
    if (!live) return;
    const line = storyLine(e);
    // A takeover is said once: by its event, or by the role change the page saw first.
    const leadership = e.type === 'replica.leader' ? `${e.replica ?? ''}|${e.epoch ?? 0}` : undefined;
    if (line && !(leadership !== undefined && this.#leaderships.has(leadership))) this.announce(line.text, line.kind, e.at);
    if (leadership !== undefined) this.#leaderships.add(leadership);
    // Sources raise and resolve their own alerts; admissions and snapshots follow their lists.
    this.#schedule('sources');
    // A rollout's decision, its automatic rollback's alert, an operator's decision: the rollout
    // view and the versions follow.
    if (e.type.startsWith('rollout.') || (e.type === 'alert' && e.kind === 'rollout-rolled-back') || (e.type === 'api.action' && e.action?.startsWith('rollout.'))) {
      this.#schedule('rollout', 0);
      this.#schedule('snapshots');
      this.#schedule('sessions');
    }
    switch (e.type) {
      case 'snapshot.published':
        this.#schedule('snapshots');
        this.#schedule('sessions');
        this.#schedule('endpoints');
        this.#schedule('calls');
        this.#schedule('rollout');
        break;
      case 'snapshot.held':
        this.#schedule('snapshots');
        break;
      case 'replica.leader':
        // The sidebar's role, and a new leader's lists.
        this.#schedule('snapshots', 0);
        this.#schedule('endpoints');
        this.#schedule('activity');
        break;
      case 'alert':
      case 'alert.resolved':
        break;
      default:
        this.#schedule('endpoints');
        // Call health moves with every turn; a health change (calls fail) or a new session re-reads it.
        this.#schedule('calls');
    }
    this.updatedAt = Date.now();
    this.#changed();
  }

  /** @param {Resource} what @param {number} [ms] */
  #schedule(what, ms = 200) {
    if (this.#refreshTimers.has(what)) return;
    this.#refreshTimers.set(
      what,
      setTimeout(() => {
        this.#refreshTimers.delete(what);
        void this.refresh(what);
      }, ms),
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
