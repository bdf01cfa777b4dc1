import { test } from 'node:test';
import assert from 'node:assert/strict';
import { preferredInterface } from '../../packages/core/src/card/index.js';
import { HostPolicy } from '../../packages/core/src/fetch/index.js';

const card = {
  supportedInterfaces: [
    { url: 'https://a.example.com/grpc', protocolBinding: 'GRPC', protocolVersion: '1.0' },
    { url: 'https://evil.example.net/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0' },
    { url: 'https://a.example.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'blue' },
    { url: 'https://a.example.com/a2a', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: 'green' },
    { url: 'https://a.example.com/v03', protocolBinding: 'JSONRPC', protocolVersion: '0.3' },
  ],
};
const policy = HostPolicy.from({ allow: ['https://a.example.com'] });

test('the first interface in the card order that this client speaks and the policy admits, with its tenant', () => {
  assert.deepEqual(preferredInterface(card, policy), { index: 2, url: 'https://a.example.com/a2a', binding: 'JSONRPC', protocolVersion: '1.0', tenant: 'blue', client: 'a2a-1.x' });
  // Without a judge, the first callable one (gRPC is never called).
  assert.equal(preferredInterface(card)?.url, 'https://evil.example.net/a2a');
});

test('a named tenant picks that tenant\'s interface; a 0.3 interface is spoken by the ADK client', () => {
  assert.equal(preferredInterface(card, policy, { tenant: 'green' })?.index, 3);
  assert.equal(preferredInterface(card, policy, { tenant: 'red' }), undefined);
  const legacyFirst = { supportedInterfaces: [card.supportedInterfaces[4]!, card.supportedInterfaces[2]!] };
  assert.equal(preferredInterface(legacyFirst, policy)?.client, 'adk-0.3');
});
