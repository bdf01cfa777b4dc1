/**
 * Cards real frameworks serve that are imperfect in ways that cost a client nothing: accepted,
 * with a warning at the JSON path. Everything a client will call stays strict.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'undici';
import { RemoteA2AAgent } from '@google/adk';
import { duplicateInterfacesForLegacy } from '@a2a-js/sdk/compat/v0_3';
import { checkCard, parseAgentCard, preferredInterface, toAdkCard } from '../../packages/core/src/card/index.js';
import type { ParseCardResult, UrlJudge } from '../../packages/core/src/card/index.js';
import type { Problem } from '../../packages/core/src/errors.js';
import type { RunningPeer } from '../helpers/a2a-peers.js';
import { startV1CardServer, v1Card } from '../helpers/a2a-peers.js';

const dev = { allowLoopback: true };

/** Admits only the listed origins, as a `--allow` host policy would. */
function allowOnly(...origins: string[]): UrlJudge {
  return {
    check: (u) => {
      const url = new URL(u);
      if (url.protocol !== 'https:') return { allowed: false, code: 'ERR_INSECURE_URL', reason: `${u} is not https:` };
      return origins.includes(url.origin) ? { allowed: true } : { allowed: false, code: 'ERR_HOST_NOT_ALLOWED', reason: `${url.origin} is not on the allowlist` };
    },
  };
}

function warningAt(r: Pick<ParseCardResult, 'warnings'>, path: string): Problem | undefined {
  return r.warnings.find((w) => w.path === path);
}

function accepted(r: ParseCardResult): ParseCardResult {
  assert.equal(r.ok, true, JSON.stringify({ stage: r.stage, problems: r.problems }));
  return r;
}

/** A Mastra agent with no tools, as its A2A server publishes it (0.3, no skills). */
function mastraCard(): Record<string, unknown> {
  return {
    name: 'weatherAgent',
    description: 'Answers questions about the weather.',
    url: 'https://mastra.example.com/a2a/weatherAgent',
    provider: { organization: 'Mastra', url: 'https://mastra.ai' },
    version: '1.0',
    protocolVersion: '0.3.0',
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: true },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [],
  };
}

/** The shape of the a2a-js SDK's sample agent cards (0.3): "task-status" as an output mode. */
function sdkSampleCard(): Record<string, unknown> {
  return {
    name: 'Movie Agent',
    description: 'An agent that can answer questions about movies and actors using TMDB.',
    url: 'https://movies.example.com/',
    provider: { organization: 'A2A Samples', url: 'https://example.com/a2a-samples' },
    version: '0.0.2',
    protocolVersion: '0.3.0',
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: true },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text', 'task-status'],
    skills: [
      {
        id: 'general_movie_chat',
        name: 'General Movie Chat',
        description: 'Answer general questions or chat about movies, actors, directors.',
        tags: ['movies', 'actors', 'directors'],
        examples: ['Tell me about the plot of Inception.'],
        inputModes: ['text'],
        outputModes: ['text', 'task-status'],
      },
    ],
    supportsAuthenticatedExtendedCard: false,
  };
}

/** The a2a-js README card: a JSONRPC main URL plus a gRPC target written host:port. */
function readmeCard(): Record<string, unknown> {
  return {
    name: 'Hello Agent',
    description: 'A simple agent that says hello.',
    protocolVersion: '0.3.0',
    version: '0.1.0',
    url: 'https://hello.example.com/a2a/jsonrpc',
    skills: [{ id: 'chat', name: 'Chat', description: 'Say hello', tags: ['chat'] }],
    capabilities: { pushNotifications: false },
    defaultInputModes: ['text'],
    defaultOutputModes: ['text'],
    additionalInterfaces: [
      { url: 'https://hello.example.com/a2a/jsonrpc', transport: 'JSONRPC' },
      { url: 'https://hello.example.com/a2a/rest', transport: 'HTTP+JSON' },
      { url: 'localhost:4001', transport: 'GRPC' },
    ],
  };
}

