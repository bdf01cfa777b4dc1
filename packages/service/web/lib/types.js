// @ts-check
/**
 * JSDoc types of the API's JSON (see src/http/app.ts). Type-only: nothing is exported at run time.
 */

/**
 * @typedef {'hit' | 'revalidated' | 'changed' | 'unchanged' | 'stale' | 'invalid' | 'failed'} CardOutcome
 *
 * @typedef {{ path: string, message: string }} Problem
 *
 * @typedef {{ code: string, message: string, stage?: string, problems?: Problem[], status?: number, url?: string }} ErrorJson
 *
 * @typedef {object} EndpointCache
 * @property {string} [cardUrl] the URL that answered (the card URL, or the 0.2 path a legacy peer answered at)
 * @property {string} [etag]
 * @property {number} expiresAt monotonic ms on the server: not comparable with the browser's clock
 * @property {number} [expiresAtWall] epoch ms, when the API provides it
 * @property {number} [expiresInMs] when the API provides it
 * @property {number} failures
 * @property {boolean} stale
 * @property {boolean} usable
 * @property {CardOutcome} [lastOutcome]
 * @property {ErrorJson} [lastError]
 * @property {string} [rawSha256]
 * @property {string} [canonicalSha256]
 * @property {number} [fetchedAtWall]
 * @property {number} [validatedAtWall]
 * @property {string} [protocolVersion]
 *
 * @typedef {'refused' | 'gone' | 'pending' | 'removed' | 'unsuitable' | 'excluded' | 'held' | 'degraded' | 'selected'} EndpointVerdict
 *
 * @typedef {object} EndpointStatus
 * @property {{ verdict: EndpointVerdict, reason: string, cause?: string, since: number }} state  the one verdict to show, its reason, its cause (docs/vocabulary.md) and since when
 * @property {string} baseUrl
 * @property {string[]} sources
 * @property {string[]} names
 * @property {boolean} admitted
 * @property {{ code: string, reason: string }} [refusal]
 * @property {EndpointCache} [cache]
 * @property {{ code: string, message: string, failures: number }} [lastFailure]
 * @property {{ state: string, successes: number, failures: number, critical: boolean, usable?: boolean, since?: number, reason?: string, cause?: string }} [health]
 * @property {{ verdict: 'selected' | 'unsuitable' | 'excluded', localName?: string, reason?: string, cause?: string }} [verdict]
 * @property {Proposal[]} [proposals] each record a source proposed for this endpoint
 * @property {AccessJson} [access] from its card: the chosen interface (and tenant) and the card's security against the configured credentials
 * @property {'public' | 'extended'} [cardKind] which card matching and trees use: the public one, or the authenticated extended card
 * @property {string} [identity] the identity the extended card was fetched with (a label, never a secret)
 *
 * @typedef {object} ChosenInterfaceJson  the interface a client here calls (first in the card's order, spoken, admitted)
 * @property {number} index
 * @property {string} url
 * @property {string} binding
 * @property {string} protocolVersion
 * @property {string} [tenant]
 * @property {'adk-0.3' | 'a2a-1.x'} client
 *
 * @typedef {object} AccessJson  card text inside (scheme names, descriptions): shown as text only; never a credential
 * @property {ChosenInterfaceJson} [chosenInterface]
 * @property {{ status: 'none' | 'satisfied' | 'unsatisfiable', message: string, origin: string, satisfiedBy?: string[], requirements: string[][], schemes: { name: string, type: string, needs: string, presentable: boolean, description?: string }[] }} [security]
 *
 * @typedef {object} Proposal  one source's record of an endpoint; `metadata` is source text (an AI Catalog entry's is third-party), display only
 * @property {string} source  the source's id
 * @property {string} name  the name the record gives
 * @property {Record<string, string>} metadata  AI Catalog: `catalog`, `entry`, `identifier`, `version`, `displayName`, `description`, `tags` (comma-joined), `pinnedSha256`
 *
 * @typedef {object} CatalogDocumentJson  one AI Catalog document an AI Catalog source read in its last refresh
 * @property {string} url
 * @property {string} via  `root`, or the entry that nested it (`<parent URL> entries[3]`)
 * @property {number} depth
 * @property {string} outcome  the cache's outcome (`changed`, `revalidated`, `hit`, `stale`, `inline`, …) or `failed`
 * @property {string} [specVersion]
 * @property {string} [etag]
 * @property {string} [signature]  the signature check's verdict (`unsigned`, `verified`, …)
 * @property {number} entries
 * @property {number} cards
 * @property {number} nested
 * @property {number} ignored
 * @property {string} [error]
 *
 * @typedef {object} SourceJson  one source in `GET /api/sources`
 * @property {string} id
 * @property {string} kind  `static`, `well-known`, `registry`, `kubernetes`, `ai-catalog`
 * @property {boolean} ok  false when the last refresh failed (its records are then the last good list)
 * @property {boolean} synced  true after the first good list
 * @property {number | null} updatedAt  epoch ms of the last good list
 * @property {number} records
 * @property {{ code: string, message: string, url?: string, status?: number, problems?: Problem[] }} [error]
 * @property {Problem[]} problems  the first 50 of the last list's problems
 * @property {number} moreProblems  problems not listed
 * @property {CatalogDocumentJson[]} [catalogs]  AI Catalog sources: the first 50 documents read
 * @property {number} [moreCatalogs]
 *
 * @typedef {{ version: number, digest: string, createdAt: string, agents: string[] }} HistoryEntry
 * @typedef {{ version: number, digest: string, references: number, current: boolean }} RetainedEntry
 * @typedef {{ id: string, role: 'leader' | 'follower', epoch: number, leader: string | null }} ReplicaJson
 *
 * @typedef {{ replica?: ReplicaJson | null, current: string | null, held: string | null, history: HistoryEntry[], retained: RetainedEntry[] }} SnapshotsJson
 *
 * @typedef {object} SnapshotAgent
 * @property {string} localName
 * @property {string} description
 * @property {string[]} tags
 * @property {boolean} critical
 * @property {string} baseUrl
 * @property {string[]} sources
 * @property {string} protocolVersion
 * @property {string} canonicalSha256
 * @property {boolean} degraded
 * @property {boolean} stale
 * @property {Record<string, unknown>} card
 *
 * @typedef {{ accuracy: number, minAccuracy: number, passed: boolean, evaluated: number }} RoutingVerdict
 * @typedef {{ version: number, digest: string, createdAt: string, agents: SnapshotAgent[], routing?: RoutingVerdict | null }} SnapshotJson
 *
 * @typedef {object} AgentChange
 * @property {string} localName
 * @property {string[]} skillsAdded
 * @property {string[]} skillsRemoved
 * @property {string[]} skillsModified
 * @property {{ from: string[], to: string[] }} [endpointChanged]
 * @property {boolean} securityChanged
 * @property {{ from: string, to: string }} [versionChanged]
 * @property {boolean} textChanged
 * @property {'breaking' | 'compatible'} [impact] what the change breaks, when the service classifies it
 * @property {string[]} [reasons] why, in words (`skill "refunds" removed`)
 *
 * @typedef {{ localName: string, impact: 'breaking' | 'compatible', reasons: string[] }} AgentImpact
 * @typedef {{ from?: { version: number, digest: string }, to: { version: number, digest: string }, added: string[], removed: string[], changed: AgentChange[], breaking?: boolean, impacts?: AgentImpact[] }} SnapshotDiff
 *   `breaking` and `impacts` (every added, removed or changed agent's impact) when the service classifies changes
 *
 * @typedef {object} CallFiguresJson  figures of A2A calls (or turns): how many, how many failed, the latency of the recent ones
 * @property {number} calls
 * @property {number} errors
 * @property {number} errorRate  errors / calls (0..1; 0 without calls)
 * @property {Record<string, number>} byClass  failures by error class (`http_500`, `network`, `timeout`, …)
 * @property {number} [p50Ms]
 * @property {number} [p95Ms]
 *
 * @typedef {object} AgentCallHealthJson  one agent in `GET /api/calls`
 * @property {string} baseUrl
 * @property {string} agent  its local name
 * @property {number} consecutiveFailures  failed calls in a row since the last good one
 * @property {string} [lastFailure]  the last failure's message, while calls fail
 * @property {number} lastCallAt  epoch ms
 * @property {CallFiguresJson} all
 * @property {Record<string, CallFiguresJson>} byDigest
 * @property {Record<string, CallFiguresJson>} byInterface
 * @property {CallFiguresJson} checks  the active checks only
 *
 * @typedef {{ agents: AgentCallHealthJson[] }} CallsJson  `GET /api/calls`
 *
 * @typedef {{ localName: string, impact: 'breaking' | 'compatible', reasons: string[], version: string }} RolloutChangeJson
 * @typedef {{ at: number, action: string, by: string, reason: string, step: number, share: number }} RolloutDecisionJson
 * @typedef {'running' | 'held' | 'promoted' | 'rolled-back' | 'superseded' | 'withdrawn'} RolloutStatus
 *
 * @typedef {object} RolloutStateJson  one staged rollout
 * @property {string} id
 * @property {string} candidate  the candidate snapshot's digest
 * @property {number} candidateVersion
 * @property {string} baseline  the current snapshot's digest (the other side)
 * @property {RolloutChangeJson[]} changes  the staged agents, each with its impact and reasons
 * @property {number} step  0-based index into `policy.steps`
 * @property {number} share  percent of new sessions on the candidate
 * @property {number} startedAt  epoch ms
 * @property {number} stepStartedAt  epoch ms
 * @property {RolloutStatus} status
 * @property {number} [endedAt]
 * @property {RolloutDecisionJson[]} decisions  oldest first
 *
 * @typedef {object} RolloutPolicyJson
 * @property {'breaking' | 'any' | 'off'} trigger
 * @property {number[]} steps  shares of new sessions (percent); 100 promotes
 * @property {number} holdMs
 * @property {number} minTurns
 * @property {number} minSamples
 * @property {number} maxErrorRateIncrease
 * @property {number} maxLatencyRatio
 * @property {number} minLatencyIncreaseMs
 *
 * @typedef {{ candidate: Record<string, CallFiguresJson>, baseline: Record<string, CallFiguresJson>, stepTurns: number }} RolloutFiguresJson  per staged agent and `*` (every agent's turns)
 * @typedef {{ enabled: boolean, policy?: RolloutPolicyJson, active: RolloutStateJson | null, figures: RolloutFiguresJson | null, history: RolloutStateJson[], quarantined: { localName: string, version: string }[] }} RolloutJson  `GET /api/rollout`; `history` newest first
 *
 * @typedef {{ sessionId: string, digest: string, version: number, idleMs: number, owned?: boolean }} PinnedSession
 * @typedef {{ sessions: PinnedSession[], builtDigests: string[], retained: RetainedEntry[] }} SessionsJson
 *
 * @typedef {object} DiscoveryEvent
 * @property {number} seq
 * @property {number} at epoch ms
 * @property {string} type
 * @property {string} [endpoint]
 * @property {string} [url]
 * @property {boolean} [conditional]
 * @property {CardOutcome} [outcome]
 * @property {number} [status]
 * @property {number} [bytes]
 * @property {number} [durationMs]
 * @property {number} [failures]
 * @property {number} [retryInMs]
 * @property {string} [code]
 * @property {string} [stage]
 * @property {string} [reason]
 * @property {Problem[]} [problems]
 * @property {string} [kind]
 * @property {string} [message]
 * @property {string} [from]
 * @property {string} [to]
 * @property {string} [verdict]
 * @property {string} [localName]
 * @property {number} [version]
 * @property {string} [digest]
 * @property {string} [previousDigest]
 * @property {string[]} [agents]
 * @property {string[]} [sources]
 * @property {string} [source] the source of a `catalog.read`
 * @property {number} [entries] entries a `catalog.read` document lists
 * @property {Record<string, unknown>} [detail]
 * @property {string} [key] an alert's condition; its resolution carries the same key
 * @property {number} [raisedAt] epoch ms an alert was raised (on its resolution)
 * @property {string} [sessionId] the session of a `session.*` event
 * @property {number} [accuracy] a `routing.evaluated` figure (0..1)
 * @property {number} [minAccuracy] the routing gate's minimum (0..1)
 * @property {number} [evaluated] labelled cases a `routing.evaluated` counted
 * @property {boolean} [passed] the routing check reached its minimum
 * @property {boolean} [held] the routing gate held the snapshot back
 * @property {string} [replica] the process (`service.started`) or replica (`replica.leader`) it is about
 * @property {string} [previousReplica] the process a `service.started` followed (the one restarted)
 * @property {{ version: number, pins: number, alerts: number }} [restored] what a `service.started` restored
 * @property {number} [epoch] the fencing epoch a `replica.leader` leads under
 * @property {string} [previousLeader] the replica a `replica.leader` took over from
 * @property {number} [alerts] open alerts a `replica.leader` carried
 * @property {string} [action] what an `api.action` did (refresh, confirm, session.end, session.upgrade, inspect)
 * @property {{ kind: 'person' | 'admin-token' | 'anonymous', sub?: string, name?: string, role?: string }} [actor] who did an `api.action`
 * @property {'signal' | 'api' | 'watch'} [trigger] what asked for a `config.reloaded` or `config.refused`
 * @property {string} [sha256] the configuration file's SHA-256 (hex) a reload read
 * @property {string[]} [changed] the configuration keys a reload changed (or would have)
 * @property {string[]} [problems] why a `config.refused` refused (file:line:col path: message)
 * @property {string} [rollout] a `rollout.*` event's rollout id (its staged changes)
 * @property {string} [candidate] a `rollout.*` event's candidate snapshot digest
 * @property {string} [baseline] a `rollout.*` event's current snapshot digest (the other side)
 * @property {number} [step] a `rollout.*` event's step (0-based) after the decision
 * @property {number} [share] a `rollout.*` event's share of new sessions (percent) on the candidate after the decision
 * @property {string} [by] who took a `rollout.*` decision: `auto`, or the operator
 * @property {string} [traceId] the trace it was emitted in (when sampled)
 * @property {string} [spanId] the span it was emitted in
 *
 * @typedef {{ events: Array<DiscoveryEvent & { replica?: string, journalId?: number }>, nextBefore: number | null, replica?: string, streamSeq?: number }} JournalPage
 * @typedef {{ from: number, bucketMs: number, hits: number[], revalidated: number[], fetches: number[], failures: number[] }} ActivitySeries
 * @typedef {{ endpoint: string, counts: Record<string, number>, recent: Record<string, number>, lastAt: number, series?: ActivitySeries }} EndpointActivity
 * @typedef {{ since: number, windowMs: number, endpoints: EndpointActivity[], totals: Record<string, number>, nextAfter?: string | null, endpointCount?: number }} ActivityJson
 *
 * @typedef {object} CardJson
 * @property {string} baseUrl
 * @property {string} cardUrl
 * @property {string} body
 * @property {Problem[]} warnings
 * @property {ErrorJson | null} lastError
 * @property {Record<string, unknown>} card
 *
 * @typedef {{ read: boolean, refresh: boolean, inspect: boolean, chat: boolean, trace: boolean, confirm: boolean, othersSessions: boolean }} Abilities
 * @typedef {{ kind: 'person' | 'admin-token' | 'anonymous', sub?: string, name?: string | null, role: 'viewer' | 'operator' | 'admin' | null, can: Abilities, traceUrl?: string }} WhoAmI  `GET /api/whoami`
 * @typedef {{ author: string, text: string, error: string | null }} ChatEvent
 * @typedef {{ sessionId: string, sessionSecret?: string, digest: string, version: number | null, author: string | null, agents?: string[], reply: string, error: string | null, notices?: string[], events: ChatEvent[], traceId?: string | null, agent?: string, message?: string, agentStatus?: number }} ChatTurn
 *   `POST /api/chat`: 200 with the turn, or 502 with `error: 'agent-failed'` and the agent the turn called (`agent`), its error (`message`) and the HTTP status it answered (`agentStatus`), the session kept
 */

