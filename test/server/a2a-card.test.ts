/**
 * The service's own agent card (packages/service/src/http/a2a/agent-card.ts): skills from the
 * snapshot's routed agents or domains with reviewed text only, the security schemes of the
 * service's own auth, and the two wire forms read by the SDKs' own card parsers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentCard } from '@a2a-js/sdk';
import { isLegacyAgentCard, parseLegacyAgentCard } from '@a2a-js/sdk/compat/v0_3/client';
import type { Snapshot } from 'a2a-discovery';
import { buildAgentCards } from '../../packages/service/src/http/a2a/agent-card.js';

/** Only the fields the card reads; the remote card's own text must never show. */
const agent = (localName: string, tags: string[], domain?: string) => ({
  localName,
  description: `Reviewed: ${localName}.`,
  tags,
  ...(domain !== undefined && { domain }),
  card: { name: 'REMOTE NAME', description: 'REMOTE TEXT, never shown', skills: [{ id: 'x', name: 'x', description: 'REMOTE SKILL', tags: ['llm'] }] },
});
const flat = { version: 3, digest: 'd', createdAt: 0, agents: [agent('billing_agent', ['billing']), agent('returns_agent', ['returns', 'billing'])] } as unknown as Snapshot;
const vocabulary = [
  { tag: 'billing', keywords: ['invoice', 'charge'], examples: ['Why was I charged twice?'] },
  { tag: 'returns', keywords: ['return', 'refund', 'label', 'exchange', 'box', 'ship', 'parcel', 'store'] },
];
const base = { name: 'desk', description: 'The front desk.', version: '1.2.3', baseUrl: 'https://discovery.example', vocabulary };

describe('the orchestrator card', () => {
  test('one skill per routed agent: local name, reviewed description and tags, the vocabulary’s examples then keywords (at most 8)', () => {
    const { v1 } = buildAgentCards(flat, { ...base, auth: { token: false } });
    const skills = v1['skills'] as Array<{ id: string; name: string; description: string; tags: string[]; examples?: string[] }>;
    assert.deepEqual(
      skills.map((s) => [s.id, s.name, s.description, s.tags]),
      [
        ['billing_agent', 'billing_agent', 'Reviewed: billing_agent.', ['billing']],
        ['returns_agent', 'returns_agent', 'Reviewed: returns_agent.', ['returns', 'billing']],
      ],
    );
    assert.deepEqual(skills[0]?.examples, ['Why was I charged twice?', 'invoice', 'charge']);
    assert.equal(skills[1]?.examples?.length, 8);
    assert.ok(!JSON.stringify(v1).includes('REMOTE'), 'no remote card text');
  });

  test('with routing domains: one skill per domain, its agents’ tags', () => {
    const snapshot = { ...flat, agents: [agent('billing_agent', ['billing'], 'money'), agent('returns_agent', ['returns'], 'goods')], domains: [{ name: 'money', description: 'Money questions.', agents: ['billing_agent'] }, { name: 'goods', description: 'Goods questions.', agents: ['returns_agent'] }] } as unknown as Snapshot;
    const skills = buildAgentCards(snapshot, { ...base, auth: { token: false } }).v1['skills'] as Array<{ id: string; description: string; tags: string[] }>;
    assert.deepEqual(skills.map((s) => [s.id, s.description, s.tags]), [['money', 'Money questions.', ['billing']], ['goods', 'Goods questions.', ['returns']]]);
  });

  test('before the first snapshot: no skill, still a valid card', () => {
    const { v1 } = buildAgentCards(undefined, { ...base, auth: { token: false } });
    assert.deepEqual(v1['skills'], []);
  });

  test('the 1.0 form: interfaces for 1.0 and 0.3 on one endpoint, streaming, text/plain, read as 1.0 by the SDK', () => {
    const { v1 } = buildAgentCards(flat, { ...base, auth: { token: false } });
    assert.equal(isLegacyAgentCard(v1), false);
    const card = AgentCard.fromJSON(v1);
    assert.deepEqual(card.supportedInterfaces.map((i) => [i.url, i.protocolBinding, i.protocolVersion]), [
      ['https://discovery.example/api/a2a', 'JSONRPC', '1.0'],
      ['https://discovery.example/api/a2a', 'JSONRPC', '0.3'],
    ]);
    assert.equal(card.capabilities?.streaming, true);
    assert.deepEqual([card.defaultInputModes, card.defaultOutputModes], [['text/plain'], ['text/plain']]);
    assert.deepEqual([card.name, card.description, card.version], ['desk', 'The front desk.', '1.2.3']);
    assert.equal(v1['securitySchemes'], undefined);
    assert.equal(v1['url'], undefined);
  });

  test('the 0.3 form: url, protocolVersion 0.3.0 and JSONRPC, which the SDK’s 0.3 translator accepts', () => {
    const { v03 } = buildAgentCards(flat, { ...base, auth: { token: false } });
    assert.deepEqual([v03['url'], v03['protocolVersion'], v03['preferredTransport']], ['https://discovery.example/api/a2a', '0.3.0', 'JSONRPC']);
    const { supportedInterfaces, ...legacyOnly } = v03;
    assert.equal(Array.isArray(supportedInterfaces), true);
    assert.equal(isLegacyAgentCard(legacyOnly), true);
    const translated = parseLegacyAgentCard(legacyOnly);
    assert.equal(translated.supportedInterfaces[0]?.url, 'https://discovery.example/api/a2a');
    assert.equal(translated.skills.length, 2);
  });

  test('security from the service’s own auth: bearer for the static token, openIdConnect for people, either one suffices', () => {
    const both = buildAgentCards(flat, { ...base, auth: { token: true, oidcIssuer: 'https://login.example/realms/a/' } });
    const card = AgentCard.fromJSON(both.v1);
    assert.deepEqual(card.securitySchemes['bearer']?.scheme?.$case, 'httpAuthSecurityScheme');
    const oidc = card.securitySchemes['oidc']?.scheme;
    assert.equal(oidc?.$case, 'openIdConnectSecurityScheme');
    assert.equal(oidc.$case === 'openIdConnectSecurityScheme' && oidc.value.openIdConnectUrl, 'https://login.example/realms/a/.well-known/openid-configuration');
    assert.deepEqual(card.securityRequirements.map((r) => Object.keys(r.schemes)), [['bearer'], ['oidc']]);
    assert.deepEqual(both.v03['security'], [{ bearer: [] }, { oidc: [] }]);
    assert.deepEqual(both.v03['securitySchemes'], {
      bearer: { type: 'http', scheme: 'bearer', description: 'The service’s bearer token (server.tokenEnv / server.tokenFile).' },
      oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://login.example/realms/a/.well-known/openid-configuration', description: 'A person’s OIDC access token from this issuer, with a role the service maps (server.oidc).' },
    });
    const tokenOnly = buildAgentCards(flat, { ...base, auth: { token: true } });
    assert.deepEqual(Object.keys(tokenOnly.v1['securitySchemes'] as object), ['bearer']);
  });
});
