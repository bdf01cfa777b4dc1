/**
 * What a card change breaks: one agent's change between two snapshots, classified as breaking
 * (an orchestrator that worked with the old card may fail with the new one) or compatible, with
 * one sentence per finding in words an operator uses. The snapshot diff, alerts and the CLI's
 * `diff` command all read it from here.
 *
 * @module
 */
import type { AgentCardModel, AgentSkillModel } from '../card/index.js';
import { canonicalJson, effectiveModes, modesCover, preferredInterface, reviewedInterface } from '../card/index.js';
import type { ChosenInterface } from '../card/index.js';
import type { TransportOptions } from '../sources/transport-options.js';
import { hasControl } from '../text.js';
import type { SnapshotAgent } from './snapshot.js';

/** What {@link classifyAgentChange} reads of an agent: its card, and when known its reviewed tags and transport options. */
export type ClassifiedAgent = Pick<SnapshotAgent, 'card'> & Partial<Pick<SnapshotAgent, 'tags' | 'transport' | 'localName'>>;

/** The verdict on one agent's change. */
export interface ChangeImpact {
  /** `breaking` when at least one finding is breaking, otherwise `compatible`. */
  readonly impact: 'breaking' | 'compatible';
  /**
   * One sentence per finding, breaking ones first (e.g. `skill "refunds" removed`). Empty when
   * nothing changed. At most {@link MAX_REASONS}: the last then says how many more were left out.
   */
  readonly reasons: readonly string[];
}

/** The most reasons one verdict lists (a card of thousands of skills stays readable). */
export const MAX_REASONS = 64;

/** One security requirement of a card or skill: the schemes it asks for together, with scopes. */
type SecurityRequirementModel = NonNullable<AgentCardModel['securityRequirements']>[number];

/** Breaking and compatible findings, collected in order. */
interface Findings {
  readonly breaking: string[];
  readonly compatible: string[];
}

/**
 * Classifies one agent's change between two snapshots (or two cards). Breaking: a skill removed;
 * a tag removed (from a skill or from the reviewed `tags`); an input or output mode removed (the
 * card's defaults or a skill's own); a security requirement added or changed, or a security
 * scheme's definition changed; the chosen interface's URL, binding or protocol version changed or
 * gone (the interface `preferredInterface` picks, of `transport.tenant`, after a static entry's
 * `interfaceUrl`); the tenant changed; streaming capability removed; the agent left the snapshot
 * (`after` undefined). Everything else is compatible: a skill, mode or tag added, names,
 * descriptions, examples, version, provider and other card details, a security requirement
 * removed, other transport options. An added agent (`before` undefined) is compatible
 * (`agent added`); no change at all is compatible with no reasons. Pure.
 *
 * @example classifyAgentChange({ card: v1 }, { card: v2 }) // { impact: 'breaking', reasons: ['skill "refunds" removed'] }
 */
export function classifyAgentChange(before: ClassifiedAgent | undefined, after: ClassifiedAgent | undefined): ChangeImpact {
  if (after === undefined) return before === undefined ? verdict({ breaking: [], compatible: [] }) : verdict({ breaking: ['agent left the snapshot'], compatible: [] });
  if (before === undefined) return verdict({ breaking: [], compatible: ['agent added'] });
  const f: Findings = { breaking: [], compatible: [] };
  compareSkills(before.card, after.card, f);
  compareModes('input', before.card.defaultInputModes, after.card.defaultInputModes, "the card's default modes", f);
  compareModes('output', before.card.defaultOutputModes, after.card.defaultOutputModes, "the card's default modes", f);
  if (before.tags !== undefined && after.tags !== undefined) compareTags(before.tags, after.tags, "the agent's reviewed tags", f);
  compareRequirements(before.card.securityRequirements ?? [], after.card.securityRequirements ?? [], '', f);
  compareSchemes(before.card.securitySchemes ?? {}, after.card.securitySchemes ?? {}, f);
  compareInterface(before, after, f);
  compareCapabilities(before.card, after.card, f);
  compareDetails(before.card, after.card, f);
  compareTransport(before.transport, after.transport, f);
  if (f.breaking.length + f.compatible.length === 0 && canonicalJson(before.card) !== canonicalJson(after.card)) f.compatible.push('other card details changed');
  return verdict(f);
}

function verdict(f: Findings): ChangeImpact {
  const all = [...f.breaking, ...f.compatible];
  const reasons = all.length <= MAX_REASONS ? all : [...all.slice(0, MAX_REASONS - 1), `and ${all.length - MAX_REASONS + 1} more changes`];
  return Object.freeze({ impact: f.breaking.length > 0 ? 'breaking' : 'compatible', reasons: Object.freeze(reasons) });
}

