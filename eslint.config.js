// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// ---- The rules that keep one way of doing each thing (used below; tested in test/package/lint-rules.test.ts).

/** Globals that would be a second HTTP client. */
const ONE_CLIENT_GLOBALS = [
  { name: 'fetch', message: 'Outbound requests go through the guarded connection: createGuardedFetch, createOriginFetch or createDeploymentFetch (packages/core/src/fetch/guarded-fetch.ts), or the card fetcher.' },
  { name: 'XMLHttpRequest', message: 'Outbound requests go through the guarded connection (packages/core/src/fetch/).' },
  { name: 'WebSocket', message: 'Outbound requests go through the guarded connection (packages/core/src/fetch/).' },
];

/** Imports that would be a second HTTP client. Types stay importable. */
const ONE_CLIENT_IMPORTS = [
  { name: 'undici', allowTypeImports: true, message: 'undici is used by the guarded connection only (packages/core/src/fetch/): use the guarded fetch or the card fetcher.' },
  { name: 'node:https', allowTypeImports: true, message: 'Outbound requests go through the guarded connection (packages/core/src/fetch/).' },
  { name: 'https', allowTypeImports: true, message: 'Outbound requests go through the guarded connection (packages/core/src/fetch/).' },
  { name: 'node:http', importNames: ['request', 'get', 'Agent', 'globalAgent'], message: 'Outbound requests go through the guarded connection (packages/core/src/fetch/); node:http is for servers.' },
  { name: 'http', importNames: ['request', 'get', 'Agent', 'globalAgent'], message: 'Outbound requests go through the guarded connection (packages/core/src/fetch/); node:http is for servers.' },
  { name: 'axios', message: 'Outbound requests go through the guarded connection (packages/core/src/fetch/).' },
  { name: 'node-fetch', message: 'Outbound requests go through the guarded connection (packages/core/src/fetch/).' },
  { name: 'got', message: 'Outbound requests go through the guarded connection (packages/core/src/fetch/).' },
];

/** `http.request(…)`, `https.get(…)` on a default import: the same second client. */
const ONE_CLIENT_SYNTAX = [
  { selector: "CallExpression[callee.type='MemberExpression'][callee.object.name=/^(http|https|node_http|node_https)$/][callee.property.name=/^(request|get)$/]", message: 'Outbound requests go through the guarded connection (packages/core/src/fetch/); node:http is for servers.' },
];

/** Rules with one owner each, recognisable by their shape; `owner` is the one file that may write it. */
const OWNED_SYNTAX = [
  {
    owner: 'packages/core/src/rules/backoff.ts',
    selector: "BinaryExpression[operator='**'][left.value=2][right.type!='Literal']:not([right.type='UnaryExpression'])",
    message: 'An exponential delay is the one backoff rule: backoffDelay (packages/core/src/rules/backoff.ts).',
  },
  {
    owner: 'packages/core/src/rules/origins.ts',
    selector: "ArrayExpression:has(> Literal[value='127.0.0.1']), ArrayExpression:has(> Literal[value='localhost']), ArrayExpression:has(> Literal[value='[::1]'])",
    message: 'Loopback is one rule: isLoopbackHost / secureOrLoopback (packages/core/src/rules/origins.ts), not a literal list.',
  },
  {
    owner: 'packages/core/src/fetch/failure.ts',
    selector: "Literal[value=/^UND_ERR_/]",
    message: 'undici errors are classified in one place: networkFailure (packages/core/src/fetch/failure.ts).',
  },
  {
    owner: 'packages/core/src/fetch/body-cap.ts',
    selector: "CallExpression[callee.property.name='getReader']",
    message: 'A body is read under the one byte cap: readBoundedStream / capStream (packages/core/src/fetch/body-cap.ts).',
  },
  {
    owner: 'packages/core/src/rules/frozen.ts',
    selector: "CallExpression[callee.object.name='Object'][callee.property.name=/^(freeze|seal|preventExtensions)$/] > ObjectExpression.arguments > SpreadElement:first-child",
    message: 'A frozen copy is made by frozenCopy (packages/core/src/rules/frozen.ts): V8 gives each frozen spread clone a hidden class of its own (~170 B an object).',
  },
  {
    owner: 'packages/core/src/fetch/guarded-fetch.ts',
    selector: "Property[key.name='redirect'][value.value='manual'], Property[key.name='redirect'][value.value='follow'], Property[key.name='redirect'][value.value='error']",
    message: 'Redirects are refused by the guarded fetch (packages/core/src/fetch/guarded-fetch.ts), never chosen by a caller.',
  },
];

/** The restricted-syntax entries for a file: all but the rule `owner` owns. */
const ownedSyntax = (owner) => OWNED_SYNTAX.filter((r) => r.owner !== owner).map(({ selector, message }) => ({ selector, message }));
const ONE_RULE_SYNTAX = ownedSyntax(undefined);

/** The library's time and randomness come from clock/. */
const CLOCK_GLOBALS = [
  { name: 'setTimeout', message: 'Use the injected Clock (clock.setTimer / clock.sleep), or abortAfter for a network deadline (fetch/deadlines.ts).' },
  { name: 'setInterval', message: 'Use the injected Clock (clock.setTimer).' },
];
const CLOCK_PROPERTIES = [
  { object: 'Math', property: 'random', message: 'Use the injected random source (Random from clock/; systemRandom by default), or node:crypto for secrets and ids.' },
  { object: 'Date', property: 'now', message: 'Use the injected Clock (clock.wallNow(); systemClock by default).' },
];

