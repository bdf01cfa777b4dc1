/**
 * Option checking shared by the clients that reach the network (the card fetcher, the A2A policy
 * fetch): every bad option is collected and reported at once, certificate verification cannot be
 * turned off, and a host policy is required.
 */
import { DiscoveryError } from '../errors.js';
import type { Problem } from '../errors.js';
import { VERSION } from '../version.js';
import type { HostPolicy } from './host-policy.js';

const DEFAULT_USER_AGENT = `a2a-discovery/${VERSION}`;

export class NetworkOptionCheck<O extends object> {
  readonly #component: string;
  readonly #opts: Partial<O>;
  readonly #problems: Problem[] = [];

  /** Throws at once when `NODE_TLS_REJECT_UNAUTHORIZED=0`; records a missing host policy. */
  constructor(component: string, options: O | undefined) {
    this.#component = component;
    this.#opts = (options ?? {}) as Partial<O>;
    if (process.env['NODE_TLS_REJECT_UNAUTHORIZED'] === '0') {
      throw new DiscoveryError('ERR_CONFIG_INVALID', `NODE_TLS_REJECT_UNAUTHORIZED=0 turns off certificate verification; the ${component} refuses to run with it`, {
        stage: 'config',
        problems: [{ path: 'env.NODE_TLS_REJECT_UNAUTHORIZED', message: 'must not be 0' }],
      });
    }
    const policy = (this.#opts as { policy?: Partial<HostPolicy> }).policy;
    if (typeof policy?.check !== 'function' || typeof policy.isAddressAllowed !== 'function') {
      this.#problems.push({ path: 'policy', message: 'a HostPolicy is required (HostPolicy.from({ allow: [...] }))' });
    }
  }

  /** A positive number option (an integer when asked), or its default. */
  positive(name: keyof O & string, fallback: number, integer = false): number {
    const value = this.#opts[name];
    if (value === undefined) return fallback;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
      this.#problems.push({ path: name, message: `must be a positive ${integer ? 'integer' : 'number'}, got ${String(value)}` });
      return fallback;
    }
    return value;
  }

  /** An optional function option. */
  fn(name: keyof O & string, shape: string): void {
    const value = this.#opts[name];
    if (value !== undefined && typeof value !== 'function') this.#problems.push({ path: name, message: `must be a function ${shape}` });
  }

  /** The optional `credentials` option: a function from an origin to extra headers, or a `PeerCredentials` object. */
  credentials(): void {
    const value = (this.#opts as { credentials?: unknown }).credentials;
    if (value === undefined || typeof value === 'function') return;
    if (typeof value === 'object' && value !== null && typeof (value as { headers?: unknown }).headers === 'function' && typeof (value as { rejected?: unknown }).rejected === 'function') return;
    this.#problems.push({ path: 'credentials', message: 'must be a function (origin) => headers or a PeerCredentials object' });
  }

  /** The optional DNS resolver option, under the name the component gives it. */
  resolver(name: keyof O & string): void {
    this.fn(name, '(hostname) => Promise<addresses>');
  }

  /** The User-Agent header: the option, or `a2a-discovery/<version>`. */
  userAgent(): string {
    const value = (this.#opts as { userAgent?: unknown }).userAgent ?? DEFAULT_USER_AGENT;
    if (typeof value !== 'string' || value === '') {
      this.#problems.push({ path: 'userAgent', message: 'must be a non-empty string' });
      return DEFAULT_USER_AGENT;
    }
    return value;
  }

  /** Throws `ERR_CONFIG_INVALID` listing every problem recorded. */
  done(): void {
    const first = this.#problems[0];
    if (first === undefined) return;
    throw new DiscoveryError('ERR_CONFIG_INVALID', `${this.#component}: ${this.#problems.length} invalid option(s); first: ${first.path}: ${first.message}`, {
      stage: 'config',
      path: first.path,
      problems: this.#problems,
    });
  }
}
