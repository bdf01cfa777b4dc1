/**
 * The entries of an AI Catalog probe: each entry listed in the order the source walks them (past
 * the source's walk bound: not read), the version decision of every A2A card entry and why, the
 * Trust Manifest verdict of each chosen one, and the chosen cards probed (bounded, a few at a
 * time, one probe per endpoint, a pinned card's bytes compared with its pin).
 *
 * @module
 */
import type { SignatureOptions } from '../card/index.js';
import type { AiCatalogEntry, ManifestVerdict } from '../catalog/index.js';
import { A2A_CARD_MEDIA_TYPE, AI_CATALOG_MEDIA_TYPE, isSemanticVersion, judgeTrustManifest, selectVersions } from '../catalog/index.js';
import { Pacer } from '../catalog/paced.js';
import { CATALOG_DEFAULTS } from '../rules/defaults.js';
import type { AiCatalogDocumentReport, AiCatalogEntryReport } from './ai-catalog-report.js';
import { DEFAULT_PROBE_CONCURRENCY, DEFAULT_PROBE_ENTRIES } from './probe-catalog.js';
import type { ProbeReport } from './probe-report.js';
import { selectionOf } from './probe-report.js';

/** An entry in walk order, with what the caller decided about it before the cards are probed. */
export interface Walked {
  entry: AiCatalogEntry;
  report: AiCatalogEntryReport;
  /** `<catalog> <path>`: where the source and version selection name it. */
  where: string;
}

/** A chosen card entry, ready to probe. */
export interface CardWork {
  walked: Walked;
  pin?: string;
  probe: () => Promise<ProbeReport>;
}

/**
 * Adds an entry to the walk. Past `maxEntries` entries in all (the source's walk bound, or the
 * caller's smaller one) it is not listed: undefined is returned and `walked.omitted` counted.
 */
export function walk(e: AiCatalogEntry, doc: AiCatalogDocumentReport, walked: Walked[] & { omitted?: number }, maxEntries: number = CATALOG_DEFAULTS.maxEntries): Walked | undefined {
  if (walked.length >= maxEntries) {
    walked.omitted = (walked.omitted ?? 0) + 1;
    return undefined;
  }
  const where = `${doc.url} ${e.path}`;
  const kind = e.type === A2A_CARD_MEDIA_TYPE ? 'card' : e.type === AI_CATALOG_MEDIA_TYPE ? 'nested' : 'ignored';
  const report: AiCatalogEntryReport = {
    catalog: doc.url,
    path: e.path,
    depth: doc.depth,
    identifier: e.identifier,
    type: e.type,
    ...(e.url !== undefined && { url: e.url }),
    ...(e.data !== undefined && { inline: true }),
    ...(e.displayName !== undefined && { displayName: e.displayName }),
    ...(e.version !== undefined && { version: e.version }),
    ...(e.updatedAt !== undefined && { updatedAt: e.updatedAt }),
    verdict: kind === 'card' ? 'not-probed' : kind === 'nested' ? 'nested' : 'ignored',
    problems: [],
  };
  const w: Walked = { entry: e, report, where };
  walked.push(w);
  return w;
}

/** The sentence of a report's `truncated` for entries past the walk bound. */
export function omittedNote(omitted: number, maxEntries: number): string {
  return `${omitted} entr${omitted === 1 ? 'y is' : 'ies are'} not listed: at most ${maxEntries} entries are read in all (the catalogs list more)`;
}

/**
 * The version decision of every A2A card entry (the library's {@link selectVersions}, in walk
 * order); returns the chosen ones.
 */
async function decideVersions(walked: readonly Walked[], pacer: Pacer): Promise<Walked[]> {
  const cards = walked.filter((w) => w.entry.type === A2A_CARD_MEDIA_TYPE && w.report.skipped === undefined);
  const candidates = cards.map((w) => ({ identifier: w.entry.identifier, version: w.entry.version, updatedAtMs: w.entry.updatedAtMs, where: w.where, w }));
  await pacer.tick();
  const { chosen, problems } = selectVersions(candidates);
  await pacer.tick();
  const chosenBy = new Map(chosen.map((c) => [c.identifier, c.w] as const));
  // Indexed once, so the decision is linear in the entries (a catalog may list thousands).
  const groups = new Map<string, Walked[]>();
  const firstOfVersion = new Map<string, Walked>();
  for (const w of cards) {
    await pacer.tick();
    const group = groups.get(w.entry.identifier);
    if (group === undefined) groups.set(w.entry.identifier, [w]);
    else group.push(w);
    if (!firstOfVersion.has(versionKey(w))) firstOfVersion.set(versionKey(w), w);
  }
  const problemAt = new Map<string, (typeof problems)[number]>();
  for (const p of problems) if (!problemAt.has(p.path)) problemAt.set(p.path, p);
  for (const w of cards) {
    await pacer.tick();
    const group = groups.get(w.entry.identifier)!;
    const winner = chosenBy.get(w.entry.identifier);
    const duplicate = problemAt.get(w.where);
    if (duplicate !== undefined) {
      const firstOf = firstOfVersion.get(versionKey(w))!;
      w.report.selection = { decision: 'duplicate', reason: 'repeats an identifier and version listed earlier; identifier and version must be unique in a catalog, so it is skipped', instead: firstOf.where };
      if (!w.report.problems.some((p) => p.path === duplicate.path)) w.report.problems.push(duplicate);
      w.report.verdict = 'refused';
    } else if (winner === w) {
      const versions = group.filter((x) => !problemAt.has(x.where));
      w.report.selection = versions.length === 1 ? { decision: 'only', reason: 'the only version listed' } : { decision: 'chosen', reason: chosenReason(w, versions) };
    } else {
      w.report.selection = { decision: 'superseded', reason: `version ${w.entry.version ?? '(none)'} is not the newest; ${winner?.entry.version ?? 'another entry'} is proposed instead`, instead: winner?.where ?? '' };
      w.report.verdict = 'superseded';
    }
  }
  return chosen.map((c) => c.w);
}