describe('skills and tags', () => {
  test('an agent with no skills (Mastra, no tools) is accepted with a warning', () => {
    const r = accepted(parseAgentCard(JSON.stringify(mastraCard())));
    assert.deepEqual(r.card!.skills, []);
    assert.match(warningAt(r, 'skills')?.message ?? '', /is empty: the agent offers no skill, so it matches no tag need/);
  });

  test('a 1.0 card with "skills": [] is accepted the same way', () => {
    const r = accepted(parseAgentCard(JSON.stringify({ ...v1Card(1), supportedInterfaces: [{ url: 'https://w.example.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }], skills: [] })));
    assert.deepEqual(r.card!.skills, []);
    assert.ok(warningAt(r, 'skills'));
  });

  test('a skill with "tags": [] is accepted with a warning, and keeps an empty tag list', () => {
    const raw = mastraCard();
    raw.skills = [
      { id: 'forecast', name: 'Forecast', description: 'Gives a forecast.', tags: ['weather'] },
      { id: 'chat', name: 'Chat', description: 'Small talk.', tags: [] },
    ];
    const r = accepted(parseAgentCard(JSON.stringify(raw)));
    assert.deepEqual(r.card!.skills.map((s) => s.tags), [['weather'], []]);
    assert.match(warningAt(r, 'skills[1].tags')?.message ?? '', /is empty: this skill matches no tag need/);
  });

  test('a missing skills member, or missing tags, is still refused', () => {
    const noSkills = mastraCard();
    delete noSkills.skills;
    assert.equal(parseAgentCard(JSON.stringify(noSkills)).problems[0]?.path, 'skills');
    const noTags = { ...mastraCard(), skills: [{ id: 'a', name: 'A', description: '' }] };
    const r = parseAgentCard(JSON.stringify(noTags));
    assert.equal(r.stage, 'schema');
    assert.deepEqual(r.problems.map((p) => p.path), ['skills[0].tags']);
  });
});

/** BeeAI Framework 0.1.30's `A2AServer` default card: protocolVersion "0.1.0", one skill with no tags. */
function beeaiCard(): Record<string, unknown> {
  return {
    name: 'BeeAI',
    description: 'A helpful assistant.',
    url: 'https://beeai.example.com',
    version: '1.0.0',
    protocolVersion: '0.1.0',
    defaultInputModes: ['text'],
    defaultOutputModes: ['text', 'task-status'],
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    skills: [{ id: 'BeeAI', name: 'BeeAI', description: 'A helpful assistant.', tags: [] }],
    supportsAuthenticatedExtendedCard: false,
  };
}

describe('unknown protocol versions', () => {
  test('BeeAI\'s "0.1.0" is a warning at its path, read and called by the 0.3 rules (the closest)', () => {
    const r = accepted(parseAgentCard(JSON.stringify(beeaiCard())));
    assert.equal(r.protocolVersion, '0.3');
    assert.equal(
      warningAt(r, 'protocolVersion')?.message,
      '"0.1.0" is not an A2A version this product knows (0.2, 0.3, 1.x); the card is read by the A2A 0.3 rules (the closest, by its shape) and called as 0.3',
    );
    assert.deepEqual(r.card!.supportedInterfaces.map((i) => [i.url, i.protocolVersion]), [['https://beeai.example.com', '0.3']]);
    assert.ok(warningAt(r, 'skills[0].tags'));
  });

  test('known versions, with or without a patch, raise no such warning', () => {
    for (const v of ['0.3.0', '0.3', '1.0']) {
      const r = accepted(parseAgentCard(JSON.stringify({ ...mastraCard(), protocolVersion: v })));
      assert.equal(warningAt(r, 'protocolVersion'), undefined, v);
    }
  });

  test('a 1.0 interface in an unknown version is a warning at its path, and never the interface called', () => {
    const raw = {
      ...v1Card(1),
      supportedInterfaces: [
        { url: 'https://w.example.com/a2a/v2', protocolBinding: 'JSONRPC', protocolVersion: '2.0' },
        { url: 'https://w.example.com/a2a/v1', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
      ],
    };
    const r = accepted(parseAgentCard(JSON.stringify(raw)));
    assert.match(warningAt(r, 'supportedInterfaces[0].protocolVersion')?.message ?? '', /^"2\.0" is not an A2A version this product knows \(0\.2, 0\.3, 1\.x\); the card is read by the A2A 1\.0 rules \(the closest\), and this interface is never called$/);
    assert.equal(preferredInterface(r.card!)?.url, 'https://w.example.com/a2a/v1');
  });
});

describe('modes', () => {
  test('"task-status" (a2a-js samples) is ignored with a warning; the card is accepted', () => {
    const r = accepted(parseAgentCard(JSON.stringify(sdkSampleCard())));
    assert.deepEqual(r.card!.defaultOutputModes, ['text']);
    assert.deepEqual(r.card!.skills[0]!.outputModes, ['text']);
    assert.match(warningAt(r, 'defaultOutputModes[1]')?.message ?? '', /"task-status" is neither a media type .* this mode is ignored/);
    assert.ok(warningAt(r, 'skills[0].outputModes[1]'));
  });

  test('a skill whose only mode is ignored falls back to the card defaults, and says so', () => {
    const raw = sdkSampleCard();
    (raw.skills as Array<Record<string, unknown>>)[0]!.outputModes = ['task-status'];
    const r = accepted(parseAgentCard(JSON.stringify(raw)));
    assert.equal(r.card!.skills[0]!.outputModes, undefined);
    assert.match(warningAt(r, 'skills[0].outputModes')?.message ?? '', /the skill uses the card's default modes/);
  });

  test('a mode that is not a string, or an empty one, is still a schema problem', () => {
    const r = parseAgentCard(JSON.stringify({ ...sdkSampleCard(), defaultInputModes: ['text', 7, ''] }));
    assert.equal(r.stage, 'schema');
    assert.deepEqual(r.problems.map((p) => p.path), ['defaultInputModes[1]', 'defaultInputModes[2]']);
  });
});

describe('empty documentation and icon URLs', () => {
  test('"" is treated as absent (the SDK canonical form drops it), with a warning', () => {
    for (const card of [{ ...mastraCard(), documentationUrl: '', iconUrl: '' }, { ...v1Card(1), documentationUrl: '', iconUrl: '' }]) {
      const r = accepted(parseAgentCard(JSON.stringify(card), dev));
      assert.equal(r.card!.documentationUrl, undefined);
      assert.equal(r.card!.iconUrl, undefined);
      assert.match(warningAt(r, 'documentationUrl')?.message ?? '', /is empty; treated as absent/);
      assert.ok(warningAt(r, 'iconUrl'));
      assert.ok(!r.urls.some((u) => u.role === 'documentation' || u.role === 'icon'), 'nothing to list');
    }
  });

  test('a documentation URL that is not a URL is still refused', () => {
    assert.equal(parseAgentCard(JSON.stringify({ ...mastraCard(), documentationUrl: 'see the wiki' })).problems[0]?.path, 'documentationUrl');
  });
});

describe('a provider without url', () => {
  // reactive-agents publishes `provider: { organization }` (the issue 39 field report); both
  // fields are required (0.3 schema `AgentProvider.required`, 1.0 proto REQUIRED).
  test('is dropped with a warning at provider.url; the card is accepted (0.3 and 1.0)', () => {
    for (const card of [{ ...mastraCard(), provider: { organization: 'Reactive Agents' } }, { ...v1Card(1), provider: { organization: 'Reactive Agents' } }]) {
      const r = accepted(parseAgentCard(JSON.stringify(card), dev));
      assert.equal(r.card!.provider, undefined);
      assert.match(warningAt(r, 'provider.url')?.message ?? '', /missing \(a provider needs one\); the provider is left out/);
      assert.ok(!r.urls.some((u) => u.role === 'provider'), 'no provider URL listed');
    }
  });

  test('a provider with both fields is kept; a url that is not a URL, or a missing organization, is still refused', () => {
    const kept = accepted(parseAgentCard(JSON.stringify(mastraCard()), dev));
    assert.deepEqual(kept.card!.provider, { organization: 'Mastra', url: 'https://mastra.ai' });
    assert.equal(warningAt(kept, 'provider.url'), undefined);
    assert.deepEqual(parseAgentCard(JSON.stringify({ ...mastraCard(), provider: { organization: 'X', url: 'not a url' } })).problems.map((p) => p.path), ['provider.url']);
    assert.deepEqual(parseAgentCard(JSON.stringify({ ...mastraCard(), provider: { url: 'https://x.example.com' } })).problems.map((p) => p.path), ['provider.organization']);
  });
});

describe('interfaces the client never calls', () => {
  test('the a2a-js README card: the host:port gRPC target is listed as not called, not judged, and the card passes', () => {
    const r = accepted(parseAgentCard(JSON.stringify(readmeCard()), { hostPolicy: allowOnly('https://hello.example.com') }));
    const grpc = r.urls.find((u) => u.path === 'additionalInterfaces[2].url');
    assert.deepEqual(grpc, {
      path: 'additionalInterfaces[2].url',
      url: 'localhost:4001',
      role: 'interface',
      called: false,
      binding: 'GRPC',
      reason: 'gRPC interfaces are never called by this client',
    });
    assert.equal(grpc!.allowed, undefined, 'not judged');
    assert.match(warningAt(r, 'additionalInterfaces[2].url')?.message ?? '', /localhost:4001 \(GRPC\) is not called/);
    assert.deepEqual(
      r.urls.filter((u) => u.called).map((u) => [u.path, u.allowed]),
      [
        ['url', true],
        ['additionalInterfaces[0].url', true],
        ['additionalInterfaces[1].url', true],
      ],
    );
  });

  test('the same in a 1.0 card (the SDK compat sample), and for a binding nobody knows', () => {
    const raw = {
      ...v1Card(1),
      supportedInterfaces: [
        { url: 'https://hello.example.com/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
        { url: 'localhost:4001', protocolBinding: 'GRPC', protocolVersion: '1.0' },
        { url: 'http://grpc.internal.example:8443', protocolBinding: 'GRPC', protocolVersion: '1.0' },
        { url: 'wss://hello.example.com/ws', protocolBinding: 'WEBSOCKET', protocolVersion: '1.0' },
      ],
    };
    const r = accepted(parseAgentCard(JSON.stringify(raw), { hostPolicy: allowOnly('https://hello.example.com') }));
    assert.deepEqual(
      r.urls.filter((u) => u.role === 'interface').map((u) => [u.url, u.called]),
      [
        ['https://hello.example.com/a2a/jsonrpc', true],
        ['localhost:4001', false],
        ['http://grpc.internal.example:8443', false],
        ['wss://hello.example.com/ws', false],
      ],
    );
    assert.match(r.urls[3]!.reason ?? '', /"WEBSOCKET" is not one this client speaks/);
    assert.deepEqual(r.warnings.map((w) => w.path), ['supportedInterfaces[1].url', 'supportedInterfaces[2].url', 'supportedInterfaces[3].url']);
    assert.equal(r.card!.supportedInterfaces.length, 4, 'the model keeps every interface');
  });

  test('interfaces the client WILL call stay strict: http, a host off the allowlist, and a host:port JSONRPC target never passes silently', () => {
    const httpRpc = parseAgentCard(JSON.stringify({ ...readmeCard(), additionalInterfaces: [{ url: 'http://hello.example.com/rpc', transport: 'jsonrpc' }] }));
    assert.equal(httpRpc.stage, 'policy');
    assert.equal(httpRpc.code, 'ERR_INSECURE_INTERFACE');
    assert.deepEqual(httpRpc.problems.map((p) => p.path), ['additionalInterfaces[0].url'], 'the transport is matched case-insensitively, as ADK does');

    const offList = parseAgentCard(JSON.stringify(readmeCard()), { hostPolicy: allowOnly('https://other.example.com') });
    assert.equal(offList.code, 'ERR_HOST_NOT_ALLOWED');
    assert.deepEqual(offList.problems.map((p) => p.path), ['url', 'additionalInterfaces[0].url', 'additionalInterfaces[1].url']);

    const target = accepted(parseAgentCard(JSON.stringify({ ...readmeCard(), additionalInterfaces: [{ url: 'localhost:4001', transport: 'JSONRPC' }] })));
    assert.equal(target.urls.find((u) => u.url === 'localhost:4001')?.called, false);
    assert.match(warningAt(target, 'additionalInterfaces[0].url')?.message ?? '', /host:port target with no scheme/);
  });

  test('a card whose every interface is gRPC passes with a warning that it cannot be reached', () => {
    const raw = { ...v1Card(1), supportedInterfaces: [{ url: 'grpc.example.com:443', protocolBinding: 'GRPC', protocolVersion: '1.0' }] };
    const r = accepted(parseAgentCard(JSON.stringify(raw), { hostPolicy: allowOnly() }));
    assert.match(warningAt(r, 'supportedInterfaces')?.message ?? '', /no interface is one this client calls/);
  });

  test('a URL that is neither absolute nor host:port is still a schema problem', () => {
    const r = parseAgentCard(JSON.stringify({ ...readmeCard(), additionalInterfaces: [{ url: '/a2a/grpc', transport: 'GRPC' }] }));
    assert.equal(r.stage, 'schema');
    assert.deepEqual(r.problems.map((p) => p.path), ['additionalInterfaces[0].url']);
  });
});

describe('a 1.0 card with the SDK\'s 0.3 mirror interfaces (duplicateInterfacesForLegacy)', () => {
  let peer: RunningPeer;
  const interfaces = (port: number) =>
    duplicateInterfacesForLegacy(
      [
        { url: `http://127.0.0.1:${port}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' },
        { url: `http://127.0.0.1:${port}/a2a/rest`, protocolBinding: 'HTTP+JSON', tenant: '', protocolVersion: '1.0' },
      ],
      ['JSONRPC', 'HTTP+JSON'],
    );
  before(async () => {
    peer = await startV1CardServer({ card: (port) => v1Card(port, { supportedInterfaces: interfaces(port) }) });
  });
  after(() => peer.close());

  test('the mirrors are kept, and ADK gets a 0.3 card converted over them', async () => {
    const res = await request(peer.cardUrl, { headers: { 'a2a-version': '1.0' } });
    const body = Buffer.from(await res.body.arrayBuffer());
    const served = JSON.parse(body.toString('utf8')) as { supportedInterfaces: Array<{ protocolVersion: string }> };
    assert.deepEqual(served.supportedInterfaces.map((i) => i.protocolVersion), ['1.0', '1.0', '0.3', '0.3'], 'what the SDK serves');

    const r = accepted(parseAgentCard(body, dev));
    assert.deepEqual(
      r.card!.supportedInterfaces.map((i) => [i.protocolBinding, new URL(i.url).pathname, i.protocolVersion]),
      [
        ['JSONRPC', '/a2a/jsonrpc', '1.0'],
        ['HTTP+JSON', '/a2a/rest', '1.0'],
        ['JSONRPC', '/a2a/jsonrpc', '0.3'],
        ['HTTP+JSON', '/a2a/rest', '0.3'],
      ],
    );
    assert.ok(!r.warnings.some((w) => /repeats/.test(w.message)), 'a mirror is not a repeat');

    const adk = toAdkCard(r.card!);
    assert.equal(adk.kind, 'adk');
    if (adk.kind !== 'adk') return;
    assert.equal(adk.source, 'converted');
    assert.equal(adk.card.url, `http://127.0.0.1:${peer.port}/a2a/jsonrpc`);
    assert.deepEqual(adk.card.additionalInterfaces, [
      { url: `http://127.0.0.1:${peer.port}/a2a/jsonrpc`, transport: 'JSONRPC' },
      { url: `http://127.0.0.1:${peer.port}/a2a/rest`, transport: 'HTTP+JSON' },
    ]);
    const agent = new RemoteA2AAgent({ name: 'warranty', description: 'Reviewed text.', agentCard: adk.card });
    assert.equal(agent.name, 'warranty');
  });

  test('an exact repeat (same binding, URL, tenant and version) is still kept once', () => {
    const raw = { ...v1Card(1), supportedInterfaces: [...interfaces(1), interfaces(1)[0]!] };
    const r = accepted(parseAgentCard(JSON.stringify(raw), dev));
    assert.equal(r.card!.supportedInterfaces.length, 4);
    assert.match(warningAt(r, 'supportedInterfaces[4]')?.message ?? '', /repeats the JSONRPC interface .* \(A2A 1\.0\); it is kept once/);
  });
});

describe('warnings survive the whole check', () => {
  test('checkCard keeps every warning with its path', async () => {
    const r = await checkCard(JSON.stringify({ ...sdkSampleCard(), skills: [], documentationUrl: '' }));
    assert.equal(r.ok, true);
    assert.deepEqual(r.warnings.map((w) => w.path).sort(), ['defaultOutputModes[1]', 'documentationUrl', 'skills']);
  });
});
