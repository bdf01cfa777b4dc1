/** Messages between bench/run.ts and the fault-server child (bench/lib/server-child.ts). */

export interface ServerLayout {
  /** Origins (127.0.0.1, one port each) with `perOrigin` endpoints each, ids `a0`, `a1`, ... */
  origins: number;
  perOrigin: number;
  /** One more origin with this many endpoints (ids `s0`, `s1`, ...), for the single-origin case. */
  soloEndpoints: number;
  cacheControl: string;
  /**
   * On each of the `origins`, this many more endpoints, ids `n0`, `n1`, ..., serving the same
   * cards (same size) with `noCacheControl` instead: for clients that read the real clock (undici's
   * cache), so that every use is a revalidation.
   */
  noCacheTwins?: number;
  noCacheControl?: string;
}

export interface ReadyMessage {
  type: 'ready';
  origins: string[];
  solo: string;
  /** Body bytes of one card (they differ by a few bytes between ids; this is endpoint a0's). */
  cardBytes: number;
  pid: number;
}

export interface StatsMessage {
  type: 'stats';
  /** Requests answered, all servers. */
  hits: number;
  /** TCP connections accepted, all servers. */
  connections: number;
  /** process.cpuUsage() of the server process, microseconds. */
  cpuUserUs: number;
  cpuSystemUs: number;
}

export type ToServer = { type: 'stats' } | { type: 'close' };
export type FromServer = ReadyMessage | StatsMessage;
