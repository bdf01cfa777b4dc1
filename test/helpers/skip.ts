/**
 * Why a suite is skipped, decided in one place. A suite that needs what a developer's machine may
 * lack is skipped with the reason, unless a REQUIRE variable says it must run; then it runs and
 * fails, saying what is missing:
 *
 * | need | what | required by |
 * |---|---|---|
 * | `postgres` | PostgreSQL's binaries (test/helpers/postgres.ts) | `A2A_TEST_REQUIRE_PG=1` |
 * | `dns` | Knot DNS and Unbound (test/helpers/dns-server.ts) | `A2A_TEST_REQUIRE_DNS=1` |
 * | `previous-release` | the previous release, built from git (test/replicas/rolling-upgrade.test.ts) | `A2A_TEST_REQUIRE_PG=1` |
 *
 * `A2A_TEST_REQUIRE_ALL=1` requires every need: nothing skips (.ci/run sets it). The test command's
 * reporter (test/helpers/reporter.mjs) lists every skip and its reason in its summary at the end of the run.
 */
import type { TestContext } from 'node:test';

export type Need = 'postgres' | 'dns' | 'previous-release';

const VARIABLE: Record<Need, string> = {
  postgres: 'A2A_TEST_REQUIRE_PG',
  dns: 'A2A_TEST_REQUIRE_DNS',
  'previous-release': 'A2A_TEST_REQUIRE_PG',
};

/** True when a missing `need` fails the suites that need it instead of skipping them. */
export function required(need: Need): boolean {
  return process.env.A2A_TEST_REQUIRE_ALL === '1' || process.env[VARIABLE[need]] === '1';
}

/** The error of a required need that is missing: the reason, and the variable that made it required. */
export function missingError(need: Need, reason: string): Error {
  const by = process.env.A2A_TEST_REQUIRE_ALL === '1' ? 'A2A_TEST_REQUIRE_ALL=1' : `${VARIABLE[need]}=1`;
  return new Error(required(need) ? `${reason} (not skipped: ${by})` : reason);
}

/**
 * The `skip` option of a suite or test that needs `need`: `missing` (why it cannot run here, or
 * undefined when it can) unless `need` is required; then undefined, and the suite runs and fails.
 */
export function skipUnlessRequired(need: Need, missing: string | undefined): string | undefined {
  return missing !== undefined && !required(need) ? missing : undefined;
}

/** Inside a test: skips it with `reason`, or, when `need` is required, fails it with that reason. */
export function skipOrFail(t: TestContext, need: Need, reason: string): void {
  if (required(need)) throw missingError(need, reason);
  t.skip(reason);
}
