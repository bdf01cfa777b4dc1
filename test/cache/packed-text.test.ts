/**
 * The cache holds a card's text packed when that pays (cache/packed-text.ts): whatever it was
 * given comes back exactly, and text that would not shrink is held as it is.
 */
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { heldText, holdText } from '../../packages/core/src/cache/packed-text.js';

/** A card of varied text (no repeated skill), as a real fleet's are. */
const varied = JSON.stringify({
  protocolVersion: '0.3.0',
  name: 'Payments reconciliation',
  description: 'Matches bank statement lines to open invoices, proposes write-offs under the policy threshold and explains every match it makes.',
  url: 'https://payments.internal.example.com/a2a/v1',
  preferredTransport: 'JSONRPC',
  provider: { organization: 'Finance Platform', url: 'https://finance.example.com' },
  version: '4.2.1',
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ['text/plain', 'application/json'],
  defaultOutputModes: ['application/json'],
  securitySchemes: { oidc: { type: 'openIdConnect', openIdConnectUrl: 'https://login.example.com/.well-known/openid-configuration' } },
  security: [{ oidc: ['payments.read'] }],
  skills: [
    { id: 'match-statement', name: 'Match a statement', description: 'Given a CAMT.053 or MT940 statement, pairs each line with the invoice it settles.', tags: ['reconciliation', 'bank'], examples: ['Match yesterday’s statement for the EUR account'] },
    { id: 'write-off', name: 'Propose write-offs', description: 'Lists differences under 5 EUR per customer and drafts the journal entries.', tags: ['accounting'], examples: ['Which differences can we write off this month?'] },
    { id: 'explain', name: 'Explain a match', description: 'Says why a payment was matched to an invoice, with the fields compared.', tags: ['audit'] },
  ],
});

test('a card is held packed and comes back exactly, whatever its characters', () => {
  for (const text of [varied, varied.replace('Payments', 'Zahlungsabgleich — 請求書 🚀'), `${varied.slice(0, -1)},"note":"\\u0000 ${'é'.repeat(300)}"}`]) {
    const held = holdText(text);
    assert.ok(held.size > 0, 'packed');
    assert.ok(held.held.length < Buffer.byteLength(text) * 0.8, `${held.held.length} B held for ${Buffer.byteLength(text)} B`);
    assert.equal(heldText(held), text);
  }
});

test('a card of a hundred kilobytes comes back exactly too (zlib answers in several buffers)', () => {
  const card = JSON.parse(varied) as { skills: unknown[] };
  const big = JSON.stringify({ ...card, skills: Array.from({ length: 400 }, (_, i) => ({ id: `s${i}`, name: `Skill ${i}`, description: `Skill number ${i} of a large card, ${(i * 7919) % 104729} in its catalogue.`, tags: [`t${i % 13}`] })) });
  assert.ok(big.length > 30_000);
  const held = holdText(big);
  assert.ok(held.size > 0 && held.held.length < big.length / 3);
  assert.equal(heldText(held), big);
});

test('short text and text that would not shrink are held as they are', () => {
  const short = '{"name":"a"}';
  assert.deepEqual(holdText(short), { held: short, size: 0 });
  // Printable ASCII at random: about 6.6 bits of 8 a character, too little to pack.
  const printable = [...randomBytes(3_000)].map((b) => String.fromCharCode(0x21 + (b % 94))).join('');
  const noise = JSON.stringify({ name: 'x', description: printable });
  const held = holdText(noise);
  assert.equal(held.size, 0, 'random text does not shrink by a fifth');
  assert.equal(held.held, noise);
  assert.equal(heldText(held), noise);
});
