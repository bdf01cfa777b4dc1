/**
 * parseConfig on wrong input: every problem is reported at once, each at its path, line and
 * column, in a sentence the author understands.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { formatProblems, loadConfig, parseConfig } from '../../packages/core/src/config/index.js';
import { DiscoveryError, isDiscoveryError, type Problem } from '../../packages/core/src/errors.js';

const MISTAKES = new URL('../../examples/config/many-mistakes.yaml', import.meta.url).pathname;
const SYNTAX = new URL('../../examples/config/syntax-error.yaml', import.meta.url).pathname;

function invalid(text: string): DiscoveryError {
  try {
    parseConfig(text, { file: 'test.yaml' });
  } catch (err) {
    assert.ok(isDiscoveryError(err), `expected a DiscoveryError, got ${String(err)}`);
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    assert.equal(err.stage, 'config');
    return err;
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

async function loadFailure(file: string): Promise<DiscoveryError> {
  try {
    await loadConfig(file);
  } catch (err) {
    assert.ok(isDiscoveryError(err));
    return err;
  }
  assert.fail('expected ERR_CONFIG_INVALID');
}

/** `line:col path` for each problem. */
function where(err: DiscoveryError): string[] {
  return err.problems.map((p) => `${p.line}:${p.column} ${p.path}`);
}

function find(err: DiscoveryError, path: string): Problem {
  const found = err.problems.find((p) => p.path === path);
  assert.ok(found, `no problem at ${path}; got:\n${formatProblems(err)}`);
  return found;
}

const AGENT = `allow: [https://billing.example.com]
vocabulary: [{ tag: billing, description: Invoices. }]
static:
  - { name: billing_agent, url: "https://billing.example.com/", description: Answers invoices., tags: [billing] }
`;

