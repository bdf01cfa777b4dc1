/**
 * Google ID tokens for Cloud Run / IAP peers. google-auth-library's own token traffic cannot run
 * here (it talks to Google or a metadata server), so the provider is driven by a fake token
 * source (`FakeGoogleIdTokens`, named a fake on purpose) on a manual clock; what is ours is
 * real: the audience per origin, the cache until shortly before `exp`, single flight, the 401 rule.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { IdTokenClient } from 'google-auth-library';
import { UnsecuredJWT } from 'jose';
import { createPeerCredentials, googleIdToken } from '../../packages/core/src/auth/index.js';
import type { GoogleIdTokenSource } from '../../packages/core/src/auth/index.js';
import { VirtualClock } from '../../packages/core/src/clock/index.js';

const WALL = Date.UTC(2026, 0, 1);

/** Checked by the compiler: google-auth-library's ID token provider is what the default source hands over. */
export const realProviderFits: (provider: IdTokenClient['idTokenProvider']) => GoogleIdTokenSource = (provider) => provider;

/** A fake of google-auth-library's ID token provider: unsigned JWTs with `aud` and `exp`, counted. */
class FakeGoogleIdTokens implements GoogleIdTokenSource {
  readonly requests: string[] = [];
  constructor(
    private readonly clock: VirtualClock,
    private readonly lifetimeS = 3600,
  ) {}
  async fetchIdToken(audience: string): Promise<string> {
    this.requests.push(audience);
    const now = Math.floor(this.clock.wallNow() / 1000);
    return new UnsecuredJWT({ aud: audience, n: this.requests.length }).setIssuedAt(now).setExpirationTime(now + this.lifetimeS).encode();
  }
}

describe('googleIdToken', () => {
  test('one token per audience (default: the origin), cached until 60 s before exp, one request for many callers', async () => {
    const clock = new VirtualClock({ wallStart: WALL });
    const source = new FakeGoogleIdTokens(clock);
    const credentials = googleIdToken({ origins: ['https://billing-abc-uc.a.run.app', 'https://iap.example.com'], source, clock });
    const all = await Promise.all(Array.from({ length: 100 }, () => credentials.headers('https://billing-abc-uc.a.run.app')));
    assert.equal(new Set(all.map((h) => h?.authorization)).size, 1);
    assert.deepEqual(source.requests, ['https://billing-abc-uc.a.run.app']);
    await credentials.headers('https://iap.example.com');
    assert.deepEqual(source.requests, ['https://billing-abc-uc.a.run.app', 'https://iap.example.com']);
    assert.equal(await credentials.headers('https://other.example.com'), undefined);

    await clock.advance(3539_000);
    await credentials.headers('https://billing-abc-uc.a.run.app');
    assert.equal(source.requests.length, 2, 'still valid 61 s before exp');
    await clock.advance(2_000);
    await Promise.all([credentials.headers('https://billing-abc-uc.a.run.app'), credentials.headers('https://billing-abc-uc.a.run.app')]);
    assert.equal(source.requests.length, 3, 'exactly one new request past the refresh point');

    // A 401: the token is dropped and a retry may help; the next call asks once more.
    assert.equal(await credentials.rejected('https://billing-abc-uc.a.run.app'), true);
    await credentials.headers('https://billing-abc-uc.a.run.app');
    assert.equal(source.requests.length, 4);
    assert.equal(credentials.identity('https://iap.example.com'), 'google id token for audience "https://iap.example.com"');
    assert.deepEqual(credentials.schemes('https://iap.example.com'), [{ type: 'openIdConnect' }, { type: 'http', scheme: 'bearer' }]);
    await credentials.close();
  });

  test('a configured audience (an IAP client id) for an entry of createPeerCredentials', async () => {
    const clock = new VirtualClock({ wallStart: WALL });
    const source = new FakeGoogleIdTokens(clock);
    const credentials = await createPeerCredentials([{ type: 'google-id-token', origin: 'https://iap.example.com', audience: '1234-abc.apps.googleusercontent.com' }], { googleSource: source, clock });
    assert.match((await credentials.headers('https://iap.example.com/a2a'))!['authorization']!, /^Bearer ey/);
    assert.deepEqual(source.requests, ['1234-abc.apps.googleusercontent.com']);
    await credentials.close();
  });

  test('a failing source is backed off, and its error names the audience, not the credentials', async () => {
    const clock = new VirtualClock({ wallStart: WALL });
    let calls = 0;
    const source: GoogleIdTokenSource = {
      fetchIdToken: async () => {
        calls++;
        throw Object.assign(new Error('private_key=-----BEGIN PRIVATE KEY----- leaked'), { code: 'ENOTFOUND' });
      },
    };
    const credentials = googleIdToken({ origins: ['https://a.example.com'], source, clock, random: () => 0.5 });
    await assert.rejects(credentials.headers('https://a.example.com'), (err: Error) => {
      assert.equal(err.message, 'google id token for audience "https://a.example.com" could not be obtained (ENOTFOUND)');
      assert.ok(!JSON.stringify(err).includes('PRIVATE'));
      return true;
    });
    await assert.rejects(credentials.headers('https://a.example.com'), /not retried for 1 s/);
    assert.equal(calls, 1);
    await clock.advance(1_000);
    await assert.rejects(credentials.headers('https://a.example.com'));
    assert.equal(calls, 2);
    await credentials.close();
  });
});