/** An entry's identifier and version (an absent version apart from any given one). */
function versionKey(w: Walked): string {
  return JSON.stringify([w.entry.identifier, w.entry.version ?? null]);
}

/** Why the chosen version won, in the terms {@link selectVersions} uses. */
function chosenReason(w: Walked, versions: readonly Walked[]): string {
  const others = versions.filter((x) => x !== w).map((x) => x.entry.version ?? '(none)');
  const basis = versions.every((x) => isSemanticVersion(x.entry.version))
    ? 'the newest semantic version'
    : versions.every((x) => x.entry.updatedAtMs !== undefined)
      ? 'the latest updatedAt'
      : 'semantic versions above the others, then the latest updatedAt, then the first listed';
  return `${basis}, over ${others.join(', ')}`;
}

/** The entries {@link decideVersions} chooses, each with its Trust Manifest verdict (also shown on its report). */
export async function* judgeChosen(walked: readonly Walked[], signatures: SignatureOptions, now: number, pacer = new Pacer()): AsyncGenerator<{ w: Walked; verdict: ManifestVerdict }> {
  for (const w of await decideVersions(walked, pacer)) {
    await pacer.tick();
    const verdict = await judgeTrustManifest(w.entry, { signatures, now, catalogUrl: w.report.catalog });
    w.report.trust = trustOf(verdict);
    yield { w, verdict };
  }
}

function trustOf(v: ManifestVerdict): NonNullable<AiCatalogEntryReport['trust']> {
  switch (v.kind) {
    case 'pinned':
      return { verdict: 'pinned', sha256: v.pin.sha256, identity: v.pin.identity, kid: v.pin.kid };
    case 'refused':
      return { verdict: 'refused', reason: v.problem };
    case 'unverified':
      return { verdict: 'unverified', reason: v.note };
    default:
      return { verdict: 'none', ...(v.note !== undefined && { reason: v.note }) };
  }
}

/**
 * Probes the chosen cards: at most `maxEntries`, `concurrency` at a time, one probe per endpoint
 * (two entries naming one card share its report); a pinned card whose bytes differ is refused
 * at `signature`, as the card cache refuses it.
 */
export async function probeCards(work: readonly CardWork[], o: { maxEntries?: number; concurrency?: number; signal?: AbortSignal }): Promise<void> {
  const maxEntries = o.maxEntries ?? DEFAULT_PROBE_ENTRIES;
  for (const item of work.slice(maxEntries)) item.walked.report.skipped = `not probed: the probe reads the first ${maxEntries} cards of a catalog`;
  const queue = work.slice(0, maxEntries);
  const byEndpoint = new Map<string, Promise<ProbeReport>>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < queue.length) {
      const { walked, pin, probe } = queue[next++]!;
      const { report } = walked;
      if (o.signal?.aborted) {
        report.skipped = `not probed: ${o.signal.reason instanceof Error ? o.signal.reason.message : String(o.signal.reason ?? 'aborted')}`;
        continue;
      }
      const key = report.endpoint!;
      let pending = byEndpoint.get(key);
      if (pending === undefined) byEndpoint.set(key, (pending = probe()));
      const card = structuredClone(await pending);
      if (pin !== undefined && card.rawSha256 !== undefined) {
        report.trust!.matches = card.rawSha256 === pin;
        if (!report.trust!.matches && card.accepted) {
          Object.assign(card, { accepted: false, stage: 'signature', selection: selectionOf('signature'), problems: [{ path: '$', message: `SHA-256 ${card.rawSha256} differs from the ${pin} its publisher pinned in the Trust Manifest (${walked.where}.trustManifest); the card is refused` }] });
        }
      }
      report.report = card;
      report.verdict = card.accepted ? 'accepted' : 'refused';
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency ?? DEFAULT_PROBE_CONCURRENCY, queue.length)) }, worker));
}
