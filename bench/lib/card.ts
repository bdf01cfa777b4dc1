/** The card every benchmark endpoint serves: a valid 0.3 card of about 1.2 KB (like the reference's 1,269-byte card). */
import { createHash } from 'node:crypto';
import { cardFor } from '../../test/helpers/cards.js';

/**
 * A name of its own per endpoint: endpoints share ids across origins (`a0` on each), and names
 * within a few edits of each other on different origins are lookalikes (rules/lookalike.ts), which
 * a real fleet of distinct agents is not: 12 hex digits of a hash differ by ~10 edits.
 */
export function benchAgentName(origin: string, id: string): string {
  return `Agent ${createHash('sha256').update(`${origin} ${id}`).digest('hex').slice(0, 12)}`;
}

export function benchCard(origin: string, id: string): Record<string, unknown> {
  const skill = (n: number) => ({
    id: `${id}-skill-${n}`,
    name: `${id} skill ${n}`,
    description: `Skill ${n} of agent ${id}: answers questions about invoices, refunds and payment schedules.`,
    tags: ['billing', 'finance', `s${n}`],
    examples: [`What is the status of invoice ${n}?`],
  });
  return cardFor({ origin }, id, {
    name: benchAgentName(origin, id),
    description: `The ${id} agent: a benchmark card padded to a realistic size with several skills and a provider.`,
    provider: { organization: 'Bench Org', url: 'https://bench.example.com' },
    skills: [skill(1), skill(2), skill(3), skill(4)],
  });
}
