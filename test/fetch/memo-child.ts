/**
 * Child process of memo-memory.test.ts (run with --expose-gc): endpoints churn through the host
 * policy's normalized-URL memo and the card fetcher's judged-URL memo, as discovery uses them (each
 * endpoint normalized, then its card fetched). No network: the fetch is aborted by the caller
 * after its URL was judged. Prints one JSON line: heap after GC after the warm-up and after the
 * churn, and the URLs churned between. With MEMO_MODE=given: `churned` URLs normalized already are
 * normalized again, and the heap is read with both lists held, then with the results only.
 */
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import { heapAfterGc } from '../helpers/heap-child.js';

const WARM = Number(process.env.MEMO_WARM ?? 20_000);
const CHURN = Number(process.env.MEMO_CHURN ?? 50_000);

const policy = HostPolicy.from({ allow: ['https://*.example.com'] });
const fetcher = createCardFetcher({ policy });
const aborted = AbortSignal.abort();

let next = 0;
async function churn(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const id = ++next;
    const endpoint = policy.normalizeEndpoint(`https://agents${id % 32}.example.com/tenants/t${id}/agents/agent-${id}/`);
    await fetcher.fetch(`${endpoint}.well-known/agent-card.json`, { signal: aborted }).catch(() => undefined);
  }
}

if (process.env.MEMO_MODE === 'given') {
  // URLs normalized already, given again (a resolver's key handed to the cache, the cache's to its
  // store): the heap freed when the given URLs are let go and only the normalized keys are held.
  // Freed is the given strings that are not the keys (a new string per key), and the array.
  const url = (i: number) => `https://agents${i % 32}.example.com/tenants/t${i}/agents/agent-${i}/`;
  const given = Array.from({ length: CHURN }, (_, i) => url(i));
  const normalized = given.map((u) => policy.normalizeEndpoint(u));
  const equal = normalized.every((n, i) => n === given[i]);
  const both = await heapAfterGc();
  given.length = 0;
  const keysOnly = await heapAfterGc();
  process.stdout.write(`${JSON.stringify({ heapWarm: both, heapAfter: keysOnly, churned: normalized.length, equal })}\n`);
  process.exit(0);
}

await churn(WARM);
const heapWarm = await heapAfterGc();
await churn(CHURN);
const heapAfter = await heapAfterGc();
await fetcher.close();
process.stdout.write(`${JSON.stringify({ heapWarm, heapAfter, churned: CHURN })}\n`);
