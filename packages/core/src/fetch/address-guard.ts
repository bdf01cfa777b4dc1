/**
 * The connect-time SSRF guard (threats T1 and T3): a `lookup` function for undici's
 * `Agent({ connect: { lookup } })`. Name resolution and the address check happen in the same
 * call that hands the addresses to the socket, so there is no window in which DNS can answer
 * "public" to a check and "127.0.0.1" to the connection (DNS rebinding). If any address of an
 * answer is disallowed the whole lookup fails, so Happy Eyeballs cannot pick the bad one.
 *
 * Addresses are judged deny-by-default against the IANA special-purpose registries
 * (rules/special-purpose-addresses.ts): IPv4-compatible, NAT64, 6to4, Teredo, ULA, link-local,
 * documentation, benchmarking, multicast, ORCHID and the rest are refused unless `allowCidrs`
 * names them.
 *
 * IP-literal hosts never reach a lookup function (Node connects to them directly); the card
 * fetcher checks those itself before dispatching.
 *
 * @module
 */
import dns from 'node:dns';
import net from 'node:net';
import { DiscoveryError } from '../errors.js';
import type { ConnectionPolicy } from './host-policy.js';
import { specialPurposeBlock } from '../rules/special-purpose-addresses.js';

/** One address of a DNS answer. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to all its addresses. Rejections are passed on as network errors. */
export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

/**
 * The default resolver: `dns.lookup` with `all: true` (the system resolver, hosts file
 * included), addresses in the order the system returns them.
 */
const systemResolver: Resolver = async (hostname) => {
  const answers = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/** Inputs of {@link createGuardedLookup}. */
export interface GuardedLookupOptions {
  /** Judges every resolved address with {@link HostPolicy.isAddressAllowed}. */
  policy: ConnectionPolicy;
  /** DNS override (tests, custom resolvers). Default {@link systemResolver}. */
  resolve?: Resolver;
}

/**
 * Builds a `net`-compatible lookup function that resolves with the resolver and refuses the
 * connection when ANY returned address is disallowed by the policy. Supports both callback
 * shapes Node uses: `(err, address, family)` and, when called with `{ all: true }` (Node 20 with
 * `autoSelectFamily`), `(err, [{ address, family }])`.
 *
 * Errors passed to the callback: DiscoveryError `ERR_ADDRESS_BLOCKED` (stage `address`) for a
 * disallowed address; the resolver's own error (e.g. `ENOTFOUND`) otherwise.
 *
 * @example
 * const agent = new Agent({ connect: { lookup: createGuardedLookup({ policy }) } });
 */
export function createGuardedLookup(options: GuardedLookupOptions): net.LookupFunction {
  const { policy } = options;
  const resolve = options.resolve ?? systemResolver;
  return (hostname, lookupOptions, callback) => {
    const opts = (lookupOptions ?? {}) as dns.LookupOptions;
    guardedResolve(policy, resolve, hostname).then(
      (addresses) => {
        const family = opts.family === 4 || opts.family === 'IPv4' ? 4 : opts.family === 6 || opts.family === 'IPv6' ? 6 : 0;
        const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
        if (usable.length === 0) {
          callback(notFound(hostname, family), opts.all === true ? [] : '', undefined);
        } else if (opts.all === true) {
          callback(null, usable.map((a) => ({ address: a.address, family: a.family })));
        } else {
          const first = usable[0] as ResolvedAddress;
          callback(null, first.address, first.family);
        }
      },
      (err: unknown) => {
        callback(err as NodeJS.ErrnoException, opts.all === true ? [] : '', undefined);
      },
    );
  };
}

/**
 * Resolves `hostname` and checks every address.
 * @throws DiscoveryError `ERR_ADDRESS_BLOCKED` (stage `address`) if any address is disallowed.
 */
export async function guardedResolve(policy: ConnectionPolicy, resolve: Resolver, hostname: string): Promise<ResolvedAddress[]> {
  const literal = net.isIP(hostname);
  const answers: ResolvedAddress[] = literal !== 0 ? [{ address: hostname, family: literal === 6 ? 6 : 4 }] : await resolve(hostname);
  if (!Array.isArray(answers)) throw new DiscoveryError('ERR_INTERNAL', `resolver for ${hostname} returned ${typeof answers}, expected an array`, { stage: 'address' });
  const addresses: ResolvedAddress[] = [];
  const blocked: string[] = [];
  for (const a of answers) {
    const address = typeof a?.address === 'string' ? a.address : String(a?.address);
    const kind = net.isIP(address);
    if (kind === 0 || !policy.isAddressAllowed(address)) blocked.push(`${address} (${specialPurposeBlock(address) ?? 'not allowed'})`);
    else addresses.push({ address, family: kind === 6 ? 6 : 4 });
  }
  if (blocked.length > 0) {
    throw new DiscoveryError(
      'ERR_ADDRESS_BLOCKED',
      `${hostname} resolved to blocked address${blocked.length > 1 ? 'es' : ''} ${blocked.join(', ')} (only public unicast addresses and configured ranges may be contacted)`,
      { stage: 'address' },
    );
  }
  return addresses;
}

function notFound(hostname: string, family: number): NodeJS.ErrnoException {
  const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}${family === 0 ? '' : ` (IPv${family})`}`);
  err.code = 'ENOTFOUND';
  err.syscall = 'getaddrinfo';
  return err;
}
