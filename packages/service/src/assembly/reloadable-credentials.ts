/**
 * The peers' credentials of a service started by `serve --config`, read again on each reload
 * (docs/operations.md "Reload"): every guarded connection consults this one object, which hands
 * each call to the credentials read last; a reload replaces them and closes the ones before.
 */
import type { PeerCredentials } from 'a2a-discovery';
import type { PresentableScheme } from 'a2a-discovery/internal';
import type { ResolvedSecrets, TokenRequestCount } from 'a2a-discovery/config';

/** A {@link PeerCredentials} whose target a reload replaces. */
export class ReloadableCredentials implements PeerCredentials {
  #target: PeerCredentials;
  readonly #counts: Array<ResolvedSecrets['tokenRequests']>;

  constructor(first: Pick<ResolvedSecrets, 'credentials' | 'tokenRequests'>) {
    this.#target = first.credentials;
    this.#counts = [first.tokenRequests];
  }

  headers(origin: string): Promise<Record<string, string> | undefined> {
    return this.#target.headers(origin);
  }

  identity(origin: string): string | undefined {
    return this.#target.identity(origin);
  }

  schemes(origin: string): readonly PresentableScheme[] {
    return this.#target.schemes(origin);
  }

  rejected(origin: string): Promise<boolean> {
    return this.#target.rejected(origin);
  }

  close(): Promise<void> {
    return this.#target.close();
  }

  /** Token requests of every credentials read so far, together (a counter never goes down). */
  readonly tokenRequests = (): readonly TokenRequestCount[] => {
    const sum = new Map<string, TokenRequestCount>();
    for (const c of this.#counts.flatMap((f) => f())) {
      const key = `${c.outcome} ${c.origin}`;
      sum.set(key, { ...c, count: (sum.get(key)?.count ?? 0) + c.count });
    }
    return [...sum.values()];
  };

  /** From now on, `next` answers; the credentials before are closed (their timers and connections). */
  replace(next: Pick<ResolvedSecrets, 'credentials' | 'tokenRequests'>): void {
    const before = this.#target;
    this.#target = next.credentials;
    this.#counts.push(next.tokenRequests);
    void before.close().catch(() => undefined);
  }
}
