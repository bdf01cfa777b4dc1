/**
 * The URL the service listens on, known only once the server is bound (port 0 picks one), while
 * the HTTP app that needs it (federation's "is this registry me?") is built before: the app reads
 * it through `url()` (undefined until bound), the assembly sets it once with `bind()`.
 */
import { DiscoveryError } from 'a2a-discovery';

export class ListenAddress {
  #url: string | undefined;

  /** The service's URL, or undefined before it listens. */
  url(): string | undefined {
    return this.#url;
  }

  /** Sets the URL once; a second call is a programming error (`ERR_INTERNAL`). */
  bind(url: string): void {
    if (this.#url !== undefined) throw new DiscoveryError('ERR_INTERNAL', `the service's address is bound already (${this.#url})`);
    this.#url = url;
  }
}
