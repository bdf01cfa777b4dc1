/**
 * The probe report: what a client would decide about a card, stage by stage, for the card's
 * publisher (`a2a-discovery probe`, the dashboard's inspector). Built from the same checks the
 * discovery pipeline runs.
 */
import type { EndpointCause } from '../health/index.js';
import { causeOf, ENDPOINT_CAUSES } from '../health/index.js';
import type { CheckCardResult, ChosenInterface, DescribedScheme, SecurityRequirementsResult } from '../card/index.js';
import { effectiveModes } from '../card/index.js';
import type { Problem } from '../errors.js';

/**
 * Stages in the order a client runs them: the first one that stops the card, or `selected`.
 * `security` stops an accepted card (discovery admits and caches it) from being selected: its
 * security requirements cannot be met with the configured credentials.
 */
export type ProbeStage = 'source' | 'address' | 'fetch' | 'parse' | 'schema' | 'policy' | 'signature' | 'security' | 'selected';

/**
 * Whether the agent would be selected as far as the card decides (the configured needs are not
 * checked here), and why not: the one verdict the text's last line and `--json` both show.
 */
export interface ProbeSelection {
  selected: boolean;
  /** Why not (`unauthorized: needs oauth2 client credentials for …`, `refused at stage schema`); absent when selected. */
  reason?: string;
}

export interface ProbeSkill {
  id: string;
  name: string;
  tags: string[];
  inputModes: string[];
  outputModes: string[];
}

export interface ProbeHttp {
  status?: number;
  /** The address the card was fetched from (after the connect-time address check). */
  remoteAddress?: string;
  /** Headers of note for caching and content. */
  headers: Record<string, string>;
  maxAgeSeconds?: number;
  etag?: string;
  notModifiedSupported?: boolean;
  etagStable?: boolean;
  notes: string[];
}

export interface ProbeReport {
  source: string;
  /** The card's `name` once it parsed (card text: display only, and compared for lookalikes). */
  name?: string;
  /** Discovery would admit and cache the card. */
  accepted: boolean;
  stage: ProbeStage;
  /** Why it is refused (or would not be selected), in the vocabulary of docs/vocabulary.md, when the refusal names one. */
  cause?: EndpointCause;
  /** Derived from `stage` (see {@link selectionOf}): whether the agent would be selected, and why not. */
  selection: ProbeSelection;
  protocolVersion?: string;
  problems: Problem[];
  warnings: Problem[];
  skills: ProbeSkill[];
  /** `reason`: why a called URL is refused, or why an interface is not called; `binding` for interfaces. */
  urls: Array<{ path: string; url: string; role: string; called: boolean; binding?: string; allowed?: boolean; reason?: string }>;
  signature?: { status: string; ok: boolean; kid?: string; form?: string };
  hostsJudged: boolean;
  bytes?: number;
  rawSha256?: string;
  canonicalSha256?: string;
  http?: ProbeHttp;
  /** The interface a client here would call (first in the card's order, spoken, admitted), with its tenant. */
  chosenInterface?: ChosenInterface;
  /** The card's security schemes and requirements, and whether the configured credentials satisfy them. */
  security?: ProbeSecurity;
}

/**
 * A card's security, as probe, the inspector and the dashboard show it. Scheme names and
 * descriptions are card text: shown as text only. Never holds a credential.
 */
export interface ProbeSecurity {
  /** `none` (nothing required, or anonymous allowed), `satisfied`, `unsatisfiable` (the agent would be excluded). */
  status: SecurityRequirementsResult['status'];
  /** One sentence, e.g. `unauthorized: needs oauth2 client credentials for https://…`. */
  message: string;
  /** The origin whose credentials were judged (the chosen interface's). */
  origin: string;
  /** Whether any credentials were configured for the probe at all. */
  credentialsConfigured: boolean;
  satisfiedBy?: string[];
  /** The alternatives the card accepts, each the scheme names it combines (`[]`: anonymous). */
  requirements: string[][];
  schemes: DescribedScheme[];
}

/** What a report says about how a client would call the card's agent (see {@link reportFromCheck}). */
export interface ProbeAccess {
  chosenInterface?: ChosenInterface;
  security?: ProbeSecurity;
}

/**
 * Turns a card check into a report; `http` describes the fetch that brought the card, if any;
 * `access` the chosen interface and the card's security against the configured credentials.
 */
