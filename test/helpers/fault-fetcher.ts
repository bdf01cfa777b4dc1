/**
 * A fault server and the guarded card fetcher admitting only its origin, started before a test
 * file's tests and closed after them: the set-up of the loop tests that drive a real cache.
 */
import { after, before } from 'node:test';
import type { CardFetcher } from '../../packages/core/src/fetch/index.js';
import { createCardFetcher, HostPolicy } from '../../packages/core/src/fetch/index.js';
import type { FaultServer } from './fault-server.js';
import { startFaultServer } from './fault-server.js';

export interface FaultFetcher {
  readonly fs: FaultServer;
  readonly fetcher: CardFetcher;
  readonly hostPolicy: HostPolicy;
}

/** Registers the file's `before` and `after`; read the fields inside tests (they are set by then). */
export function useFaultFetcher(): FaultFetcher {
  const f = {} as { fs: FaultServer; fetcher: CardFetcher; hostPolicy: HostPolicy };
  before(async () => {
    f.fs = await startFaultServer();
    f.hostPolicy = HostPolicy.from({ allow: [f.fs.origin], allowLoopback: true });
    f.fetcher = createCardFetcher({ policy: f.hostPolicy, totalTimeoutMs: 2_000 });
  });
  after(async () => {
    await f.fetcher?.close();
    await f.fs?.close();
  });
  return f;
}
