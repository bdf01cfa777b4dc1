// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
        cancelAnimationFrame: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', navigator: 'readonly', TextEncoder: 'readonly', URLSearchParams: 'readonly',
      },
    },
  },
  {
    // The library never writes to the console: observability goes through the event stream
    // and an injected logger. The CLI and scripts are the only places that print.
    files: ['packages/*/src/**/*.ts'],
    ignores: ['packages/service/src/cli/**'],
    rules: { 'no-console': 'error' },
  },
);