export function reportFromCheck(source: string, check: CheckCardResult, hostsJudged: boolean, http?: ProbeHttp, access: ProbeAccess = {}): ProbeReport {
  const card = check.card;
  const skills: ProbeSkill[] = (card?.skills ?? []).map((s) => ({
    id: s.id,
    name: s.name,
    tags: [...s.tags],
    inputModes: [...effectiveModes(s.inputModes, card!.defaultInputModes)],
    outputModes: [...effectiveModes(s.outputModes, card!.defaultOutputModes)],
  }));
  const stage: ProbeStage = !check.ok ? (check.stage ?? 'schema') : access.security?.status === 'unsatisfiable' ? 'security' : 'selected';
  const cause = !check.ok ? causeOf({ code: check.code ?? 'ERR_CARD_INVALID', stage }) : stage === 'security' ? 'credentials' : undefined;
  return {
    source,
    ...(card?.name !== undefined && { name: card.name }),
    accepted: check.ok,
    stage,
    ...(cause !== undefined && { cause }),
    selection: selectionOf(stage, access.security),
    ...(check.protocolVersion !== undefined && { protocolVersion: check.protocolVersion }),
    problems: [...check.problems],
    warnings: [...check.warnings],
    skills,
    urls: check.urls.map((u) => ({ ...u })),
    ...(check.signature && {
      signature: {
        status: check.signature.status,
        ok: check.signature.ok,
        ...(check.signature.kid !== undefined && { kid: check.signature.kid }),
        ...(check.signature.form !== undefined && { form: check.signature.form }),
      },
    }),
    hostsJudged,
    bytes: check.bytes,
    rawSha256: check.rawSha256,
    ...(check.canonicalSha256 !== undefined && { canonicalSha256: check.canonicalSha256 }),
    ...(http && { http }),
    ...(access.chosenInterface && { chosenInterface: { ...access.chosenInterface } }),
    ...(access.security && { security: access.security }),
  };
}

/** A report that stops before any content check: at `source`, `address` or `fetch`. */
export function refusedReport(source: string, stage: ProbeStage, problem: Problem, hostsJudged: boolean, http?: ProbeHttp, cause?: EndpointCause): ProbeReport {
  return { source, accepted: false, stage, ...(cause !== undefined && { cause }), selection: selectionOf(stage), problems: [problem], warnings: [], skills: [], urls: [], hostsJudged, ...(http && { http }) };
}

/** The selection a stage means: `selected`, the security message at `security`, else the refusing stage. */
export function selectionOf(stage: ProbeStage, security?: Pick<ProbeSecurity, 'message'>): ProbeSelection {
  if (stage === 'selected') return { selected: true };
  if (stage === 'security') return { selected: false, reason: security?.message ?? 'its security requirements cannot be met' };
  return { selected: false, reason: `refused at stage ${stage}` };
}

const STAGE_ORDER: ProbeStage[] = ['source', 'address', 'fetch', 'parse', 'schema', 'policy', 'signature'];

/**
 * The mark of each stage in a rendered report: `ok` before the stage that failed (every stage
 * when none did), `FAIL` at it, `--` after it.
 */
export function stageMarks<S extends string>(order: readonly S[], failed: S | undefined): (stage: S) => string {
  const failedAt = failed === undefined ? -1 : order.indexOf(failed);
  return (stage) => {
    const i = order.indexOf(stage);
    if (failedAt === -1 || i < failedAt) return 'ok  ';
    return i === failedAt ? 'FAIL' : '--  ';
  };
}