describe('a file with many mistakes (examples/config/many-mistakes.yaml)', () => {
  test('reports every one, in file order, at its exact line and column', async () => {
    const err = await loadFailure(MISTAKES);
    assert.equal(err.code, 'ERR_CONFIG_INVALID');
    assert.deepEqual(where(err), [
      '3:3 server.hots', //         unknown key, at the key
      '4:9 server.port', //         wrong type
      '7:5 allow[1]', //            bad allowlist entry (HostPolicy.from, mapped back)
      '9:9 signatures.mode', //     bad enum
      '14:10 needs[0].tag', //      need tag outside the vocabulary
      '19:21 static[0].tags[1]', // static tag outside the vocabulary
      '20:11 static[1].name', //    duplicate static name
      '21:10 static[1].url', //     url outside the allowlist
      '24:11 static[2].name', //    "user"
      '29:17 cache.defaultTtlMs', // wrong type, with its unit
    ]);
    assert.match(err.message, /10 problem\(s\); first: server\.hots: unknown key "hots"/);
  });

  test('each message says what is wrong and what was expected', async () => {
    const err = await loadFailure(MISTAKES);
    assert.match(find(err, 'server.hots').message, /unknown key "hots"; did you mean "host"\? \(allowed here: host, port, tokenEnv, tokenFile, allowedHosts, allowedOrigins, limits, clients, catalog, registry, a2a, oidc, telemetry, drainTimeoutMs, heapGrowthPercent\)/);
    assert.match(find(err, 'server.port').message, /must be a number, got "7340" \(write the number without quotes/);
    assert.match(find(err, 'allow[1]').message, /"https:\/\/billing\.example\.com\/v1" is not an origin .*no path/);
    assert.equal(find(err, 'signatures.mode').message, 'must be one of off, if-present, required; got "sometimes"');
    assert.match(find(err, 'needs[0].tag').message, /"refunds" is not in the vocabulary.*known tags: billing/);
    assert.match(find(err, 'static[0].tags[1]').message, /"invoices" is not in the vocabulary/);
    assert.match(find(err, 'static[1].name').message, /duplicate name "billing_agent", already used by static\[0\]/);
    assert.match(find(err, 'static[1].url').message, /https:\/\/billing\.evil\.example is not in the allowlist; add its origin to allow/);
    assert.match(find(err, 'static[2].name').message, /"user" is reserved/);
    assert.equal(find(err, 'cache.defaultTtlMs').message, 'must be a whole number of milliseconds, got "5m"');
  });

  test('formatProblems prints file:line:col path: message lines', async () => {
    const err = await loadFailure(MISTAKES);
    const lines = formatProblems(err, 'many-mistakes.yaml').split('\n');
    assert.equal(lines.length, 10);
    assert.equal(lines[0], 'many-mistakes.yaml:3:3 server.hots: unknown key "hots"; did you mean "host"? (allowed here: host, port, tokenEnv, tokenFile, allowedHosts, allowedOrigins, limits, clients, catalog, registry, a2a, oidc, telemetry, drainTimeoutMs, heapGrowthPercent)');
    for (const line of lines) assert.match(line, /^many-mistakes\.yaml:\d+:\d+ \S+: .+$/);
    assert.match(formatProblems(err).split('\n')[1]!, /^4:9 server\.port: /);
  });
});

describe('YAML syntax', () => {
  test('a syntax error is reported alone, with its line and column', async () => {
    const text = await readFile(SYNTAX, 'utf8');
    const err = invalid(text);
    assert.equal(err.problems.length, 1);
    const [p] = err.problems;
    assert.equal(p!.path, '$');
    assert.deepEqual([p!.line, p!.column], [3, 1]);
    assert.match(p!.message, /^YAML syntax: flow sequence .* end with a \]/);
    assert.equal(formatProblems(err, 'syntax-error.yaml').split('\n').length, 1);
  });

  test('a duplicate key is a syntax error at the second key', () => {
    const err = invalid(`${AGENT}cache:\n  maxBodyBytes: 1\n  maxBodyBytes: 2\n`);
    assert.deepEqual(where(err), ['7:3 $']);
    assert.match(err.problems[0]!.message, /map keys must be unique/);
  });

  test('several documents in one file are refused', () => {
    assert.match(invalid(`${AGENT}---\nallow: []\n`).problems[0]!.message, /multiple documents/);
  });

  test('an alias bomb is refused, not expanded', () => {
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x, x]', ...['b', 'c', 'd', 'e'].map((k, i) => `${k}: &${k} [${Array(10).fill(`*${'abcd'[i]}`).join(', ')}]`)].join('\n');
    assert.match(invalid(bomb).problems[0]!.message, /alias/i);
  });

  test('a document that is not a mapping, and an empty one', () => {
    assert.match(invalid('- one\n- two\n').problems[0]!.message, /must be a mapping of sections .* got a list/);
    assert.deepEqual(
      invalid('# nothing yet\n').problems.map((p) => p.path),
      ['allow', '$'],
    );
  });
});

