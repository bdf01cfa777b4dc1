/**
 * Matching capabilities, not names. A card satisfies a {@link Need} when one skill carries the
 * need's tag and its modes — its own, or the card's defaults when it lists none — cover the
 * needed ones, compared as media types (`text` equals `text/plain`). Tags are a vocabulary our
 * configuration owns: tags outside it are ignored and reported. Only hard constraints here;
 * ranking per request belongs to the router.
 */
import type { AgentCardModel } from '../card/index.js';
import { effectiveModes, modesCover } from '../card/index.js';

/** What the application needs: a reviewed tag plus the modes it will send and expects back. */
export interface Need {
  readonly tag: string;
  readonly inputModes?: readonly string[];
  readonly outputModes?: readonly string[];
}

/** One reviewed tag: its description is ours, and is what the router may read. */
export interface VocabularyEntry {
  readonly tag: string;
  readonly description: string;
}

/** The reviewed tag vocabulary, owned by configuration. */
export class TagVocabulary {
  readonly #entries: ReadonlyMap<string, VocabularyEntry>;

  constructor(entries: readonly VocabularyEntry[]) {
    this.#entries = new Map(entries.map((e) => [e.tag, e]));
  }

  has(tag: string): boolean {
    return this.#entries.has(tag);
  }

  get(tag: string): VocabularyEntry | undefined {
    return this.#entries.get(tag);
  }