/** A card-supplied string, quoted and bounded for a message. */
function q(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

/** A card-supplied name (a scheme, a scope): as it is when it is a plain word, otherwise quoted. */
function word(text: string): string {
  return /^[\w.:/-]{1,80}$/.test(text) ? text : q(text);
}

/** A card-supplied URL: as it is when short and free of control characters and spaces, otherwise quoted. */
function link(url: string): string {
  return url.length <= 200 && !hasControl(url) && !/\s/.test(url) ? url : q(url);
}

function compareSkills(a: AgentCardModel, b: AgentCardModel, f: Findings): void {
  const after = new Map(b.skills.map((s) => [s.id, s]));
  const before = new Map(a.skills.map((s) => [s.id, s]));
  for (const s of a.skills) if (!after.has(s.id)) f.breaking.push(`skill ${q(s.id)} removed`);
  for (const s of b.skills) if (!before.has(s.id)) f.compatible.push(`skill ${q(s.id)} added`);
  for (const s of b.skills) {
    const old = before.get(s.id);
    if (old !== undefined) compareSkill(old, s, a, b, f);
  }
}

function compareSkill(old: AgentSkillModel, s: AgentSkillModel, a: AgentCardModel, b: AgentCardModel, f: Findings): void {
  const where = `skill ${q(s.id)}`;
  compareTags(old.tags, s.tags, where, f);
  // A skill that inherits the defaults on both sides changes with them (reported once, as the defaults).
  if (hasOwn(old.inputModes) || hasOwn(s.inputModes)) compareModes('input', effectiveModes(old.inputModes, a.defaultInputModes), effectiveModes(s.inputModes, b.defaultInputModes), where, f);
  if (hasOwn(old.outputModes) || hasOwn(s.outputModes)) compareModes('output', effectiveModes(old.outputModes, a.defaultOutputModes), effectiveModes(s.outputModes, b.defaultOutputModes), where, f);
  compareRequirements(old.securityRequirements ?? [], s.securityRequirements ?? [], ` on ${where}`, f);
  if (old.name !== s.name) f.compatible.push(`${where} name changed`);
  if (old.description !== s.description) f.compatible.push(`${where} description changed`);
  if (JSON.stringify(old.examples ?? []) !== JSON.stringify(s.examples ?? [])) f.compatible.push(`${where} examples changed`);
}

function hasOwn(modes: readonly string[] | undefined): boolean {
  return modes !== undefined && modes.length > 0;
}

function compareTags(a: readonly string[], b: readonly string[], where: string, f: Findings): void {
  const before = new Set(a);
  const after = new Set(b);
  for (const t of before) if (!after.has(t)) f.breaking.push(`tag ${q(t)} removed from ${where}`);
  for (const t of after) if (!before.has(t)) f.compatible.push(`tag ${q(t)} added to ${where}`);
}

/** A mode is removed when nothing the new list offers covers it (`text` and `text/plain` are one mode). */
function compareModes(kind: 'input' | 'output', a: readonly string[], b: readonly string[], where: string, f: Findings): void {
  for (const m of new Set(a)) if (!modesCover(b, [m])) f.breaking.push(`${kind} mode ${q(m)} removed from ${where}`);
  for (const m of new Set(b)) if (!modesCover(a, [m])) f.compatible.push(`${kind} mode ${q(m)} added to ${where}`);
}

/** `oauth2 (scopes read, write) and key`: the schemes a requirement asks for together. */
function requirementLabel(r: SecurityRequirementModel): string {
  return Object.keys(r.schemes)
    .sort()
    .map((name) => {
      const scopes = r.schemes[name]?.list ?? [];
      return scopes.length === 0 ? word(name) : `${word(name)} (scopes ${[...scopes].sort().map(word).join(', ')})`;
    })
    .join(' and ') || 'no authentication';
}

/** Added or changed requirements are breaking, removed ones compatible; a changed one keeps its scheme names. */
function compareRequirements(a: readonly SecurityRequirementModel[], b: readonly SecurityRequirementModel[], where: string, f: Findings): void {
  const namesOf = new Map([...a, ...b].map((r) => [requirementLabel(r), JSON.stringify(Object.keys(r.schemes).sort())]));
  const before = new Set(a.map(requirementLabel));
  const after = new Set(b.map(requirementLabel));
  const removed = [...before].filter((r) => !after.has(r));
  for (const r of after) {
    if (before.has(r)) continue;
    const was = removed.findIndex((old) => namesOf.get(old) === namesOf.get(r));
    if (was === -1) {
      f.breaking.push(`security requirement added${where}: ${r}`);
      continue;
    }
    f.breaking.push(`security requirement changed${where}: ${removed[was]} became ${r}`);
    removed.splice(was, 1);
  }
  for (const r of removed) f.compatible.push(`security requirement removed${where}: ${r}`);
}

function compareSchemes(a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>, f: Findings): void {
  for (const [name, scheme] of Object.entries(b)) {
    if (!(name in a)) f.compatible.push(`security scheme ${q(name)} added`);
    else if (canonicalJson(a[name]) !== canonicalJson(scheme)) f.breaking.push(`security scheme ${q(name)} changed`);
  }
  for (const name of Object.keys(a)) if (!(name in b)) f.compatible.push(`security scheme ${q(name)} removed`);
}

/** The interface the remote agent calls: exactly how `remoteAgentFor` picks it (host policy aside). */
function chosenInterface(agent: ClassifiedAgent): ChosenInterface | undefined {
  const tenant = agent.transport?.tenant === undefined ? {} : { tenant: agent.transport.tenant };
  const { card } = reviewedInterface(agent.card, { ...tenant, ...(agent.transport?.interfaceUrl !== undefined && { interfaceUrl: agent.transport.interfaceUrl }) });
  return preferredInterface(card, undefined, tenant);
}

function compareInterface(before: ClassifiedAgent, after: ClassifiedAgent, f: Findings): void {
  const a = chosenInterface(before);
  const b = chosenInterface(after);
  const tenantOf = (agent: ClassifiedAgent, chosen: ChosenInterface | undefined) => chosen?.tenant ?? agent.transport?.tenant;
  const [ta, tb] = [tenantOf(before, a), tenantOf(after, b)];
  if (ta !== tb) f.breaking.push(`tenant changed from ${ta === undefined ? 'none' : q(ta)} to ${tb === undefined ? 'none' : q(tb)}`);
  if (a !== undefined && b === undefined) {
    f.breaking.push(`interface ${a.binding} ${link(a.url)} gone: the card has no interface a client here calls`);
  } else if (a === undefined && b !== undefined) {
    f.compatible.push(`interface ${b.binding} ${link(b.url)} is now one a client here calls`);
  } else if (a !== undefined && b !== undefined) {
    if (a.url !== b.url) f.breaking.push(`interface URL changed from ${link(a.url)} to ${link(b.url)}`);
    if (a.binding !== b.binding) f.breaking.push(`interface binding changed from ${a.binding} to ${b.binding}`);
    if (a.protocolVersion !== b.protocolVersion) f.breaking.push(`interface protocol version changed from ${q(a.protocolVersion)} to ${q(b.protocolVersion)}`);
  }
  const others = (card: AgentCardModel, chosen: ChosenInterface | undefined) => JSON.stringify(card.supportedInterfaces.filter((_, i) => i !== chosen?.index));
  if (others(before.card, a) !== others(after.card, b)) f.compatible.push('other interfaces of the card changed');
}

function compareCapabilities(a: AgentCardModel, b: AgentCardModel, f: Findings): void {
  const [sa, sb] = [a.capabilities.streaming === true, b.capabilities.streaming === true];
  if (sa && !sb) f.breaking.push('streaming capability removed');
  if (!sa && sb) f.compatible.push('streaming capability added');
  if ((a.capabilities.pushNotifications === true) !== (b.capabilities.pushNotifications === true)) f.compatible.push('push notifications capability changed');
  if ((a.capabilities.extendedAgentCard === true) !== (b.capabilities.extendedAgentCard === true)) f.compatible.push('extended agent card capability changed');
  if (canonicalJson(a.capabilities.extensions ?? []) !== canonicalJson(b.capabilities.extensions ?? [])) f.compatible.push('extensions changed');
}

function compareDetails(a: AgentCardModel, b: AgentCardModel, f: Findings): void {
  if (a.name !== b.name) f.compatible.push('card name changed');
  if (a.description !== b.description) f.compatible.push('card description changed');
  if (a.version !== b.version) f.compatible.push(`version changed from ${q(a.version)} to ${q(b.version)}`);
  if (canonicalJson(a.provider ?? {}) !== canonicalJson(b.provider ?? {})) f.compatible.push('provider changed');
  if (a.documentationUrl !== b.documentationUrl) f.compatible.push('documentation URL changed');
  if (a.iconUrl !== b.iconUrl) f.compatible.push('icon URL changed');
  if (canonicalJson(a.signatures ?? []) !== canonicalJson(b.signatures ?? [])) f.compatible.push('signatures changed');
}

/** Tenant and interfaceUrl are judged with the interface; the other options change how calls are made, not whether they work. */
function compareTransport(a: TransportOptions | undefined, b: TransportOptions | undefined, f: Findings): void {
  for (const key of ['streaming', 'headers', 'timeoutMs'] as const) {
    if (canonicalJson(a?.[key] ?? null) !== canonicalJson(b?.[key] ?? null)) f.compatible.push(`transport option ${key} changed`);
  }
}
