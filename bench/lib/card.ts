/** The card every benchmark endpoint serves: a valid 0.3 card of about 1.2 KB (like the reference's 1,269-byte card). */
import { cardFor } from '../../test/helpers/cards.js';

export function benchCard(origin: string, id: string): Record<string, unknown> {
  const skill = (n: number) => ({
    id: `${id}-skill-${n}`,
    name: `${id} skill ${n}`,
    description: `Skill ${n} of agent ${id}: answers questions about invoices, refunds and payment schedules.`,
    tags: ['billing', 'finance', `s${n}`],
    examples: [`What is the status of invoice ${n}?`],
  });
  return cardFor({ origin }, id, {
    description: `The ${id} agent: a benchmark card padded to a realistic size with several skills and a provider.`,
    provider: { organization: 'Bench Org', url: 'https://bench.example.com' },
    skills: [skill(1), skill(2), skill(3), skill(4)],
  });
}
