/**
 * The architecture enforces itself (issue 37): `npm run lint` refuses a second HTTP client, the
 * library's own time and randomness outside clock/, and a second copy of a rule that has one
 * owner (the backoff, loopback, undici's error codes, the byte cap, redirects, frozen copies).
 * Each rule is shown firing on a snippet placed where it would be written, and staying quiet in
 * the one place that owns it — with the project's own ESLint configuration.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));
const eslint = new ESLint({ cwd: root });

/** The rule ids and messages ESLint reports for `code` as if it were the file at `path`. */
async function lint(path: string, code: string): Promise<Array<{ rule: string; message: string }>> {
  const [result] = await eslint.lintText(code, { filePath: `${root}/${path}` });
  return (result?.messages ?? []).map((m) => ({ rule: m.ruleId ?? '(parse)', message: m.message }));
}

async function fires(path: string, code: string, rule: string, message: RegExp): Promise<void> {
  const found = await lint(path, code);
  assert.ok(
    found.some((m) => m.rule === rule && message.test(m.message)),
    `${rule} /${message.source}/ expected for ${path}:\n${code}\ngot ${JSON.stringify(found)}`,
  );
}

async function quiet(path: string, code: string, rule: string): Promise<void> {
  const found = (await lint(path, code)).filter((m) => m.rule === rule);
  assert.deepEqual(found, [], `${rule} must not fire for ${path}`);
}

describe('one HTTP client', () => {
  test('the global fetch is refused in every package, with where to go instead', async () => {
    for (const path of ['packages/service/src/http/x.ts', 'packages/core/src/sources/x.ts', 'packages/store/src/x.ts', 'packages/service/src/cli/x.ts']) {
      await fires(path, "export const f = () => fetch('https://a.example/');\n", 'no-restricted-globals', /createGuardedFetch/);
    }
  });

  test("undici's request functions, node:https and node:http's client are refused outside fetch/", async () => {
    await fires('packages/core/src/sources/x.ts', "import { request } from 'undici';\nexport const r = request;\n", 'no-restricted-imports', /guarded connection/);
    await fires('packages/service/src/http/x.ts', "import https from 'node:https';\nexport const r = https;\n", 'no-restricted-imports', /guarded connection/);
    await fires('packages/service/src/http/x.ts', "import { request } from 'node:http';\nexport const r = request;\n", 'no-restricted-imports', /node:http is for servers/);
    await fires('packages/store/src/x.ts', "import http from 'node:http';\nexport const r = () => http.request('http://a.example/');\n", 'no-restricted-syntax', /node:http is for servers/);
    // A server and types stay allowed; the connection module itself uses undici.
    await quiet('packages/service/src/http/x.ts', "import http from 'node:http';\nimport type { Dispatcher } from 'undici';\nexport const s = http.createServer();\nexport type D = Dispatcher;\n", 'no-restricted-imports');
    await quiet('packages/core/src/fetch/x.ts', "import { Agent } from 'undici';\nexport const a = new Agent();\n", 'no-restricted-imports');
  });
});

describe("the library's time and randomness are injected", () => {
  test('Math.random, Date.now and timers are refused in the library outside clock/', async () => {
    await fires('packages/core/src/loop/x.ts', 'export const r = Math.random();\n', 'no-restricted-properties', /injected random source/);
    await fires('packages/core/src/sources/x.ts', 'export const t = Date.now();\n', 'no-restricted-properties', /injected Clock/);
    await fires('packages/core/src/cache/x.ts', 'export const t = setTimeout(() => undefined, 10);\n', 'no-restricted-globals', /clock\.setTimer/);
    await fires('packages/core/src/fetch/x.ts', 'export const t = setInterval(() => undefined, 10);\n', 'no-restricted-globals', /injected Clock/);
  });

  test('clock/ and the network deadlines may; the service and the store are not the library', async () => {
    await quiet('packages/core/src/clock/x.ts', 'export const r = Math.random() + Date.now();\n', 'no-restricted-properties');
    await quiet('packages/core/src/fetch/deadlines.ts', 'export const t = setTimeout(() => undefined, 10);\n', 'no-restricted-globals');
    await quiet('packages/service/src/http/x.ts', 'export const t = Date.now();\n', 'no-restricted-properties');
  });
});

