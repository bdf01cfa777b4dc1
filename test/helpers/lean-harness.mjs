// @ts-check
/**
 * Loaded by `npm test` (scripts/run-tests.mjs) into every test process, before node:test: makes
 * node's test harness track the async resources of each test without tracking every promise.
 *
 * Node 20's harness installs an async hook with `init` and `destroy` to know which test an
 * uncaught exception or unhandled rejection came from. A `destroy` callback makes V8 register a
 * destroy hook on every promise the process creates, and `init` runs for each of them: in a test
 * that makes millions of promises (the chaos suite, the loop suites) that was 7–10 % of the
 * process's CPU (docs/benchmarks.md, "Issue 43: the suite"). Here the harness's hook gets the `init` of every
 * resource but promises, and no `destroy`:
 * - an exception thrown from a timer, a socket or an emitter is still failed on its test, as before;
 * - an unhandled rejection still fails the run: the harness reports it as a diagnostic ("A resource
 *   generated asynchronous activity …", with the error) and the file exits 1, which the reporter
 *   lists as a failed file, but it is no longer charged to the one test that made it;
 * - without `destroy`, the harness's map of resources keeps the ids of a file's timers and sockets
 *   until the file's process ends (tens of bytes each).
 *
 * `A2A_TEST_TRACK_PROMISES=1` leaves node's harness as it is (to find which test left a rejection).
 *
 * Only the harness's own hook is changed: it is recognized by its caller (`setup` in
 * node:internal/test_runner/harness); every other `createHook` (AsyncLocalStorage, OpenTelemetry)
 * is node's.
 */
import asyncHooks from 'node:async_hooks';

/**
 * How many test files a group process (scripts/run-tests.mjs) is importing into their suites: while
 * one is, promises are tracked too, so that the tests and hooks a file declares after an `await`
 * (its imports through the loader, a top-level `await`) land in the file's suite, as node's harness
 * places them by the async resource they were declared from.
 */
export const IMPORTING = Symbol.for('a2a-discovery.test.importing');

if (process.env['A2A_TEST_TRACK_PROMISES'] !== '1') {
  const createHook = asyncHooks.createHook;
  /** @param {asyncHooks.HookCallbacks} callbacks */
  asyncHooks.createHook = function leanCreateHook(callbacks) {
    const caller = new Error().stack?.split('\n')[2] ?? '';
    const init = callbacks.init;
    if (!/^\s*at setup \(node:internal\/test_runner\/harness/.test(caller) || init === undefined) return createHook.call(this, callbacks);
    asyncHooks.createHook = createHook;
    return createHook.call(this, {
      init(asyncId, type, triggerAsyncId, resource) {
        if (type !== 'PROMISE' || /** @type {Record<symbol, number | undefined>} */ (globalThis)[IMPORTING]) init(asyncId, type, triggerAsyncId, resource);
      },
    });
  };
}