export default tseslint.config(
  { ignores: ['**/dist/**', 'node_modules/**', 'coverage/**', '.tmp/**', 'test/.doc-examples/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { console: 'readonly', process: 'readonly', URL: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // The dashboard runs in the browser (no build step; type-checked by tsconfig.web.json).
    files: ['packages/service/web/**/*.js'],
    languageOptions: {
      globals: {
        window: 'readonly', document: 'readonly', location: 'readonly', history: 'readonly', fetch: 'readonly',
        sessionStorage: 'readonly', localStorage: 'readonly', AbortController: 'readonly', TextDecoder: 'readonly',
        Headers: 'readonly', Response: 'readonly', Event: 'readonly', HTMLElement: 'readonly', requestAnimationFrame: 'readonly',
        cancelAnimationFrame: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', navigator: 'readonly', TextEncoder: 'readonly', URLSearchParams: 'readonly', ResizeObserver: 'readonly',
      },
    },
  },
  // ---- One way to do each thing (docs/architecture.md, "Where each rule lives"). Each rule below
  // has a test that shows it fires: test/package/lint-rules.test.ts.
  {
    // One HTTP client: every outbound request goes through the guarded connection
    // (packages/core/src/fetch/guarded-connection.ts) — the card fetcher, or the guarded fetch
    // (createGuardedFetch / createOriginFetch / createDeploymentFetch, fetch/guarded-fetch.ts).
    files: ['packages/*/src/**/*.ts'],
    ignores: ['packages/core/src/fetch/**'],
    rules: {
      'no-restricted-globals': ['error', ...ONE_CLIENT_GLOBALS],
      'no-restricted-imports': ['error', { paths: ONE_CLIENT_IMPORTS }],
      'no-restricted-syntax': ['error', ...ONE_CLIENT_SYNTAX, ...ONE_RULE_SYNTAX],
    },
  },
  {
    // Inside the connection module itself the other one-rule checks still hold.
    files: ['packages/core/src/fetch/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...ONE_RULE_SYNTAX] },
  },
  {
    // The library's time and randomness are injected (clock/): no Math.random, Date.now or raw
    // timers outside clock/ and the network deadlines (fetch/deadlines.ts: sockets run in real time).
    files: ['packages/core/src/**/*.ts'],
    ignores: ['packages/core/src/clock/**', 'packages/core/src/fetch/deadlines.ts'],
    rules: {
      'no-restricted-globals': ['error', ...ONE_CLIENT_GLOBALS, ...CLOCK_GLOBALS],
      'no-restricted-properties': ['error', ...CLOCK_PROPERTIES],
    },
  },
  {
    files: ['packages/core/src/fetch/**/*.ts'],
    ignores: ['packages/core/src/fetch/deadlines.ts'],
    rules: { 'no-restricted-globals': ['error', ...CLOCK_GLOBALS] },
  },
  // The one owner of each rule may write it (and no other).
  ...OWNED_SYNTAX.map(({ owner }) => ({
    files: [owner],
    rules: { 'no-restricted-syntax': ['error', ...(owner.startsWith('packages/core/src/fetch/') ? [] : ONE_CLIENT_SYNTAX), ...ownedSyntax(owner)] },
  })),
  {
    // The service reads as small parts (issue 40): a function longer than 80 lines (blank lines and
    // comments aside) is split, or carries an eslint-disable comment that says why it is one piece.
    files: ['packages/service/src/**/*.ts'],
    rules: { 'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }] },
  },
  {
    // The library never writes to the console: observability goes through the event stream
    // and an injected logger. The CLI and scripts are the only places that print.
    files: ['packages/*/src/**/*.ts'],
    ignores: ['packages/service/src/cli/**'],
    rules: { 'no-console': 'error' },
  },
  {
    // A benchmark's numbers come from its environment through one reader, with bounds and an error
    // that names the variable (bench/lib/env.ts): a private parser fell back silently on a typo.
    files: ['bench/**/*.ts'],
    ignores: ['bench/lib/env.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "CallExpression[callee.name=/^(Number|parseInt|parseFloat)$/] MemberExpression[object.object.name='process'][object.property.name='env']",
          message: 'A benchmark reads a number from its environment with envNumber, envCount or envCounts (bench/lib/env.ts).',
        },
      ],
    },
  },
  {
    // The internal entries carry no semver promise: only the packages of this repository import
    // them. Examples, scripts, benchmarks and tests use the public entries (tests may import a
    // module by its relative source path). Docs examples are checked against the public entries by
    // test/docs/examples.test.ts.
    files: ['**/*.{ts,js,mjs}'],
    ignores: ['packages/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'a2a-discovery/internal', message: 'a2a-discovery/internal is not public (no semver promise): use the root entry or a documented subpath.' },
            { name: '@a2a-discovery/store/internal', message: '@a2a-discovery/store/internal is not public (no semver promise): use @a2a-discovery/store.' },
          ],
        },
      ],
    },
  },
);