describe('schema', () => {
  test('unknown keys are errors everywhere, each located at the key', () => {
    const err = invalid(`${AGENT}statc: []\nsources:\n  registries:\n    - { id: catalog, url: "https://billing.example.com/a.json", pageSize: 5 }\n`);
    assert.deepEqual(where(err), ['5:1 statc', '8:65 sources.registries[0].pageSize']);
    assert.match(find(err, 'statc').message, /did you mean "static"\?/);
    assert.match(find(err, 'sources.registries[0].pageSize').message, /allowed here: id, url, pollIntervalMs, maxPages/);
  });

  test('a missing required key points at the mapping it is missing from', () => {
    const err = invalid(`allow: [https://billing.example.com]\nvocabulary: [{ tag: billing, description: Invoices. }]\nstatic:\n  - name: billing_agent\n    tags: [billing]\n`);
    // url is optional in the schema (cardUrl may replace it); the cross-field rule reports it.
    assert.deepEqual(where(err), ['4:5 static[0].description', '4:5 static[0].url']);
    assert.match(find(err, 'static[0].url').message, /^is required \(the base URL\), unless cardUrl gives the card URL$/);
  });

  test('numbers: ranges, whole numbers, units', () => {
    const err = invalid(`${AGENT}server: { port: 70000 }\ncache: { totalTimeoutMs: 1.5, maxConcurrentFetches: 0 }\nloop: { maxRemovalShare: 2 }\n`);
    assert.match(find(err, 'server.port').message, /must be at most 65535, got 70000/);
    assert.equal(find(err, 'cache.totalTimeoutMs').message, 'must be a whole number of milliseconds, got 1.5');
    assert.match(find(err, 'cache.maxConcurrentFetches').message, /must be greater than 0, got 0/);
    assert.match(find(err, 'loop.maxRemovalShare').message, /must be at most 1, got 2/);
  });

  test('YAML 1.2 booleans: yes is a string, not true', () => {
    const err = invalid(`${AGENT}allowLoopback: yes\n`);
    assert.equal(find(err, 'allowLoopback').message, 'must be true or false, got "yes"');
  });

  test('names, tags, modes, env names, algorithms', () => {
    const err = invalid(`allow: [https://billing.example.com]
vocabulary: [{ tag: "two words", description: x }]
needs: [{ tag: billing, inputModes: ["plain text"] }]
server: { tokenEnv: "my-token" }
signatures: { algorithms: [HS256, none] }
static:
  - { name: Billing, url: "https://billing.example.com/", description: d, tags: [billing] }
`);
    assert.match(find(err, 'vocabulary[0].tag').message, /without spaces or commas/);
    assert.match(find(err, 'needs[0].inputModes[0]').message, /neither a media type/);
    assert.match(find(err, 'server.tokenEnv').message, /environment variable name/);
    assert.match(find(err, 'signatures.algorithms[0]').message, /shared secret/);
    assert.match(find(err, 'signatures.algorithms[1]').message, /"none" means unsigned/);
    assert.match(find(err, 'static[0].name').message, /must be a local name matching/);
  });
});