describe('a rule with one owner is not written again', () => {
  const cases: Array<{ what: string; code: string; owner: string; message: RegExp }> = [
    { what: 'an exponential backoff', code: 'export const d = (k: number) => Math.min(60_000, 1000 * 2 ** (k - 1));\n', owner: 'packages/core/src/rules/backoff.ts', message: /backoffDelay/ },
    { what: 'a literal loopback list', code: "export const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];\n", owner: 'packages/core/src/rules/origins.ts', message: /isLoopbackHost/ },
    { what: "classifying undici's error codes", code: "export const t = (c: string) => c === 'UND_ERR_HEADERS_TIMEOUT';\n", owner: 'packages/core/src/fetch/failure.ts', message: /networkFailure/ },
    { what: 'a hand-written byte cap over a stream', code: 'export const r = (b: ReadableStream) => b.getReader();\n', owner: 'packages/core/src/fetch/body-cap.ts', message: /readBoundedStream/ },
    { what: "choosing a redirect mode (instead of the guarded fetch's refusal)", code: "export const init = { redirect: 'manual' };\n", owner: 'packages/core/src/fetch/guarded-fetch.ts', message: /guarded fetch/ },
    { what: 'freezing a spread clone (a hidden class per object)', code: 'export const f = (m: object) => Object.freeze({ ...m, seen: true });\n', owner: 'packages/core/src/rules/frozen.ts', message: /frozenCopy/ },
  ];
  for (const c of cases) {
    test(`${c.what}: refused anywhere else, accepted in ${c.owner}`, async () => {
      for (const path of ['packages/core/src/sources/x.ts', 'packages/core/src/fetch/x.ts', 'packages/service/src/http/x.ts', 'packages/store/src/x.ts']) {
        await fires(path, c.code, 'no-restricted-syntax', c.message);
      }
      const own = (await lint(c.owner, c.code)).filter((m) => m.rule === 'no-restricted-syntax' && c.message.test(m.message));
      assert.deepEqual(own, []);
    });
  }

  test('a constant power of two is not a backoff', async () => {
    await quiet('packages/core/src/sources/x.ts', 'export const MAX = 2 ** 31 - 1;\n', 'no-restricted-syntax');
  });
});

describe('the service reads as small parts', () => {
  const long = (n: number): string => `export function f(): number {\n  let x = 0;\n${'  x += 1;\n'.repeat(n)}  return x;\n}\n`;

  test('a function over 80 lines in the service is refused; one that says why it is one piece is not', async () => {
    await fires('packages/service/src/http/x.ts', long(80), 'max-lines-per-function', /Maximum allowed is 80/);
    await quiet('packages/service/src/http/x.ts', long(70), 'max-lines-per-function');
    await quiet('packages/service/src/http/x.ts', `// eslint-disable-next-line max-lines-per-function -- one declarative table\n${long(80)}`, 'max-lines-per-function');
  });
});

describe("a benchmark's settings have one reader", () => {
  test('a number parsed from process.env in a benchmark is refused, with the reader to use; the reader itself may', async () => {
    await fires('bench/x.ts', "export const n = Number(process.env['BENCH_ROUNDS'] ?? 5);\n", 'no-restricted-syntax', /envCount/);
    await fires('bench/lib/x.ts', 'export const n = parseInt(process.env.BENCH_TURNS ?? "9", 10);\n', 'no-restricted-syntax', /bench\/lib\/env\.ts/);
    await quiet('bench/x.ts', "import { envCount } from './lib/env.js';\nexport const n = envCount('BENCH_ROUNDS', 5, 50);\n", 'no-restricted-syntax');
    await quiet('bench/lib/env.ts', 'export const n = Number(process.env.X);\n', 'no-restricted-syntax');
  });
});
