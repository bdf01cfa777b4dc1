/**
 * Interop matrix: BeeAI Framework (`beeai-framework` 0.1.30) and Strands Agents
 * (`@strands-agents/sdk` 1.19.0), servers and clients. Neither can share the root install (BeeAI's
 * peers conflict and it needs zod 3; Strands needs zod 4), so each has its own install folder,
 * test-frameworks/<name>/ (package.json, package-lock.json, .npmrc), which
 * scripts/ensure-test-deps.sh installs with `npm ci` (outside test/: `npm test` runs every
 * `*.test.ts` under test/, and those installs hold hundreds of their dependencies' own). Their code runs in a child process from that
 * folder (server.mjs, client.mjs; framework-child.ts); their models are deterministic fakes (`FakeEchoChatModel`,
 * `FakeEchoModel`) that echo the user's text.
 *
 * Servers are driven as servers.test.ts drives the others (harness.ts): `probe` accepts the card
 * with exactly the expected warnings, `serve` admits the static entry next to a decoy, and a chat
 * turn routed to it comes back with the framework's answer. Clients read the product's demo peers'
 * cards and send them a message, as clients.test.ts does with the a2a-js clients.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { DemoPeer } from '../../packages/service/src/demo/peers.js';
import { startAdkDemoAgent, startV1DemoAgent } from '../../packages/service/src/demo/peers.js';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import type { StaticAgent } from './harness.js';
import { admitted, chat, probe, serve, warningPaths } from './harness.js';
import type { ChildPeer } from './framework-child.js';
import { runFrameworkClient, startFrameworkServer } from './framework-child.js';

/** A second agent in every snapshot, so that routing to the peer is a decision, not the only choice. */
let decoy: RunningV1Server;
const decoyAgent = (): StaticAgent => ({ name: 'decoy_agent', url: decoy.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] });
const decoyTag = { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty'] };
const billing = { tag: 'billing', description: 'Invoices and charges.', keywords: ['charged', 'invoice'] };

interface Row {
  name: string;
  protocolVersion: '0.2' | '0.3';
  warnings: string[];
  reply: string;
}

/** probe → serve (static entry tagged `billing`, next to the decoy) → one chat turn routed to the peer. */
async function serverRow(peer: ChildPeer, e: Row): Promise<void> {
  const p = await probe(peer.baseUrl);
  assert.equal(p.code, 0, `probe exit code; report: ${JSON.stringify(p.report)}`);
  assert.equal(p.report.accepted, true);
  assert.equal(p.report.protocolVersion, e.protocolVersion);
  assert.deepEqual(warningPaths(p.report), [...e.warnings].sort(), `warnings: ${JSON.stringify(p.report.warnings, null, 1)}`);

  const agent: StaticAgent = { name: e.name, url: peer.baseUrl, description: 'Answers billing questions.', tags: ['billing'] };
  const s = await serve([agent, decoyAgent()], [billing, decoyTag]);
  try {
    const { agent: admittedAgent, endpoints } = await admitted(s, e.name);
    assert.ok(admittedAgent, `${e.name} not in the snapshot; endpoints: ${JSON.stringify(endpoints, null, 1)}`);
    assert.equal(admittedAgent.protocolVersion, e.protocolVersion);
    assert.deepEqual(admittedAgent.tags, ['billing']);
    assert.equal(s.dropped, 0, 'all of serve\'s output was kept');
    assert.ok(!s.stderr().includes('no longer fits'), s.stderr());

    const r = await chat(s, `interop-${e.name}`, 'Why was I charged twice?');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.error ?? undefined, undefined, `chat error: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.author, e.name);
    assert.deepEqual(r.body.agents, [e.name], 'the turn went through that agent alone');
    assert.match(r.body.reply, new RegExp(e.reply.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.deepEqual(r.body.notices, [], 'no fallback, no missing final answer');
  } finally {
    assert.equal(await s.stop(), 0, `serve exit code after SIGTERM (stderr: ${s.stderr()})`);
  }
}

before(async () => {
  decoy = await startV1Server({ prefix: 'decoy' });
});
after(async () => {
  await decoy.close();
});

describe('interop matrix: BeeAI Framework 0.1.30 A2A server', () => {
  test('default card (one skill with tags: [], protocolVersion 0.1.0): warned, admitted by a static entry, answers', async () => {
    const peer = await startFrameworkServer('beeai', 'default');
    try {
      await serverRow(peer, {
        name: 'beeai_billing',
        protocolVersion: '0.3',
        // "0.1.0" is read (and called) as 0.3; the skill has no tags; "task-status" is not a media type.
        warnings: ['protocolVersion', 'skills[0].tags', 'defaultOutputModes[1]'],
        reply: 'beeai heard: Why was I charged twice?',
      });
    } finally {
      await peer.close();
    }
  });

  test('with its own skills (tagged billing)', async () => {
    const peer = await startFrameworkServer('beeai', 'skills');
    try {
      await serverRow(peer, {
        name: 'beeai_invoices',
        protocolVersion: '0.3',
        warnings: ['protocolVersion', 'defaultOutputModes[1]'],
        reply: 'beeai heard: Why was I charged twice?',
      });
    } finally {
      await peer.close();
    }
  });
});

describe('interop matrix: BeeAI Framework 0.1.30 A2A server with its default card URL http://0.0.0.0:<port>', () => {
  const verdictOf = (endpoints: unknown[], name: string): { verdict: string; reason?: string } | undefined =>
    (endpoints as Array<{ verdict?: { verdict: string; localName?: string; reason?: string } }>).find((e) => e.verdict?.localName === name)?.verdict;

  test('probe accepts the card and warns at url: the host 0.0.0.0 is unroutable', async () => {
    const peer = await startFrameworkServer('beeai', 'zeros');
    try {
      const p = await probe(peer.baseUrl);
      assert.equal(p.report.accepted, true, JSON.stringify(p.report));
      assert.deepEqual(warningPaths(p.report), ['defaultOutputModes[1]', 'protocolVersion', 'skills[0].tags', 'url'].sort());
      assert.match(p.report.warnings.find((w) => w.path === 'url')!.message, /^the interface host 0\.0\.0\.0 is unroutable \(this network\): no client can call http:\/\/0\.0\.0\.0:\d+\/?; a static entry's interfaceUrl can name where the agent answers$/);
    } finally {
      await peer.close();
    }
  });

  test('without interfaceUrl the verdict names the unroutable host and the key to set', async () => {
    const peer = await startFrameworkServer('beeai', 'zeros');
    try {
      const s = await serve([{ name: 'beeai_zeros', url: peer.baseUrl, description: 'Answers billing questions.', tags: ['billing'] }, decoyAgent()], [billing, decoyTag]);
      try {
        const { agent, endpoints } = await admitted(s, 'beeai_zeros');
        assert.equal(agent, undefined);
        assert.deepEqual(verdictOf(endpoints, 'beeai_zeros'), {
          verdict: 'unsuitable',
          localName: 'beeai_zeros',
          reason: 'the interface host 0.0.0.0 is unroutable (this network); set interfaceUrl on its static entry to the URL where the agent answers',
          cause: 'unroutable',
        });
      } finally {
        assert.equal(await s.stop(), 0, s.stderr());
      }
    } finally {
      await peer.close();
    }
  });

  test('with the static entry\'s reviewed interfaceUrl it is called there, shown as rewritten, and answers', async () => {
    const peer = await startFrameworkServer('beeai', 'zeros');
    try {
      const agent: StaticAgent = { name: 'beeai_zeros', url: peer.baseUrl, description: 'Answers billing questions.', tags: ['billing'], interfaceUrl: peer.baseUrl };
      const s = await serve([agent, decoyAgent()], [billing, decoyTag]);
      try {
        const { agent: admittedAgent, endpoints } = await admitted(s, 'beeai_zeros');
        assert.ok(admittedAgent, `not in the snapshot; endpoints: ${JSON.stringify(endpoints, null, 1)}`);
        assert.match(admittedAgent.interfaceRewritten!.from, /^http:\/\/0\.0\.0\.0:\d+\/?$/);
        assert.equal(admittedAgent.interfaceRewritten!.to, peer.baseUrl);
        const r = await chat(s, 'interop-beeai-zeros', 'Why was I charged twice?');
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(r.body.error ?? undefined, undefined, `chat error: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.author, 'beeai_zeros');
        assert.match(r.body.reply, /beeai heard: Why was I charged twice\?/);
      } finally {
        assert.equal(await s.stop(), 0, s.stderr());
      }
    } finally {
      await peer.close();
    }
  });
});

