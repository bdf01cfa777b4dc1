/**
 * The package as a user installs it: the built entry resolves by name on this Node, exports
 * what the README promises, and the built CLI runs. (`npm ci` builds dist/ through `prepare`;
 * after changing src/, `npm run build` refreshes it.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';

test('the package entry resolves by name and exports the public API', async () => {
  const pkg = (await import('a2a-discovery')) as Record<string, unknown>;
  for (const name of ['parseAgentCard', 'checkCard', 'toAdkCard', 'CardCache', 'HostPolicy', 'createCardFetcher', 'EventStream', 'VirtualClock', 'DiscoveryError']) {
    assert.equal(typeof pkg[name], 'function', name);
  }
  const { DiscoveryError, isDiscoveryError } = pkg as { DiscoveryError: new (c: string, m: string) => Error; isDiscoveryError: (e: unknown) => boolean };
  assert.equal(isDiscoveryError(new DiscoveryError('ERR_USAGE', 'x')), true);
});

test('the built CLI prints its version', () => {
  const out = execFileSync(process.execPath, [new URL('../../dist/cli/main.js', import.meta.url).pathname, '--version'], { encoding: 'utf8' });
  assert.match(out.trim(), /^\d+\.\d+\.\d+$/);
});