describe('cross-field rules', () => {
  test('a value the schema refused is not reported again by a cross-field rule', () => {
    const err = invalid(`${AGENT.replace('"https://billing.example.com/"', '"ftp://billing.example.com/"')}`);
    assert.deepEqual(where(err), ['4:33 static[0].url']);
    assert.match(err.problems[0]!.message, /is not an http\(s\) URL/);
  });

  test('root: model needs a model, routed takes none, fallback names a static agent, names stay unique', () => {
    assert.deepEqual(
      invalid(`${AGENT}root: { kind: model }\n`).problems.map((p) => [p.path, p.message]),
      [['root.model', 'is required when root.kind is "model" (e.g. gemini-2.5-flash)']],
    );
    assert.match(find(invalid(`${AGENT}root: { model: gemini }\n`), 'root.model').message, /only with root.kind: model/);
    assert.match(find(invalid(`${AGENT}root: { fallback: nobody }\n`), 'root.fallback').message, /"nobody" is not the name of a static agent \(static agents: billing_agent\)/);
    assert.match(find(invalid(`${AGENT}root: { name: billing_agent }\n`), 'static[0].name').message, /root agent's name/);
    assert.match(find(invalid(`${AGENT}root: { name: user }\n`), 'root.name').message, /reserved/);
  });

  test('server: a host that is not loopback requires a token; one token source only', () => {
    assert.match(find(invalid(`${AGENT}server: { host: 0.0.0.0 }\n`), 'server.host').message, /not a loopback address.*tokenEnv or server\.tokenFile/);
    assert.equal(parseConfig(`${AGENT}server: { host: 0.0.0.0, tokenEnv: TOKEN }\n`).server.host, '0.0.0.0');
    assert.equal(parseConfig(`${AGENT}server: { host: localhost }\n`).server.host, 'localhost');
    assert.match(find(invalid(`${AGENT}server: { tokenEnv: A, tokenFile: b }\n`), 'server.tokenFile').message, /only one of tokenEnv and tokenFile/);
  });

  test('credentials: exactly one secret source, allowlisted and distinct origins, never inline', () => {
    const err = invalid(`${AGENT}credentials:
  - { origin: "https://billing.example.com", valueEnv: A, valueFile: b }
  - { origin: "https://billing.example.com:443" }
  - { origin: "https://other.example.com", valueEnv: C }
  - { origin: "https://billing.example.com", value: hunter2 }
`);
    assert.deepEqual(where(err), [
      '6:70 credentials[0].valueFile',
      '7:5 credentials[1]',
      '7:15 credentials[1].origin',
      '8:15 credentials[2].origin',
      '9:5 credentials[3]',
      '9:15 credentials[3].origin',
      '9:46 credentials[3].value',
    ]);
    assert.match(find(err, 'credentials[1].origin').message, /already has credentials in credentials\[0\]/);
    assert.match(find(err, 'credentials[2].origin').message, /not in the allowlist; credentials are sent only to allowlisted origins/);
    assert.match(find(err, 'credentials[3].value').message, /unknown key "value"/);
    assert.match(find(err, 'credentials[3]').message, /secrets are never written in the configuration/);
  });

  test('allowlist: empty only with allowLoopback; bad CIDRs mapped back', () => {
    assert.match(find(invalid(`${AGENT}allow: []\n`.replace('allow: [https://billing.example.com]\n', '')), 'allow').message, /lists no origins/);
    const k8s = 'sources: { kubernetes: { id: cluster, labelSelector: "app=agent" } }\n';
    assert.deepEqual(parseConfig(`allowLoopback: true\n${k8s}`).allow, []);
    const err = invalid(`${AGENT}allowCidrs: [10.0.0.0/8, 300.0.0.0/8]\n`);
    assert.deepEqual(where(err), ['5:26 allowCidrs[1]']);
    assert.match(err.problems[0]!.message, /not a CIDR range/);
  });

  test('sources: unique ids, allowlisted registries and domains, at least one agent source', () => {
    const err = invalid(`${AGENT}sources:
  wellKnown: { id: partners, domains: [billing.example.com, Billing.Example.com., partner.example.org] }
  registries:
    - { id: static, url: "https://registry.example.com/agents.json" }
  kubernetes: { id: partners, labelSelector: "app=agent" }
`);
    assert.match(find(err, 'sources.wellKnown.domains[1]').message, /duplicate of domains\[0\]/);
    assert.match(find(err, 'sources.wellKnown.domains[2]').message, /https:\/\/partner\.example\.org is not in the allowlist/);
    assert.match(find(err, 'sources.registries[0].id').message, /source id "static" is already used by the static agents/);
    assert.match(find(err, 'sources.registries[0].url').message, /the catalog must be on the allowlist/);
    assert.match(find(err, 'sources.kubernetes.id').message, /already used by sources\.wellKnown/);
    const none = invalid('allow: [https://billing.example.com]\n');
    assert.deepEqual(where(none), ['1:1 $']);
    assert.match(none.problems[0]!.message, /no agent source/);
  });

  test('signatures required without keys, and cache bounds that contradict each other', () => {
    const err = invalid(`${AGENT}signatures: { mode: required }\ncache: { minTtlMs: 600000, maxTtlMs: 60000, backoffBaseMs: 600000 }\n`);
    assert.match(find(err, 'signatures.mode').message, /no keys are listed/);
    assert.match(find(err, 'cache.minTtlMs').message, /minTtlMs \(600000\) must not exceed maxTtlMs \(60000\)/);
    assert.match(find(err, 'cache.backoffBaseMs').message, /must not exceed backoffMaxMs \(300000\)/);
  });

  test('a duplicate vocabulary tag', () => {
    const err = invalid(`${AGENT}vocabulary: [{ tag: billing, description: a }, { tag: billing, description: b }]\n`.replace('vocabulary: [{ tag: billing, description: Invoices. }]\n', ''));
    assert.match(find(err, 'vocabulary[1].tag').message, /duplicate tag "billing"/);
  });
});

describe('formatProblems', () => {
  test('problems without a position, and errors without problems', () => {
    const err = new DiscoveryError('ERR_CONFIG_INVALID', 'bad', { problems: [{ path: 'server.tokenEnv', message: 'is not set' }] });
    assert.equal(formatProblems(err, 'a.yaml'), 'a.yaml: server.tokenEnv: is not set');
    assert.equal(formatProblems(err), 'server.tokenEnv: is not set');
    assert.equal(formatProblems(new DiscoveryError('ERR_CONFIG_INVALID', 'whole file is wrong'), 'a.yaml'), 'a.yaml: whole file is wrong');
  });
});
