/**
 * The token request's own guarded connection: the token endpoint's exact origin, https only
 * (http only for loopback hosts under allowLoopback), no redirects, and an answer bounded in
 * bytes and time. Each test fails without its check (the request would be sent, followed, read
 * whole, or waited on without end).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { oauth2ClientCredentials } from '../../packages/core/src/auth/index.js';

interface Stub {
  origin: string;
  hits: string[];
  close(): Promise<void>;
}

async function stub(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Stub> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const PEER = 'https://billing.example.com';
const SECRET = 'client-secret-of-the-token-tests';

describe('the token endpoint connection', () => {
  let target: Stub;
  before(async () => {
    target = await stub((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ access_token: 'stolen', token_type: 'Bearer', expires_in: 60 }));
    });
  });
  after(() => target.close());

  const provider = (tokenUrl: string, extra: Record<string, unknown> = {}) => oauth2ClientCredentials({ origins: [PEER], tokenUrl, clientId: 'c', clientSecret: SECRET, allowLoopback: true, ...extra });

  test('http is refused without allowLoopback (and for any host not loopback): nothing is sent', () => {
    for (const tokenUrl of [`${target.origin}/token`, 'http://idp.example.com/token']) {
      assert.throws(
        () => provider(tokenUrl, { allowLoopback: tokenUrl.includes('example') }),
        (err: Error & { code: string }) => {
          assert.equal(err.code, 'ERR_CONFIG_INVALID');
          assert.match(err.message, /oauth2 credentials: tokenUrl http:\/\/[^:]+(:\d+)?: (plain http is accepted for a token endpoint only on a loopback host with allowLoopback|a token endpoint must be https)/);
          return true;
        },
      );
    }
    assert.deepEqual(target.hits, []);
  });

  test('an issuer whose metadata names an http token endpoint elsewhere: refused before sending the secret', async () => {
    const issuer = await stub((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer: issuerOrigin, token_endpoint: 'http://idp.example.com/token' }));
    });
    const issuerOrigin = issuer.origin;
    const credentials = oauth2ClientCredentials({ origins: [PEER], issuer: issuer.origin, clientId: 'c', clientSecret: SECRET, allowLoopback: true });
    try {
      await assert.rejects(credentials.headers(PEER), (err: Error & { code: string }) => {
        assert.equal(err.code, 'ERR_INSECURE_URL');
        assert.ok(!err.message.includes(SECRET));
        return true;
      });
      assert.deepEqual(issuer.hits, ['GET /.well-known/openid-configuration']);
    } finally {
      await credentials.close();
      await issuer.close();
    }
  });

  test('a redirect is refused, never followed', async () => {
    const redirecting = await stub((_req, res) => {
      res.statusCode = 307;
      res.setHeader('location', `${target.origin}/token`);
      res.end();
    });
    const credentials = provider(`${redirecting.origin}/token`);
    try {
      await assert.rejects(credentials.headers(PEER), (err: Error & { code: string }) => {
        assert.equal(err.code, 'ERR_REDIRECT_REFUSED');
        return true;
      });
      assert.deepEqual(target.hits, []);
      assert.deepEqual(redirecting.hits, ['POST /token']);
    } finally {
      await credentials.close();
      await redirecting.close();
    }
  });

  test('an answer larger than maxResponseBytes is refused', async () => {
    const huge = await stub((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ access_token: 'x'.repeat(200_000), token_type: 'Bearer' }));
    });
    const credentials = provider(`${huge.origin}/token`, { maxResponseBytes: 4096 });
    try {
      await assert.rejects(credentials.headers(PEER), (err: Error & { code: string }) => {
        assert.equal(err.code, 'ERR_BODY_TOO_LARGE');
        return true;
      });
    } finally {
      await credentials.close();
      await huge.close();
    }
  });

  test('an endpoint that never answers is bounded by timeoutMs', async () => {
    const silent = await stub(() => undefined);
    const credentials = provider(`${silent.origin}/token`, { timeoutMs: 300 });
    try {
      await assert.rejects(credentials.headers(PEER), (err: Error & { code: string }) => {
        assert.equal(err.code, 'ERR_FETCH_TIMEOUT');
        return true;
      });
    } finally {
      await credentials.close();
      await silent.close();
    }
  });

  test('an answer that is not a token is refused without quoting it', async () => {
    const odd = await stub((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ access_token: 'leaky-token-value', token_type: 'mac' }));
    });
    const credentials = provider(`${odd.origin}/token`);
    try {
      await assert.rejects(credentials.headers(PEER), (err: Error) => {
        assert.ok(!err.message.includes('leaky-token-value'), err.message);
        assert.ok(!JSON.stringify(err).includes('leaky-token-value'));
        return true;
      });
    } finally {
      await credentials.close();
      await odd.close();
    }
  });
});
