import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { classifyAgentChange, MAX_REASONS, type ClassifiedAgent } from '../../packages/core/src/snapshot/change-impact.js';
import type { TransportOptions } from '../../packages/core/src/sources/index.js';
import { entryFor, rawCard, type SkillSpec } from '../match/fixtures.js';

const ORIGIN = 'https://returns.example.com';

const SKILLS: SkillSpec[] = [
  { id: 'refunds', tags: ['returns', 'refunds'], inputModes: ['text/plain', 'image/png'], examples: ['Refund order 42'] },
  { id: 'labels', tags: ['returns'] },
];

/** An agent over a real parsed card (the fixtures' 1.0 card: bearer required, streaming, JSONRPC interface). */
function agent(options: { skills?: SkillSpec[]; overrides?: Record<string, unknown>; tags?: string[]; transport?: TransportOptions } = {}): ClassifiedAgent {
  const card = entryFor(`${ORIGIN}/`, rawCard(ORIGIN, { skills: options.skills ?? SKILLS, overrides: options.overrides })).card;
  return { card, localName: 'returns', tags: options.tags ?? ['returns'], ...(options.transport !== undefined && { transport: options.transport }) };
}

const TWO_INTERFACES = [
  { url: `${ORIGIN}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'eu' },
  { url: `${ORIGIN}/a2a/us`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'us' },
];

function assertBreaking(before: ClassifiedAgent | undefined, after: ClassifiedAgent | undefined, reason: string): void {
  const v = classifyAgentChange(before, after);
  assert.equal(v.impact, 'breaking', JSON.stringify(v.reasons));
  assert.ok(v.reasons.includes(reason), `expected ${JSON.stringify(reason)} among ${JSON.stringify(v.reasons)}`);
}

function assertCompatible(before: ClassifiedAgent | undefined, after: ClassifiedAgent | undefined, reasons: string[]): void {
  assert.deepEqual(classifyAgentChange(before, after), { impact: 'compatible', reasons });
}

describe('classifyAgentChange: breaking', () => {
  test('a skill removed', () => {
    assertBreaking(agent(), agent({ skills: [SKILLS[0]!] }), 'skill "labels" removed');
  });

  test('a tag removed from a skill, and from the reviewed tags', () => {
    assertBreaking(agent(), agent({ skills: [{ ...SKILLS[0]!, tags: ['returns'] }, SKILLS[1]!] }), 'tag "refunds" removed from skill "refunds"');
    assertBreaking(agent({ tags: ['returns', 'refunds'] }), agent({ tags: ['returns'] }), 'tag "refunds" removed from the agent\'s reviewed tags');
  });

  test("an input mode removed from a skill, an output mode from the card's defaults", () => {
    assertBreaking(agent(), agent({ skills: [{ ...SKILLS[0]!, inputModes: ['text/plain'] }, SKILLS[1]!] }), 'input mode "image/png" removed from skill "refunds"');
    assertBreaking(agent(), agent({ overrides: { defaultOutputModes: ['text/plain'] } }), 'output mode "application/json" removed from the card\'s default modes');
  });

  test('a mode written differently (text for text/plain) is not removed', () => {
    assertCompatible(agent(), agent({ overrides: { defaultInputModes: ['text'] } }), ['other card details changed']);
  });

  test('a security requirement added, or changed (scopes), or a scheme changed', () => {
    const open = agent({ overrides: { securitySchemes: {}, securityRequirements: [] } });
    const oauth = (scopes: string[]) =>
      agent({
        overrides: {
          securitySchemes: { oauth2: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: 'https://auth.example.com/token', scopes: { read: 'r', write: 'w' } } } } } },
          securityRequirements: [{ schemes: { oauth2: { list: scopes } } }],
        },
      });
    assertBreaking(open, oauth([]), 'security requirement added: oauth2');
    assertBreaking(oauth(['read']), oauth(['read', 'write']), 'security requirement changed: oauth2 (scopes read) became oauth2 (scopes read, write)');
    const jwt = agent({ overrides: { securitySchemes: { bearer: { httpAuthSecurityScheme: { scheme: 'bearer', bearerFormat: 'opaque' } } } } });
    assertBreaking(agent(), jwt, 'security scheme "bearer" changed');
  });

  test('a security requirement added on one skill', () => {
    const skills = [{ ...SKILLS[0]! }, SKILLS[1]!];
    const raw = rawCard(ORIGIN, { skills });
    (raw.skills as Record<string, unknown>[])[0]!.securityRequirements = [{ schemes: { bearer: { list: ['refunds:write'] } } }];
    const after: ClassifiedAgent = { card: entryFor(`${ORIGIN}/`, raw).card, tags: ['returns'] };
    assertBreaking(agent(), after, 'security requirement added on skill "refunds": bearer (scopes refunds:write)');
  });

  test("the chosen interface's URL, binding or protocol version changed, or gone", () => {
    const iface = (url: string, protocolBinding = 'JSONRPC', protocolVersion = '1.0') => agent({ overrides: { supportedInterfaces: [{ url, protocolBinding, protocolVersion }] } });
    assertBreaking(agent(), iface(`${ORIGIN}/v2/jsonrpc`), `interface URL changed from ${ORIGIN}/a2a/jsonrpc to ${ORIGIN}/v2/jsonrpc`);
    assertBreaking(agent(), iface(`${ORIGIN}/a2a/jsonrpc`, 'HTTP+JSON'), 'interface binding changed from JSONRPC to HTTP+JSON');
    assertBreaking(agent(), iface(`${ORIGIN}/a2a/jsonrpc`, 'JSONRPC', '0.3'), 'interface protocol version changed from "1.0" to "0.3"');
    assertBreaking(agent(), iface(`${ORIGIN}/a2a/grpc`, 'GRPC'), `interface JSONRPC ${ORIGIN}/a2a/jsonrpc gone: the card has no interface a client here calls`);
  });

  test("the chosen interface is the tenant's: a change of another tenant's interface is compatible", () => {
    const eu = { tenant: 'eu' };
    const moved = [TWO_INTERFACES[0]!, { ...TWO_INTERFACES[1]!, url: `${ORIGIN}/a2a/us2` }];
    assertCompatible(agent({ overrides: { supportedInterfaces: TWO_INTERFACES }, transport: eu }), agent({ overrides: { supportedInterfaces: moved }, transport: eu }), ['other interfaces of the card changed']);
    const us = { tenant: 'us' };
    assertBreaking(agent({ overrides: { supportedInterfaces: TWO_INTERFACES }, transport: us }), agent({ overrides: { supportedInterfaces: moved }, transport: us }), `interface URL changed from ${ORIGIN}/a2a/us to ${ORIGIN}/a2a/us2`);
  });

  test('the tenant changed', () => {
    const v = classifyAgentChange(agent({ overrides: { supportedInterfaces: TWO_INTERFACES }, transport: { tenant: 'eu' } }), agent({ overrides: { supportedInterfaces: TWO_INTERFACES }, transport: { tenant: 'us' } }));
    assert.equal(v.impact, 'breaking');
    assert.deepEqual(v.reasons.slice(0, 2), ['tenant changed from "eu" to "us"', `interface URL changed from ${ORIGIN}/a2a/jsonrpc to ${ORIGIN}/a2a/us`]);
  });

  test("a static entry's interfaceUrl is the URL judged", () => {
    const unroutable = { supportedInterfaces: [{ url: 'http://0.0.0.0:9999/', protocolBinding: 'JSONRPC', protocolVersion: '1.0' }] };
    const before = agent({ overrides: unroutable, transport: { interfaceUrl: 'https://returns.internal/a2a' } });
    assertBreaking(before, agent({ overrides: unroutable, transport: { interfaceUrl: 'https://returns2.internal/a2a' } }), 'interface URL changed from https://returns.internal/a2a to https://returns2.internal/a2a');
  });

  test('streaming capability removed', () => {
    assertBreaking(agent(), agent({ overrides: { capabilities: { streaming: false } } }), 'streaming capability removed');
  });

  test('the agent left the snapshot', () => {
    assert.deepEqual(classifyAgentChange(agent(), undefined), { impact: 'breaking', reasons: ['agent left the snapshot'] });
  });

  test('card text is quoted in reasons, never raw', () => {
    const v = classifyAgentChange(agent({ skills: [{ id: 'a\nb', tags: ['x'] }] }), agent({ skills: [] }));
    assert.deepEqual(v.reasons, ['skill "a\\nb" removed']);
  });
});

describe('classifyAgentChange: compatible', () => {
  test('no change at all: compatible, no reasons', () => {
    assertCompatible(agent(), agent(), []);
  });

  test('an added agent', () => {
    assertCompatible(undefined, agent(), ['agent added']);
  });

  test('a skill added', () => {
    assertCompatible(agent(), agent({ skills: [...SKILLS, { id: 'exchanges', tags: ['returns'] }] }), ['skill "exchanges" added']);
  });

  test('names, descriptions, examples and version', () => {
    const after = agent({
      skills: [{ ...SKILLS[0]!, name: 'Refunds', description: 'Refunds orders.', examples: ['Refund order 43'] }, SKILLS[1]!],
      overrides: { name: 'Returns', description: 'Handles returns.', version: '2.2.0' },
    });
    assertCompatible(agent(), after, ['skill "refunds" name changed', 'skill "refunds" description changed', 'skill "refunds" examples changed', 'card name changed', 'card description changed', 'version changed from "2.1.0" to "2.2.0"']);
  });

  test('provider, documentation and other card details', () => {
    assertCompatible(agent(), agent({ overrides: { provider: { organization: 'Other', url: 'https://other.example.com' }, documentationUrl: 'https://docs.example.com' } }), ['provider changed', 'documentation URL changed']);
  });

  test('added modes and tags', () => {
    const after = agent({ skills: [{ ...SKILLS[0]!, tags: ['returns', 'refunds', 'exchanges'], inputModes: ['text/plain', 'image/png', 'application/pdf'] }, SKILLS[1]!], tags: ['returns', 'exchanges'] });
    assertCompatible(agent(), after, ['tag "exchanges" added to skill "refunds"', 'input mode "application/pdf" added to skill "refunds"', 'tag "exchanges" added to the agent\'s reviewed tags']);
  });

  test('a security requirement removed', () => {
    assertCompatible(agent(), agent({ overrides: { securityRequirements: [] } }), ['security requirement removed: bearer']);
  });

  test('transport options other than tenant and interfaceUrl', () => {
    assertCompatible(agent(), agent({ transport: { timeoutMs: 5000 } }), ['transport option timeoutMs changed']);
  });

  test('reasons are bounded, breaking ones kept first', () => {
    const many = Array.from({ length: 200 }, (_, i) => ({ id: `s${i}`, tags: ['returns'] }));
    const v = classifyAgentChange(agent({ skills: many }), agent({ skills: [{ id: 'new', tags: ['returns'] }] }));
    assert.equal(v.impact, 'breaking');
    assert.equal(v.reasons.length, MAX_REASONS);
    assert.equal(v.reasons[0], 'skill "s0" removed');
    assert.equal(v.reasons.at(-1), `and ${200 + 1 - MAX_REASONS + 1} more changes`);
  });
});