/**
 * Explorer (packages/core/src/explorer):
 *
 * @typedef {'healthy' | 'not-found' | 'unavailable' | 'unauthorized' | 'malformed' | 'insecure'} TraceCondition
 *
 * @typedef {object} TraceInputs
 * @property {TraceCondition} condition
 * @property {boolean} credentials
 * @property {number} maxAgeSeconds
 * @property {number | null} publishV2AtSeconds
 * @property {boolean} requireStreaming
 * @property {boolean} cardStreaming
 * @property {number} intervalSeconds
 * @property {number} rttMs
 * @property {number} attempts
 * @property {boolean} backoff
 * @property {boolean} staleOnError
 * @property {number | null} failFromSeconds
 * @property {number} maxStaleSeconds
 * @property {boolean} jitter
 * @property {number} seed
 * @property {string | null} calls
 * @property {number} enterAfter
 * @property {number} callLeaveAfter
 * @property {boolean} v2Breaking
 * @property {boolean} rollout
 * @property {'breaking' | 'any' | 'off'} rolloutTrigger
 * @property {string} rolloutSteps
 * @property {number} rolloutHoldSeconds
 * @property {number} rolloutMinTurns
 * @property {number} rolloutMinSamples
 * @property {number} rolloutMaxErrorRateIncrease
 * @property {string} rolloutCandidateCalls
 * @property {string} rolloutCurrentCalls
 * @property {number} rolloutSessions
 *
 * @typedef {object} TraceHealthStep
 * @property {number} attempt
 * @property {number} at
 * @property {string} [call]
 * @property {'ok' | 'failed' | 'none'} callOutcome
 * @property {string} [errorClass]
 * @property {string} [callMessage]
 * @property {{ failures: number, usable: boolean, cause?: string, calls?: { failures: number, message?: string } }} observation
 * @property {'pending' | 'healthy' | 'degraded' | 'removed'} state
 * @property {string} reason
 * @property {boolean} member
 * @property {{ from: string, to: string }} [transition]
 *
 * @typedef {object} TraceHealth
 * @property {{ enterAfter: number, leaveAfter: number, callLeaveAfter: number, leaveWhileUsable: boolean }} settings
 * @property {TraceHealthStep[]} steps
 * @property {string[]} lines
 *
 * @typedef {object} TraceRolloutStep
 * @property {number} step
 * @property {number} share
 * @property {number} from
 * @property {number} to
 * @property {number} sessions
 * @property {number} candidateSessions
 * @property {{ turns: number, errors: number }} candidate
 * @property {{ turns: number, errors: number }} current
 *
 * @typedef {object} TraceRollout
 * @property {string} agent
 * @property {{ from: string, to: string, impact: 'breaking' | 'compatible', reasons: string[] }} change
 * @property {boolean} staged
 * @property {string} [id]
 * @property {{ trigger: string, steps: number[], holdMs: number, minTurns: number, minSamples: number, maxErrorRateIncrease: number, maxLatencyRatio: number, minLatencyIncreaseMs: number }} policy
 * @property {string} status
 * @property {{ at: number, action: string, by: string, reason: string, step: number, share: number }[]} decisions
 * @property {TraceRolloutStep[]} steps
 * @property {{ candidate?: { calls: number, errors: number, errorRate: number, p95Ms?: number }, current?: { calls: number, errors: number, errorRate: number, p95Ms?: number } }} [figures]
 * @property {string} [alert]
 * @property {number} sessions
 * @property {number} candidateSessions
 * @property {{ sessionId: string, bucket: number, candidateAt: number[], landed?: 'candidate' | 'current' }[]} samples
 * @property {string} sentence
 *
 * @typedef {object} TraceAttempt
 * @property {number} index
 * @property {number} at
 * @property {number} endedAt
 * @property {'cache-hit' | 'fetch' | 'backoff'} action
 * @property {'no-card' | 'expired' | 'fresh' | 'retry' | 'backing-off'} trigger
 * @property {string} why
 * @property {number} [status]
 * @property {boolean} [conditional]
 * @property {string} [ifNoneMatch]
 * @property {number} [bytes]
 * @property {CardOutcome} [cacheOutcome]
 * @property {string} [cardVersion]
 * @property {string} serverVersion
 * @property {boolean} [stale]
 * @property {'accepted' | 'rejected'} outcome
 * @property {string} [stage]
 * @property {TimelineStage} [lane]
 * @property {string} [reason]
 * @property {string} [code]
 * @property {Problem[]} [problems]
 * @property {string} [note]
 * @property {string} [hiddenNewer]
 *
 * @typedef {object} TraceStats
 * @property {number} networkFetches
 * @property {number} cacheHits
 * @property {number} notModified
 * @property {number} bytesTransferred
 * @property {number} accepted
 * @property {number} rejected
 * @property {number} backoffSkips
 * @property {number} staleSelections
 *
 * @typedef {'lookup' | 'request' | 'validation' | 'store' | 'selection'} TimelineStage
 *
 * @typedef {{ seq: number, attempt: number, atMs: number, stage: TimelineStage, kind: string, message: string, detail?: Record<string, unknown> }} TraceEvent
 *
 * @typedef {object} TraceCacheState
 * @property {number} attempt
 * @property {number} at
 * @property {boolean} present
 * @property {string} [cardVersion]
 * @property {string} [etag]
 * @property {number} [expiresAt]
 * @property {boolean} stale
 * @property {boolean} usable
 * @property {number} failures
 * @property {number} [nextAttemptAt]
 * @property {CardOutcome} [lastOutcome]
 *
 * @typedef {object} TraceResult
 * @property {string} schema
 * @property {TraceInputs} inputs
 * @property {{ baseUrl: string, cardUrl: string, cardBytes: number, cardVersions: { v1: string, v2: string }, cards: { v1: string, v2: string }, limits: string[] }} model
 * @property {TraceAttempt[]} attempts
 * @property {TraceStats} stats
 * @property {TraceEvent[]} events
 * @property {TraceCacheState[]} cacheStates
 * @property {{ v2PublishedAt: number | null, v2FirstUsedAt: number | null, v2HiddenAttempts: number[], sentence: string }} freshness
 * @property {string} summary
 * @property {TraceHealth} [health]
 * @property {TraceRollout} [rollout]
 */

export {};
