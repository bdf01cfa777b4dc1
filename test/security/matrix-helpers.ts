/**
 * Shared pieces of the security matrix (issue #12): a network watch built on undici's public
 * diagnostics channels (so a row can prove that no connection was made and no request was
 * sent), a resolver that refuses to hand a dialable non-loopback address to anything, and a
 * rejection helper.
 *
 * Every server the matrix starts listens on 127.0.0.1; nothing here sends a packet anywhere
 * else. Rows that name 10/8, 169.254/16, fd00::/8 and friends only ever see those addresses
 * judged and refused: {@link safeResolver} and {@link assertNeverDialable} fail the test *before*
 * the product could dial such an address if its policy ever started to allow it.
 */
import assert from 'node:assert/strict';
import diagnostics from 'node:diagnostics_channel';
import net from 'node:net';
import type { DiscoveryError, DiscoveryErrorCode } from '../../packages/core/src/errors.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import type { HostPolicy, ResolvedAddress, Resolver } from '../../packages/core/src/fetch/index.js';

/** Counts, from undici's diagnostics channels, what the clients under test did on the network. */
export interface NetworkWatch {
  /** `undici:client:beforeConnect`: a connection was started (DNS through the guarded lookup included). */
  readonly connectAttempts: number;
  /** `undici:client:connected`: a TCP (or TLS) connection was established. */
  readonly connected: number;
  /** `undici:client:sendHeaders`: a request was written to a socket. */
  readonly requestsSent: number;
  /** Hosts whose connection was established, for messages. */
  readonly connectedTo: readonly string[];
  stop(): void;
}

const CHANNELS = ['undici:client:beforeConnect', 'undici:client:connected', 'undici:client:sendHeaders'] as const;

/** Starts counting. Both undici copies in the process (Node's and the npm one) publish here. */
export function watchNetwork(): NetworkWatch {
  const counts = { connectAttempts: 0, connected: 0, requestsSent: 0 };
  const connectedTo: string[] = [];
  const handlers = [
    () => counts.connectAttempts++,
    (m: unknown) => {
      counts.connected++;
      const info = (m as { connectParams?: { hostname?: string; port?: string } }).connectParams;
      connectedTo.push(`${info?.hostname ?? '?'}:${info?.port ?? '?'}`);
    },
    () => counts.requestsSent++,
  ];
  CHANNELS.forEach((name, i) => diagnostics.subscribe(name, handlers[i] as (m: unknown) => void));
  return {
    get connectAttempts() {
      return counts.connectAttempts;
    },
    get connected() {
      return counts.connected;
    },
    get requestsSent() {
      return counts.requestsSent;
    },
    connectedTo,
    stop() {
      CHANNELS.forEach((name, i) => diagnostics.unsubscribe(name, handlers[i] as (m: unknown) => void));
    },
  };
}

function isLoopbackAddress(address: string): boolean {
  const a = address.toLowerCase();
  return a === '::1' || /^127\./.test(a) || /^::ffff:127\./.test(a);
}

/**
 * Fails the test unless the policy refuses `address` (or it is a loopback address, which only
 * ever reaches this machine). Called before any attempt, so a regression in the policy fails the
 * row instead of sending a packet to a private or metadata address.
 */
export function assertNeverDialable(policy: HostPolicy, address: string): void {
  const bare = address.replace(/^\[|\]$/g, '');
  if (net.isIP(bare) === 0 || isLoopbackAddress(bare)) return;
  assert.equal(policy.isAddressAllowed(bare), false, `safety: the policy would dial ${bare}; the row is aborted before any attempt`);
}

/** A resolver over a fixed table, with call counting; answers may change per call (rebinding). */
export interface TableResolver extends Resolver {
  readonly calls: readonly string[];
}

/**
 * `table[name]` is a list of answers, one per call (the last repeats). Every answer is checked
 * with {@link assertNeverDialable} against `policy` before it is returned. Unknown names are
 * ENOTFOUND: no query ever leaves the process.
 */
export function safeResolver(policy: HostPolicy, table: Readonly<Record<string, ReadonlyArray<readonly string[]>>>): TableResolver {
  const calls: string[] = [];
  const resolve = (async (hostname: string): Promise<ResolvedAddress[]> => {
    const answers = table[hostname];
    const n = calls.filter((c) => c === hostname).length;
    calls.push(hostname);
    if (answers === undefined || answers.length === 0) {
      const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname} (matrix resolver)`);
      err.code = 'ENOTFOUND';
      throw err;
    }
    const answer = answers[Math.min(n, answers.length - 1)] as readonly string[];
    // A mixed answer is safe only if the product refuses it whole: check each address it holds
    // that is not loopback, so a regression can never dial one.
    for (const address of answer) assertNeverDialable(policy, address);
    return answer.map((address) => ({ address, family: net.isIP(address) === 6 ? 6 : 4 }));
  }) as TableResolver;
  Object.defineProperty(resolve, 'calls', { get: () => calls });
  return resolve;
}

/** Awaits `promise`, asserts a DiscoveryError with `code`, and returns it. */
export async function rejection(promise: Promise<unknown>, code: DiscoveryErrorCode, what = ''): Promise<DiscoveryError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(isDiscoveryError(err), `${what}: expected a DiscoveryError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, `${what}: ${err.message}`);
    return err;
  }
  assert.fail(`${what}: expected ${code}, but it succeeded`);
}

/** Replaces `PORT`, `PORT2` and `ORIGIN` placeholders in a row's strings. */
export function fill(text: string, values: { port: number; port2: number }): string {
  return text.replaceAll('PORT2', String(values.port2)).replaceAll('PORT', String(values.port));
}
