/**
 * Child process of admission-keys.test.ts (run with --expose-gc): a source of `KEYS_N` endpoints
 * lists them, then lists them again as new strings of the same text (a registry's page read
 * again) with one endpoint more, so the admission is resolved again. Holds the second admission's
 * keys and the first list's URLs, and prints one JSON line: the heap after GC with both held and
 * with the keys only. Freed is the first list's strings that are not the keys.
 */
import { HostPolicy } from '../../packages/core/src/fetch/index.js';
import { Membership } from '../../packages/core/src/loop/membership.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';
import type { EndpointRecord, Source } from '../../packages/core/src/sources/index.js';
import { heapAfterGc } from '../helpers/heap-child.js';

const N = Number(process.env.KEYS_N ?? 50_000);

// Built anew on each call: the same text, another string.
const url = (i: number) => `https://agents${i % 32}.example.com/tenants/t${i}/agents/agent-${i}/`;
const list = (n: number): EndpointRecord[] => Array.from({ length: n }, (_, i) => ({ name: `agent-${i}`, baseUrl: url(i), source: 'registry', metadata: {} }));
let records = list(N);
const source = { id: 'registry', kind: 'registry', current: () => ({ records, synced: true }) } as unknown as Source;
const members = new Membership({ sources: [source], hostPolicy: HostPolicy.from({ allow: ['https://*.example.com'] }), clock: new VirtualClock(), events: undefined, removalGraceMs: 60_000 });


await members.resolve();
const first = records.map((r) => r.baseUrl);
records = list(N + 1);
await members.resolve();
const keys = members.admitted.map((e) => e.baseUrl);
const held = new Set(keys);
const equal = keys.length === N + 1 && first.every((u) => held.has(u));
held.clear();
const both = await heapAfterGc();
// The first list's strings let go; the array stays (empty), its 8 bytes an endpoint counted as freed.
first.length = 0;
const keysOnly = await heapAfterGc();
process.stdout.write(`${JSON.stringify({ both, keysOnly, n: N, equal })}\n`);