/** Human-readable, stage-by-stage text. */
export function renderProbe(r: ProbeReport): string {
  const lines: string[] = [];
  const mark = stageMarks(STAGE_ORDER, r.accepted ? undefined : r.stage);
  const row = (m: string, stage: string, text: string) => lines.push(`${m} ${stage.padEnd(10)} ${text}`);
  const problemsAt = (stage: ProbeStage) => {
    if (r.stage !== stage || r.accepted) return;
    for (const p of r.problems) lines.push(`       ${p.path}: ${p.message}`);
  };

  lines.push(`probe ${r.source}`);
  if (!r.accepted && (r.stage === 'source' || ((r.stage === 'address' || r.stage === 'fetch') && !r.http))) {
    row('FAIL', r.stage, '');
    problemsAt(r.stage);
    return finish();
  }
  if (r.http) {
    const h = r.http;
    row(mark('fetch'), 'fetch', h.status !== undefined ? `HTTP ${h.status}${h.remoteAddress ? ` from ${h.remoteAddress} (address allowed)` : ''}` : 'no response');
    problemsAt('address');
    problemsAt('fetch');
    if (h.status !== undefined) {
      row('    ', 'caching', [
        h.maxAgeSeconds !== undefined ? `max-age ${h.maxAgeSeconds}s` : 'no max-age (clients fall back to their default lifetime)',
        h.etag !== undefined ? `ETag ${h.etag}` : 'no ETag (clients cannot revalidate cheaply)',
      ].join('; '));
      if (h.notModifiedSupported !== undefined) {
        row('    ', '', h.notModifiedSupported ? 'a conditional request got 304 Not Modified' : 'a conditional request did NOT get 304');
      }
      if (h.etagStable !== undefined) row('    ', '', h.etagStable ? 'the ETag is stable across requests' : 'the ETag changed between two identical requests');
      for (const n of h.notes) row('    ', '', n);
    }
    if (r.stage === 'address' || r.stage === 'fetch') return finish();
  }
  row(mark('parse'), 'parse', r.bytes !== undefined ? `${r.bytes} bytes, sha256 ${r.rawSha256?.slice(0, 16)}…` : '');
  problemsAt('parse');
  if (r.stage === 'parse' && !r.accepted) return finish();
  row(mark('schema'), 'schema', r.protocolVersion ? `A2A ${r.protocolVersion} card${r.protocolVersion === '1.0' ? '' : ' (normalized to the 1.0 model)'}` : '');
  problemsAt('schema');
  const notes = notesByStage(r);
  notesAt(notes.schema);
  if (r.stage === 'schema' && !r.accepted) return finish();
  // A URL the card repeats (a 0.3 card's additionalInterfaces listing its main URL again, which
  // the schema stage notes "is kept once") is one line and one interface here; the JSON report
  // keeps every path.
  const urlLines = new Map<string, boolean>();
  for (const u of r.urls) {
    const verdict = !u.called
      ? u.role === 'interface'
        ? `not called: ${u.reason ?? 'not a binding this client speaks'}`
        : 'listed, never fetched'
      : u.allowed === false
        ? `REFUSED: ${u.reason}`
        : u.allowed
          ? 'allowed'
          : `${URL.canParse(u.url) ? new URL(u.url).protocol.slice(0, -1) : 'not a URL'}, host not judged`;
    const line = `       ${u.role.padEnd(13)} ${u.binding ? `${u.binding} ` : ''}${u.url}  (${verdict})`;
    if (!urlLines.has(line)) urlLines.set(line, u.called);
  }
  const called = [...urlLines.values()].filter(Boolean).length;
  row(mark('policy'), 'policy', `${called} interface${called === 1 ? '' : 's'}${r.hostsJudged ? '' : ' (hosts listed, not judged: pass --allow to judge them)'}`);
  lines.push(...urlLines.keys());
  notesAt(notes.policy);
  if (r.stage === 'policy' && !r.accepted) return finish();
  if (r.signature) {
    const detail = r.signature.kid
      ? ` (kid ${r.signature.kid}${r.signature.form ? `, ${r.signature.form}` : ''})`
      : r.signature.status === 'unverified'
        ? ' (signed by a key not in the trust store: accepted, not verified)'
        : '';
    row(mark('signature'), 'signature', `${r.signature.status}${detail}`);
    problemsAt('signature');
    notesAt(notes.signature);
  }
  if (r.skills.length > 0) {
    lines.push(`     skills`);
    for (const s of r.skills) {
      lines.push(`       ${s.id}  tags: ${s.tags.join(', ')}  in: ${s.inputModes.join(', ')}  out: ${s.outputModes.join(', ')}`);
    }
  }
  if (r.accepted || r.stage === 'signature') renderAccess(r, lines);
  if (r.canonicalSha256) lines.push(`     identity   canonical sha256 ${r.canonicalSha256}`);
  return finish();

  function notesAt(list: readonly Problem[]): void {
    for (const w of list) lines.push(`       note ${w.path}: ${w.message}`);
  }

  function finish(): string {
    const excluded = r.accepted && !r.selection.selected ? `; it would not be selected (${r.selection.reason})` : '';
    lines.push(r.accepted ? `ACCEPTED  discovery would admit and cache this card (the needs that select agents are not checked here)${excluded}` : `REFUSED   at stage ${r.stage}${r.cause === undefined ? '' : ` (${ENDPOINT_CAUSES[r.cause].label})`}`);
    return lines.join('\n');
  }
}

/** The chosen interface and the card's security schemes, under the card's stages. */
function renderAccess(r: ProbeReport, lines: string[]): void {
  const c = r.chosenInterface;
  lines.push(
    c
      ? `     interface  ${c.binding} ${c.url}  (A2A ${c.protocolVersion}, ${c.tenant !== undefined ? `tenant ${JSON.stringify(c.tenant)}` : 'no tenant'}, ${c.client === 'adk-0.3' ? "ADK's 0.3 client" : 'the 1.x client'})`
      : '     interface  none a client here calls',
  );
  const sec = r.security;
  if (sec === undefined) return;
  const mark = sec.status === 'unsatisfiable' ? 'FAIL' : 'ok  ';
  lines.push(`${mark} security   ${sec.message}${sec.credentialsConfigured ? '' : sec.status === 'unsatisfiable' ? ' (no credentials configured: pass --config with credentials:)' : ''}`);
  for (const s of sec.schemes) {
    lines.push(`       ${s.name}: ${s.needs} (${s.presentable ? 'presentable' : 'not presentable'})${s.description !== undefined ? `  card says: ${JSON.stringify(s.description)}` : ''}`);
  }
  if (sec.requirements.length > 0) {
    lines.push(`       accepts: ${sec.requirements.map((req) => (req.length === 0 ? 'anonymous' : req.join(' + '))).join(' | ')}`);
  }
}

/** Warnings grouped by the stage that raised them, so each is printed under its stage. */
function notesByStage(r: ProbeReport): { schema: Problem[]; policy: Problem[]; signature: Problem[] } {
  const interfacePaths = new Set(r.urls.filter((u) => u.role === 'interface').map((u) => u.path));
  const out = { schema: [] as Problem[], policy: [] as Problem[], signature: [] as Problem[] };
  for (const w of r.warnings) {
    if (/^signatures(\[|$)/.test(w.path)) out.signature.push(w);
    else if (interfacePaths.has(w.path) || /^no interface is one this client calls/.test(w.message)) out.policy.push(w);
    else out.schema.push(w);
  }
  return out;
}
