/**
 * Interop matrix, server side: third-party A2A servers installed from npm (see peers.ts and
 * mastra-peer.ts), each driven through the product as a user drives it:
 *
 * 1. `a2a-discovery probe <url> --allow-loopback --json` (the built CLI) accepts the card, with
 *    exactly the expected warnings;
 * 2. `a2a-discovery serve` (a child process over a generated YAML file) admits it into its
 *    snapshot next to a decoy agent;
 * 3. `POST /api/chat` with words of the peer's reviewed tag is routed to it (not the decoy) and
 *    round-trips through the remote agent of the card's first interface (A2A 1.0 §8.3.2):
 *    ADK's `RemoteA2AAgent` (0.3 client: the peer sees `message/stream` with `A2A-Version: 0.3`)
 *    for 0.2/0.3 peers, the project's `V1RemoteAgent` (`SendStreamingMessage`,
 *    `A2A-Version: 1.0`) for 1.x peers, those that mirror their 1.0 interfaces at 0.3 after them
 *    included.
 *
 * The matrix with versions and notes is in docs/interop.md.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { RunningV1Server } from '../helpers/a2a-v1-server.js';
import { startV1Server } from '../helpers/a2a-v1-server.js';
import type { InteropPeer } from './peers.js';
import { startA2aJs025Server, startA2aJs0314Server, startA2aJs1xCompatServer, startA2aJs1xServer } from './peers.js';
import type { MastraPeer } from './mastra-peer.js';
import { startMastraPeer } from './mastra-peer.js';
import type { StaticAgent } from './harness.js';
import { admitted, chat, probe, serve, warningPaths } from './harness.js';

/** A second agent in every snapshot, so that routing to the peer is a decision, not the only choice. */
let decoy: RunningV1Server;
const decoyAgent = (): StaticAgent => ({ name: 'decoy_agent', url: decoy.baseUrl, description: 'Answers warranty questions.', tags: ['warranty'] });
const decoyTag = { tag: 'warranty', description: 'Warranty status.', keywords: ['warranty'] };

before(async () => {
  decoy = await startV1Server({ prefix: 'decoy' });
});
after(async () => {
  await decoy.close();
});

interface Expectation {
  /** What probe is pointed at (base URL or card URL). */
  target: string;
  /** The static entry for serve. */
  agent: StaticAgent;
  /** Reviewed tag of the peer and the words that route to it. */
  tag: { tag: string; description: string; keywords: string[] };
  protocolVersion: '0.2' | '0.3' | '1.0';
  warnings: string[];
  message: string;
  reply: string;
  /** The JSON-RPC method and A2A-Version header the peer must see for the chat turn. */
  wire: { method: string; version: string | undefined };
}

