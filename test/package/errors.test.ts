/**
 * What the packages throw is a DiscoveryError with a stable code (packages/core/src/errors.ts):
 * callers switch on `code`, never on messages or classes. The plain errors that exist on purpose
 * (abort reasons, the lookup's errno shape) are created, never thrown, and errors.ts says why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { canonicalJson } from '../../packages/core/src/card/canonical.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { guardedResolve } from '../../packages/core/src/fetch/address-guard.js';
import { HostPolicy } from '../../packages/core/src/fetch/host-policy.js';

const root = new URL('../../packages/', import.meta.url).pathname;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return d.name === 'dist' || d.name === 'node_modules' ? [] : sources(path);
    return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [path] : [];
  });
}

test('no source of any package throws a plain Error, TypeError or RangeError', () => {
  const found: string[] = [];
  for (const file of sources(root)) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/\bthrow\s+(new\s+)?(Error|TypeError|RangeError)\s*\(/.test(line)) found.push(`${file.slice(root.length)}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(found, []);
});

test('a value with no JSON form is refused with ERR_CARD_INVALID', () => {
  assert.throws(
    () => canonicalJson(undefined),
    (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_CARD_INVALID' && err.failure === 'invalid',
  );
});

test('an injected resolver that breaks its contract is an internal error at the address stage', async () => {
  const policy = HostPolicy.from({ allow: ['https://agents.example.com'] });
  await assert.rejects(
    guardedResolve(policy, async () => 'not a list' as never, 'agents.example.com'),
    (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_INTERNAL' && err.stage === 'address',
  );
});
