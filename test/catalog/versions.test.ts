/**
 * Choosing among versions of an AI Catalog entry: what counts as a semantic version (SemVer
 * 2.0.0, as the `semver` package reads it) decides which entry is proposed as the newest.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { isSemanticVersion, selectVersions, type Versioned } from '../../packages/core/src/catalog/index.js';

const entry = (version: string, updatedAtMs?: number): Versioned => ({
  identifier: 'urn:air:acme.com:agent:finance',
  version,
  where: `entries[${version}]`,
  ...(updatedAtMs !== undefined && { updatedAtMs }),
});

const newest = (...entries: Versioned[]): string | undefined => selectVersions(entries).chosen[0]?.version;

describe('semantic versions', () => {
  test('leading zeros and empty pre-release identifiers are not SemVer 2.0.0', () => {
    for (const v of ['01.2.3', '1.0.0-alpha..1', '1.0.0-01']) assert.equal(isSemanticVersion(v), false, v);
    for (const v of ['1.2.3', 'v1.2.3', '1.0.0-alpha.1', '1.0.0-0', '2.0.0-rc.1+build.7']) assert.equal(isSemanticVersion(v), true, v);
  });

  test('a malformed version is ordered with the versions that are not semantic, below every semantic one', () => {
    // Read by hand, 01.2.3 was 1.2.3 and beat 1.0.0; 1.0.0-01 beat 1.0.0-0; 1.0.0-alpha..1 beat 0.9.0.
    assert.equal(newest(entry('1.0.0'), entry('01.2.3')), '1.0.0');
    assert.equal(newest(entry('1.0.0-01'), entry('1.0.0-0')), '1.0.0-0');
    assert.equal(newest(entry('1.0.0-alpha..1'), entry('0.9.0')), '0.9.0');
    // Among versions that are not semantic, the later updatedAt wins, as before.
    assert.equal(newest(entry('01.2.3', 1_000), entry('1.0.0-01', 2_000)), '1.0.0-01');
    // SemVer precedence among the others is unchanged.
    assert.equal(newest(entry('2.9.0'), entry('2.10.0'), entry('2.10.0-rc.1')), '2.10.0');
    assert.equal(newest(entry('1.0.0-alpha'), entry('1.0.0-1')), '1.0.0-alpha');
  });
});