async function runMatrixRow(peer: InteropPeer, e: Expectation): Promise<void> {
  // 1. probe
  const p = await probe(e.target);
  assert.equal(p.code, 0, `probe exit code; report: ${JSON.stringify(p.report)}`);
  assert.equal(p.report.accepted, true);
  assert.equal(p.report.protocolVersion, e.protocolVersion);
  assert.deepEqual(warningPaths(p.report), [...e.warnings].sort(), `warnings: ${JSON.stringify(p.report.warnings, null, 1)}`);

  // 2. serve admits it
  const s = await serve([e.agent, decoyAgent()], [e.tag, decoyTag]);
  try {
    const { agent, endpoints } = await admitted(s, e.agent.name);
    assert.ok(agent, `${e.agent.name} not in the snapshot; endpoints: ${JSON.stringify(endpoints, null, 1)}`);
    assert.equal(agent.protocolVersion, e.protocolVersion);
    assert.deepEqual(agent.tags, [e.tag.tag]);

    // 3. a chat turn round-trips through the right remote agent
    const before = peer.calls.length;
    const r = await chat(s, `interop-${e.agent.name}`, e.message);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.error ?? undefined, undefined, `chat error: ${JSON.stringify(r.body)}`);
    assert.equal(r.body.author, e.agent.name);
    assert.deepEqual(r.body.agents, [e.agent.name], 'the turn went through that agent alone');
    assert.match(r.body.reply, new RegExp(e.reply.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.deepEqual(r.body.notices, [], 'no fallback, no missing final answer');
    const wire = peer.calls.slice(before).map((c) => ({ method: c.method, version: c.version }));
    assert.deepEqual(wire, [e.wire], `calls the peer received: ${JSON.stringify(wire)}`);
  } finally {
    assert.equal(await s.stop(), 0, `serve exit code after SIGTERM (stderr: ${s.stderr()})`);
  }
}

const ADK_03 = { method: 'message/stream', version: '0.3' };
const V1_STREAM = { method: 'SendStreamingMessage', version: '1.0' };
const sample = { tag: 'sample', description: 'Sample conversations.', keywords: ['hello'] };

describe('interop matrix: third-party A2A servers', () => {
  test('a2a-js 0.2.5 server: card at agent.json only', async () => {
    const peer = await startA2aJs025Server('movies');
    try {
      await runMatrixRow(peer, {
        target: peer.baseUrl,
        agent: { name: 'movie_agent', url: peer.baseUrl, description: 'Answers questions about movies.', tags: ['movies'] },
        tag: { tag: 'movies', description: 'Movies and actors.', keywords: ['movie', 'film'] },
        protocolVersion: '0.2',
        warnings: [],
        message: 'Recommend a good movie',
        reply: 'movies: Recommend a good movie',
        wire: ADK_03,
      });
    } finally {
      await peer.close();
    }
  });

  test('a2a-js 0.3.14 server: sample agent card as published', async () => {
    const peer = await startA2aJs0314Server('sample');
    try {
      await runMatrixRow(peer, {
        target: peer.baseUrl,
        agent: { name: 'sample_agent', url: peer.baseUrl, description: 'Says hello.', tags: ['sample'] },
        tag: sample,
        protocolVersion: '0.3',
        // "task-status" is not a media type: ignored, with a warning at each place it appears.
        warnings: ['defaultOutputModes[1]', 'skills[0].outputModes[1]'],
        message: 'hello world',
        reply: 'sample: hello world',
        wire: ADK_03,
      });
    } finally {
      await peer.close();
    }
  });

  for (const version of ['1.0.1', '1.3.0'] as const) {
    test(`a2a-js ${version} server: compat sample with legacy mirror interfaces (duplicateInterfacesForLegacy)`, async () => {
      const peer = await startA2aJs1xCompatServer(version, 'compat');
      try {
        await runMatrixRow(peer, {
          target: peer.baseUrl,
          agent: { name: 'compat_agent', url: peer.baseUrl, description: 'Says hello.', tags: ['sample'] },
          tag: sample,
          protocolVersion: '1.0',
          // documentationUrl "" is treated as absent; the two gRPC interfaces (1.0 and its 0.3 mirror) are never called.
          warnings: ['documentationUrl', 'defaultOutputModes[1]', 'skills[0].outputModes[1]', 'supportedInterfaces[2].url', 'supportedInterfaces[5].url'],
          message: 'hello there',
          reply: 'compat: hello there',
          // The card lists its 1.0 interfaces first: the 1.x client calls the first (A2A 1.0 §8.3.2).
          wire: V1_STREAM,
        });
      } finally {
        await peer.close();
      }
    });

    test(`a2a-js ${version} server: pure 1.0 sample agent (no legacy compatibility)`, async () => {
      const peer = await startA2aJs1xServer(version, 'v1');
      try {
        await runMatrixRow(peer, {
          target: peer.baseUrl,
          agent: { name: 'v1_sample_agent', url: peer.baseUrl, description: 'Says hello.', tags: ['sample'] },
          tag: sample,
          protocolVersion: '1.0',
          warnings: ['documentationUrl', 'defaultOutputModes[1]', 'skills[0].outputModes[1]'],
          message: 'hello there',
          reply: 'v1: hello there',
          wire: V1_STREAM,
        });
      } finally {
        await peer.close();
      }
    });
  }

  describe('Mastra', () => {
    let mastra: MastraPeer;
    before(async () => {
      mastra = await startMastraPeer('mastra');
    });
    after(async () => {
      await mastra.close();
    });

    test('Mastra 1.71.0 A2A server: agent with a tool, card at its non-standard path (cardUrl)', async () => {
      await runMatrixRow(mastra, {
        target: mastra.cardUrl('warrantyAgent'),
        agent: { name: 'mastra_warranty', cardUrl: mastra.cardUrl('warrantyAgent'), description: 'Looks up serial numbers.', tags: ['tool'] },
        // Mastra publishes one skill per tool, id = the tool's key, tags always ["tool"].
        tag: { tag: 'tool', description: 'Serial number look-ups.', keywords: ['serial'] },
        protocolVersion: '0.3',
        warnings: [],
        message: 'look up serial 7',
        reply: 'mastra: look up serial 7',
        wire: ADK_03,
      });
    });

    test('Mastra 1.71.0 A2A server: agent without tools (skills: []), named by a static entry', async () => {
      // The card lists no skills: probe warns at `skills`; the static entry's reviewed tag stands
      // in for the missing skills (judged on the card's default modes), so serve selects it.
      await runMatrixRow(mastra, {
        target: mastra.cardUrl('plainAgent'),
        agent: { name: 'mastra_plain', cardUrl: mastra.cardUrl('plainAgent'), description: 'Answers briefly.', tags: ['tool'] },
        tag: { tag: 'tool', description: 'Tool-backed answers.', keywords: ['serial'] },
        protocolVersion: '0.3',
        warnings: ['skills'],
        message: 'look up serial 8',
        reply: 'mastra: look up serial 8',
        wire: ADK_03,
      });
    });
  });
});
