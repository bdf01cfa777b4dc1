/**
 * The cards and the worst requests of test/registry/search-event-loop.test.ts (shared by the test
 * and its server process, registry-load-server.ts): 5,000 cards whose text is drawn (seeded) from
 * a vocabulary of 2,000 made-up words and 40 domains, so short prefixes expand to many words.
 */
import { seededRandom } from '../../packages/core/src/clock/index.js';
import { DEFAULT_REGISTRY_SETTINGS as S } from '../../packages/core/src/config/index.js';

export const N = 5_000;

const random = seededRandom(38);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'xe', 'zu', 'bra', 'cle', 'dro', 'fli', 'gra', 'ple', 'sto', 'tri'];
const words = Array.from({ length: 2_000 }, () => `${pick(syllables)}${pick(syllables)}${pick(syllables)}`);
const domains = ['billing', 'warranty', 'shipping', 'returns', 'weather', 'travel', 'legal', 'payroll', 'support', 'search', ...Array.from({ length: 30 }, (_, i) => `domain${i}`)];
const sentence = (n: number): string => Array.from({ length: n }, () => pick(words)).join(' ');

/** The text of card `i`: name, description, provider, three skills. */
export function cardText(i: number): Record<string, unknown> {
  const domain = domains[i % domains.length]!;
  return {
    name: `${domain} agent ${i}`,
    description: `Answers ${domain} questions: ${sentence(12)}.`,
    provider: { organization: `Org ${i % 500}` },
    skills: [1, 2, 3].map((n) => ({ id: `s${n}`, name: `${domain} ${pick(words)}`, description: sentence(8), tags: [domain, pick(words)] })),
  };
}

/** `maxQueryTerms` (32) distinct three-letter prefixes, the most common first: each expands to many words. */
export const PREFIXES = ['age', 'ans', 'que', 'org', 'dom', ...syllables.flatMap((a) => syllables.map((b) => `${a}${b}`.slice(0, 3)))].filter((t, i, all) => all.indexOf(t) === i).slice(0, S.maxQueryTerms).join(' ');

/** 256 one-letter terms (511 characters, under `maxTextLength`), `maxQueryTerms` distinct letters. */
export const ONE_LETTER_TERMS = Array.from({ length: 256 }, (_, i) => 'abcdefghijklmnopqrstuvwxyz0123456789'[i % S.maxQueryTerms]).join(' ');

/** `maxFacets` (16) facets at limit 1000, most of high cardinality (one value per entry). */
export const FACETS = ['identifier', 'url', 'displayName', 'description', 'version', 'updatedAt', 'verified.endpoint', 'verified.provenance.name', 'tags', 'verified.cardChangedAt', 'publisher', 'verified.provider', 'verified.source', 'verified.inputModes', 'type', 'verified.verdict']
  .slice(0, S.maxFacets)
  .map((field) => ({ field, limit: 1_000 }));