  get tags(): string[] {
    return [...this.#entries.keys()];
  }
}

/** Capabilities a card must advertise (true = required). */
export interface RequiredCapabilities {
  readonly streaming?: boolean;
  readonly pushNotifications?: boolean;
}

export interface CardMatch {
  /** Tags of the needs the card satisfies, in need order. */
  readonly satisfied: readonly string[];
  /** Card tags outside the vocabulary (ignored). */
  readonly unknownTags: readonly string[];
  /** Why needs were not met, when none was. */
  readonly reasons: readonly string[];
}

const NONE: readonly string[] = Object.freeze([]);

/**
 * A match as the selection's memo keeps it (for as long as the card is held): one frozen object
 * for every card with the same result (a fleet's cards mostly satisfy the same needs), each list
 * at its exact length, and one shared empty list (a list grown by `push` reserves 17 slots,
 * ~180 B; a match held three such lists for every card of the fleet).
 */
function held(m: CardMatch): CardMatch {
  const key = JSON.stringify([m.satisfied, m.unknownTags, m.reasons]);
  let match = heldMatches.get(key);
  if (match === undefined) {
    const exact = (l: readonly string[]): readonly string[] => (l.length === 0 ? NONE : Object.freeze(l.slice()));
    match = Object.freeze({ satisfied: exact(m.satisfied), unknownTags: exact(m.unknownTags), reasons: exact(m.reasons) });
    // Bounded: cards with ever new results (their own unknown tags) start the set again.
    if (heldMatches.size >= HELD_MATCHES) heldMatches.clear();
    heldMatches.set(key, match);
  }
  return match;
}

/** The distinct match results shared, by their lists. */
const heldMatches = new Map<string, CardMatch>();
/** Distinct match results shared at most. */
const HELD_MATCHES = 4_096;

/**
 * Which needs a card satisfies.
 *
 * @example
 * matchCard(card, [{ tag: 'warranty', inputModes: ['text'], outputModes: ['text'] }], vocabulary).satisfied
 */
export function matchCard(
  card: AgentCardModel,
  needs: readonly Need[],
  vocabulary: TagVocabulary,
  required: RequiredCapabilities = {},
): CardMatch {
  const unknownTags = [...new Set(card.skills.flatMap((s) => s.tags).filter((t) => !vocabulary.has(t)))].sort();
  const reasons = missingCapabilities(card, required);
  if (reasons.length > 0) return held({ satisfied: NONE, unknownTags, reasons });

  const satisfied: string[] = [];
  for (const need of needs) {
    if (!vocabulary.has(need.tag)) continue;
    const skills = card.skills.filter((s) => s.tags.includes(need.tag));
    if (skills.length === 0) continue;
    const fits = skills.some((s) => modesServe(effectiveModes(s.inputModes, card.defaultInputModes), effectiveModes(s.outputModes, card.defaultOutputModes), need));
    if (fits) satisfied.push(need.tag);
    else reasons.push(`a skill is tagged ${need.tag}, but its modes do not cover ${describeModes(need)}`);
  }
  if (satisfied.length === 0 && reasons.length === 0) {
    const known = card.skills.flatMap((s) => s.tags).filter((t) => vocabulary.has(t));
    reasons.push(known.length > 0 ? `no need asks for ${[...new Set(known)].join(', ')}` : 'no skill carries a tag of the reviewed vocabulary');
  }
  return held({ satisfied, unknownTags, reasons });
}

/**
 * A card no skill of which carries a tag — `skills: []` (a framework agent without tools) or
 * skills with `tags: []` (BeeAI's default card) — that a static entry names: the entry's reviewed
 * tags stand in for the missing tags, judged on the modes of any of its skills (each skill's own,
 * or the card's defaults), or on the card's default modes when it lists no skill. Required
 * capabilities still apply. Discovered cards get no such pass.
 */
export function matchUntaggedCard(
  card: AgentCardModel,
  needs: readonly Need[],
  vocabulary: TagVocabulary,
  required: RequiredCapabilities = {},
): CardMatch {
  const what = card.skills.length === 0 ? 'the card lists no skills' : 'no skill of the card carries a tag';
  return matchOnModes(card, needs, vocabulary, required, what, 'the static entry names no needed tag');
}

/**
 * A card a static entry routes by its `routingTags`, whatever its skills are tagged (ADK's `llm`,
 * Mastra's `tool`): the entry's tags are the agent's, judged on the modes of any of its skills
 * (each skill's own, or the card's defaults), or on the card's default modes when it lists no
 * skill. The card's own tags are neither required nor reported as unknown. Required
 * capabilities still apply.
 *
 * @example
 * matchByRoutingTags(adkCard, [{ tag: 'returns' }], vocabulary).satisfied // ['returns']
 */
export function matchByRoutingTags(
  card: AgentCardModel,
  needs: readonly Need[],
  vocabulary: TagVocabulary,
  required: RequiredCapabilities = {},
): CardMatch {
  const what = `the card is routed by its static entry's routingTags${card.skills.length === 0 ? ' and lists no skills' : ''}`;
  return matchOnModes(card, needs, vocabulary, required, what, 'none of them is a needed tag of the reviewed vocabulary');
}

/** The entry's needs judged on the card's modes alone (its tags play no part); `what` opens each reason. */
function matchOnModes(card: AgentCardModel, needs: readonly Need[], vocabulary: TagVocabulary, required: RequiredCapabilities, what: string, noneNeeded: string): CardMatch {
  const reasons = missingCapabilities(card, required);
  if (reasons.length > 0) return held({ satisfied: NONE, unknownTags: NONE, reasons });
  const modes = card.skills.length === 0
    ? [{ input: card.defaultInputModes, output: card.defaultOutputModes }]
    : card.skills.map((s) => ({ input: effectiveModes(s.inputModes, card.defaultInputModes), output: effectiveModes(s.outputModes, card.defaultOutputModes) }));
  const satisfied: string[] = [];
  for (const need of needs) {
    if (!vocabulary.has(need.tag)) continue;
    if (modes.some((m) => modesServe(m.input, m.output, need))) satisfied.push(need.tag);
    else reasons.push(`${what} and ${card.skills.length === 0 ? 'its default modes do' : 'the modes of its skills do'} not cover ${describeModes(need)}`);
  }
  if (satisfied.length === 0 && reasons.length === 0) reasons.push(`${what} and ${noneNeeded}`);
  return held({ satisfied, unknownTags: NONE, reasons });
}

/** Why the card lacks a capability `required` asks for, one sentence each (empty: none lacking). */
function missingCapabilities(card: AgentCardModel, required: RequiredCapabilities): string[] {
  const reasons: string[] = [];
  if (required.streaming && card.capabilities.streaming !== true) reasons.push('the card does not advertise streaming, which is required');
  if (required.pushNotifications && card.capabilities.pushNotifications !== true) reasons.push('the card does not advertise push notifications, which are required');
  return reasons;
}

/** True when input and output modes cover what `need` will send and expects back. */
function modesServe(inputModes: readonly string[], outputModes: readonly string[], need: Need): boolean {
  return modesCover(inputModes, need.inputModes ?? []) && modesCover(outputModes, need.outputModes ?? []);
}

function describeModes(need: Need): string {
  return `in ${(need.inputModes ?? []).join(', ') || 'any'} / out ${(need.outputModes ?? []).join(', ') || 'any'}`;
}