describe('interop matrix: Strands Agents 1.19.0 A2A server (a2a/express)', () => {
  test('default card (protocolVersion 0.2.0, skills: []): admitted by a static entry, answers', async () => {
    const peer = await startFrameworkServer('strands', 'default');
    try {
      await serverRow(peer, {
        name: 'strands_billing',
        protocolVersion: '0.2',
        warnings: ['skills'],
        reply: 'strands heard: Why was I charged twice?',
      });
    } finally {
      await peer.close();
    }
  });

  test('with its own skills (tagged billing)', async () => {
    const peer = await startFrameworkServer('strands', 'skills');
    try {
      await serverRow(peer, {
        name: 'strands_invoices',
        protocolVersion: '0.2',
        warnings: [],
        reply: 'strands heard: Why was I charged twice?',
      });
    } finally {
      await peer.close();
    }
  });
});

describe('interop matrix: BeeAI and Strands A2A clients against the demo peers', () => {
  let adk: DemoPeer;
  let v1: DemoPeer;
  before(async () => {
    const skills = (tag: string) => [{ id: `${tag}-skill`, name: tag, description: `Handles ${tag}.`, tags: [tag] }];
    adk = await startAdkDemoAgent({ name: 'billing', cardName: 'Billing Agent', skills: skills('billing'), reply: (t) => `billing heard: ${t}`, maxAgeSeconds: 60 });
    v1 = await startV1DemoAgent({ name: 'warranty', cardName: 'Warranty Agent', skills: skills('warranty'), reply: (t) => `warranty heard: ${t}`, maxAgeSeconds: 60 });
  });
  after(async () => {
    await Promise.all([adk.close(), v1.close()]);
  });

  test('beeai client: ADK demo peer (A2A 0.3) reads its card and answers (its result quirk pinned)', async () => {
    const answer = await runFrameworkClient('beeai', adk.baseUrl, 'Why was I charged twice?');
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    assert.deepEqual(answer.card, { name: 'Billing Agent', protocolVersion: '0.3.0' });
    // The peer's answer reaches the client in the stream's events...
    assert.ok(answer.streamed?.includes('billing heard: Why was I charged twice?'), JSON.stringify(answer));
    // ...but A2AAgent 0.1.30 builds its result from the stream's Task event (sent first, before the
    // answer: its history holds only the user's message), so the run's result is the user's own
    // text. BeeAI's side; docs/interop.md. Pinned so that a fix upstream shows here.
    assert.equal(answer.reply, 'Why was I charged twice?');
  });

  test('strands client: ADK demo peer (A2A 0.3) reads its card and answers', async () => {
    const answer = await runFrameworkClient('strands', adk.baseUrl, 'Why was I charged twice?');
    assert.equal(answer.error, undefined, JSON.stringify(answer));
    assert.deepEqual(answer.card, { name: 'Billing Agent', protocolVersion: '0.3.0' });
    assert.match(answer.reply ?? '', /billing heard: Why was I charged twice\?/);
  });

  // Both clients are @a2a-js/sdk 0.3 clients: a card that lists only 1.0 interfaces has no `url`
  // for them (the product reaches such peers with its own V1RemoteAgent; docs/remote-agents.md).
  const ERRORS_V1_ONLY = {
    beeai: /Can not load agent card: Provided Agent Card does not contain a valid 'url'/,
    strands: /No compatible transport found/,
  };
  for (const framework of ['beeai', 'strands'] as const) {

    test(`${framework} client: 1.0-only demo peer is out of its reach (a 0.3 client; the card has no url)`, async () => {
      const answer = await runFrameworkClient(framework, v1.baseUrl, 'Is serial 7 covered?');
      assert.equal(answer.reply, undefined, JSON.stringify(answer));
      assert.match(answer.error ?? '', ERRORS_V1_ONLY[framework], JSON.stringify(answer));
    });
  }
});
