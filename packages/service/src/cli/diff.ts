/**
 * `a2a-discovery diff <a> <b>` (docs/cli.md): what a change breaks. Two agent card files are
 * compared by the library's classification (`classifyAgentChange`); two snapshot digests are
 * compared by a running service (`GET /api/diff`). Exits 0 when every change is compatible, 3 when
 * anything is breaking, so a pipeline can stop on it. The text is one verdict per agent, its
 * reasons one a line (card text in them already quoted by the library), then a summary line.
 *
 * @module
 */
import { classifyAgentChange, DiscoveryError, parseAgentCard } from 'a2a-discovery';
import type { AgentCardModel, ChangeImpact, SnapshotDiff } from 'a2a-discovery';
import { cardSizeLimit, FileReadError, readBoundedFile } from 'a2a-discovery/config';
import { askService, refusal, serviceTarget } from './service-client.js';
import type { ServiceTarget } from './service-client.js';

import type { Io } from './flags.js';

/** The exit code when any change is breaking. */
const EXIT_BREAKING = 3;

/** A snapshot digest, or the first 12 or more of its hex digits. */
const DIGEST = /^[0-9a-f]{12,64}$/i;

/** The flags as commander parses them (commands/diff.ts). */
export interface DiffFlags {
  url?: string;
  tokenFile?: string;
  maxBytes?: number;
  json: boolean;
}

/** One agent's verdict: `breaking  returns_agent (changed)` and its reasons, indented. */
function verdictLines(label: string, v: ChangeImpact): string {
  const reasons = v.reasons.length === 0 ? ['    (no change)'] : v.reasons.map((r) => `    - ${r}`);
  return `${v.impact.padEnd(10)}  ${label}\n${reasons.join('\n')}\n`;
}

/** Two card files: the card's name (from the newer card, quoted: card text) and the verdict. */
function renderCardDiff(a: string, b: string, name: string, v: ChangeImpact): string {
  return `${a} -> ${b}\n${verdictLines(JSON.stringify(name), v)}${v.impact === 'breaking' ? 'breaking: see the reasons above\n' : 'compatible\n'}`;
}

/** Two snapshots: the versions, then every added, removed and changed agent's verdict. */
function renderSnapshotDiff(d: SnapshotDiff): string {
  const ref = (r: { version: number; digest: string } | undefined) => (r === undefined ? 'nothing' : `version ${r.version} (${r.digest.slice(0, 12)})`);
  const kind = new Map<string, string>([...d.added.map((n) => [n, 'added'] as const), ...d.removed.map((n) => [n, 'removed'] as const), ...d.changed.map((c) => [c.localName, 'changed'] as const)]);
  let out = `snapshot ${ref(d.from)} -> ${ref(d.to)}\n`;
  if (d.impacts.length === 0) return `${out}no agent changed\n`;
  for (const i of d.impacts) out += verdictLines(`${i.localName} (${kind.get(i.localName) ?? 'changed'})`, i);
  const n = d.impacts.length;
  out += `${n} agent${n === 1 ? '' : 's'} changed (${d.added.length} added, ${d.removed.length} removed, ${d.changed.length} changed); ${d.breaking.length > 0 ? `breaking: ${d.breaking.join(', ')}` : 'nothing breaking'}\n`;
  return out;
}

/**
 * Reads and parses one card file. The card need not pass the interface policy (nothing is called):
 * it must parse and validate.
 *
 * @throws DiscoveryError `ERR_USAGE` when the file cannot be read; `ERR_CARD_TOO_LARGE`, or the
 *   parser's code with every problem by JSON path, when it is not a usable agent card.
 */
async function readCard(file: string, maxBytes: number | undefined): Promise<AgentCardModel> {
  const size = cardSizeLimit(maxBytes);
  let bytes: Buffer;
  try {
    bytes = await readBoundedFile(file, size.maxBodyBytes);
  } catch (err) {
    if (err instanceof FileReadError && err.tooLarge) throw new DiscoveryError('ERR_CARD_TOO_LARGE', `${file}: ${err.message}, more than a card may have (--max-bytes)`, { stage: 'parse', cause: err });
    throw new DiscoveryError('ERR_USAGE', `cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const parsed = parseAgentCard(bytes, { allowLoopback: true, sourceUrl: file, ...size.check });
  if (parsed.card !== undefined) return parsed.card;
  const problems = parsed.problems.map((p) => `${p.path}: ${p.message}`).join('; ');
  throw new DiscoveryError(parsed.code ?? 'ERR_CARD_INVALID', `${file} is not a usable agent card: ${problems}`, { stage: parsed.stage ?? 'parse', problems: parsed.problems });
}

async function diffCards(a: string, b: string, flags: DiffFlags, io: Io): Promise<ChangeImpact> {
  const [before, after] = [await readCard(a, flags.maxBytes), await readCard(b, flags.maxBytes)];
  const verdict = classifyAgentChange({ card: before }, { card: after });
  io.out(flags.json ? `${JSON.stringify({ from: { file: a }, to: { file: b }, ...verdict }, null, 2)}\n` : renderCardDiff(a, b, after.name, verdict));
  return verdict;
}

/** The full digest a prefix names, among the service's history and current snapshot. */
async function fullDigest(t: ServiceTarget, given: string): Promise<string> {
  const digest = given.toLowerCase();
  if (digest.length === 64) return digest;
  const a = await askService(t, 'GET', '/api/snapshots');
  if (a.status !== 200) throw refusal(a);
  const body = a.body as { current?: string | null; history?: Array<{ digest?: unknown }> };
  const known = new Set([body.current, ...(body.history ?? []).map((h) => h.digest)].filter((d): d is string => typeof d === 'string'));
  const found = [...known].filter((d) => d.startsWith(digest));
  if (found.length === 1) return found[0]!;
  const why = found.length === 0 ? 'no snapshot in its history has a digest starting with' : `${found.length} snapshots have digests starting with`;
  throw new DiscoveryError('ERR_FETCH_STATUS', `${t.url}: ${why} ${digest}${found.length > 0 ? ' (give more digits)' : ''}`, { url: a.url, status: 404 });
}

async function diffDigests(a: string, b: string, flags: DiffFlags, io: Io): Promise<SnapshotDiff> {
  const t = await serviceTarget(flags);
  const [from, to] = [await fullDigest(t, a), await fullDigest(t, b)];
  const answer = await askService(t, 'GET', `/api/diff?from=${from}&to=${to}`);
  if (answer.status !== 200) throw refusal(answer);
  const diff = answer.body as SnapshotDiff;
  io.out(flags.json ? `${JSON.stringify(diff, null, 2)}\n` : renderSnapshotDiff(diff));
  return diff;
}

/**
 * Runs the command: two card files or two digests (mixing them is a usage error); prints the
 * verdict and resolves to the exit code (0 compatible, {@link EXIT_BREAKING} breaking).
 */
export async function runDiff(a: string, b: string, flags: DiffFlags, io: Io): Promise<number> {
  const digests = [a, b].filter((x) => DIGEST.test(x)).length;
  if (digests === 1) throw new DiscoveryError('ERR_USAGE', 'give two agent card files or two snapshot digests, not one of each');
  if (digests === 2) return (await diffDigests(a, b, flags, io)).breaking.length > 0 ? EXIT_BREAKING : 0;
  return (await diffCards(a, b, flags, io)).impact === 'breaking' ? EXIT_BREAKING : 0;
}
