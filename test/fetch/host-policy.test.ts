import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { HostPolicy, isLoopbackHost } from '../../packages/core/src/fetch/index.js';
import { isDiscoveryError } from '../../packages/core/src/errors.js';

function verdictOf(policy: HostPolicy, url: string): string {
  const v = policy.check(url);
  return v.allowed ? `allowed ${v.origin}` : v.code;
}

describe('HostPolicy.from', () => {
  test('lists every bad entry with its path in one ERR_CONFIG_INVALID', () => {
    assert.throws(
      () =>
        HostPolicy.from({
          allow: [
            'https://ok.example.com',
            'ftp://files.example.com',
            'https://a.*.example.com',
            'http://agents.example.com',
            'https://x.example.com/path',
            42 as unknown as string,
            'http://localhost:8080',
            'https://*.com',
            'https://user@agents.example.com',
          ],
          allowCidrs: ['10.0.0.0/8', 'nonsense', '300.0.0.0/8'],
        }),
      (err: unknown) => {
        assert.ok(isDiscoveryError(err));
        assert.equal(err.code, 'ERR_CONFIG_INVALID');
        assert.equal(err.stage, 'config');
        assert.deepEqual(
          err.problems.map((p) => p.path),
          ['allow[1]', 'allow[2]', 'allow[3]', 'allow[4]', 'allow[5]', 'allow[6]', 'allow[7]', 'allow[8]', 'allowCidrs[1]', 'allowCidrs[2]'],
        );
        return true;
      },
    );
  });

  test('accepts http only for loopback hosts and only with allowLoopback', () => {
    const policy = HostPolicy.from({ allow: ['http://localhost:8080', 'http://127.0.0.1:9000', 'http://[::1]:9001'], allowLoopback: true });
    assert.equal(verdictOf(policy, 'http://localhost:8080/x'), 'allowed http://localhost:8080');
    assert.equal(verdictOf(policy, 'http://127.0.0.1:9000/'), 'allowed http://127.0.0.1:9000');
    assert.equal(verdictOf(policy, 'http://[::1]:9001/'), 'allowed http://[::1]:9001');
    assert.equal(verdictOf(policy, 'http://localhost:9999/'), 'ERR_HOST_NOT_ALLOWED');
    assert.throws(() => HostPolicy.from({ allow: ['http://10.0.0.1'], allowLoopback: true }), { code: 'ERR_CONFIG_INVALID' });
  });

  test('allow: [] refuses every host', () => {
    const policy = HostPolicy.from({ allow: [] });
    assert.equal(verdictOf(policy, 'https://agents.example.com/'), 'ERR_HOST_NOT_ALLOWED');
    assert.ok(policy.describe().some((line) => line.includes('every host is refused')));
  });

  test('describe() names each entry, the exemption and the address rule', () => {
    const lines = HostPolicy.from({ allow: ['https://*.example.com', 'https://a.example.org:8443'], allowCidrs: ['10.0.0.0/8'] }).describe();
    const text = lines.join('\n');
    assert.match(text, /https:\/\/\*\.example\.com .*port 443.*not example\.com itself/);
    assert.match(text, /https:\/\/a\.example\.org:8443 .*port 8443.*exact host/);
    assert.match(text, /loopback exemption: off/);
    assert.match(text, /10\.0\.0\.0\/8/);
  });
});

describe('HostPolicy.check', () => {
  // T5: userinfo and authority confusion. Only the parsed host is ever compared.
  test('T5: userinfo and authority tricks are refused or map to the parsed host', () => {
    const policy = HostPolicy.from({ allow: ['https://agents.example.com'] });
    const table: Array<[string, string]> = [
      ['https://agents.example.com@evil.test/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://user:pw@agents.example.com/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://:pw@agents.example.com/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://evil.test#@agents.example.com/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://evil.test\\@agents.example.com/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://evil.test?@agents.example.com/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://evil.test/@agents.example.com/', 'ERR_HOST_NOT_ALLOWED'],
      ['https:/\\agents.example.com/x', 'allowed https://agents.example.com'],
      ['HTTPS://AGENTS.Example.COM/', 'allowed https://agents.example.com'],
      ['https://agents.example.com:443/', 'allowed https://agents.example.com'],
      ['https://agents.example.com/.well-known/agent-card.json', 'allowed https://agents.example.com'],
      ['javascript:alert(1)', 'ERR_INSECURE_URL'],
      ['file:///etc/passwd', 'ERR_INSECURE_URL'],
      ['data:application/json,{}', 'ERR_INSECURE_URL'],
      ['not a url', 'ERR_HOST_NOT_ALLOWED'],
      ['//agents.example.com/', 'ERR_HOST_NOT_ALLOWED'],
    ];
    for (const [url, expected] of table) assert.equal(verdictOf(policy, url), expected, url);
  });

  // T7: suffix tricks, trailing dot, IDN, %2e, ports.
  test('T7: exact (scheme, host, port) matching resists allowlist tricks', () => {
    const policy = HostPolicy.from({ allow: ['https://agents.example.com', 'https://*.corp.example.org', 'https://api.example.net:8443', 'https://bücher.example'] });
    const table: Array<[string, string]> = [
      ['https://agents.example.com./', 'allowed https://agents.example.com'],
      ['https://AGENTS.Example.COM./', 'allowed https://agents.example.com'],
      ['https://agents.example.com../', 'ERR_HOST_NOT_ALLOWED'],
      ['https://evilagents.example.com/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://xagents.example.com/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://agents.example.com.evil.test/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://agents.example.com%2eevil.test/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://agents%2eexample.com/', 'allowed https://agents.example.com'],
      ['https://аgents.example.com/', 'ERR_HOST_NOT_ALLOWED'], // Cyrillic а → xn--gents-…
      ['https://agents.example.com:8443/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://agents.example.com:80/', 'ERR_HOST_NOT_ALLOWED'],
      ['http://agents.example.com/', 'ERR_INSECURE_URL'],
      // wildcard: label boundary, never the apex
      ['https://billing.corp.example.org/', 'allowed https://billing.corp.example.org'],
      ['https://a.b.corp.example.org./', 'allowed https://a.b.corp.example.org'],
      ['https://corp.example.org/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://evilcorp.example.org/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://x.corp.example.org.evil.test/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://x.corp.example.org:8443/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://*.corp.example.org/', 'ERR_HOST_NOT_ALLOWED'],
      // ports
      ['https://api.example.net/', 'ERR_HOST_NOT_ALLOWED'],
      ['https://api.example.net:8443/', 'allowed https://api.example.net:8443'],
      // IDN entries and hosts both become punycode
      ['https://bücher.example/', 'allowed https://xn--bcher-kva.example'],
      ['https://xn--bcher-kva.example/', 'allowed https://xn--bcher-kva.example'],
      ['https://BÜCHER.example/', 'allowed https://xn--bcher-kva.example'],
    ];
    for (const [url, expected] of table) assert.equal(verdictOf(policy, url), expected, url);
  });

  test('the verdict URL has the trailing dot removed, so the connection uses the matched host', () => {
    const v = HostPolicy.from({ allow: ['https://agents.example.com'] }).check('https://agents.example.com./a?b');
    assert.ok(v.allowed);
    assert.equal(v.url.href, 'https://agents.example.com/a?b');
  });

  // T8: https only.
  test('T8: http is refused without the loopback exemption, and for non-loopback hosts with it', () => {
    const strict = HostPolicy.from({ allow: ['https://127.0.0.1:8443', 'https://localhost'] });
    assert.equal(verdictOf(strict, 'http://127.0.0.1:8443/'), 'ERR_INSECURE_URL');
    assert.equal(verdictOf(strict, 'http://localhost/'), 'ERR_INSECURE_URL');
    const dev = HostPolicy.from({ allow: ['https://agents.example.com', 'http://localhost:8080'], allowLoopback: true });
    assert.equal(verdictOf(dev, 'http://agents.example.com/'), 'ERR_INSECURE_URL');
    assert.equal(verdictOf(dev, 'http://localhost:8080/'), 'allowed http://localhost:8080');
  });

  // T2: alternate IPv4 spellings are parsed to the canonical address before judging.
  test('T2: odd IPv4 spellings are judged as the canonical address', () => {
    const policy = HostPolicy.from({ allow: ['https://127.0.0.1', 'https://10.0.0.1'] });
    const spellings = ['2130706433', '0x7f000001', '017700000001', '127.1', '0x7f.1', '%31%32%37.0.0.1', '１２７.０.０.１', '127.0.0.1.'];
    for (const s of spellings) {
      const v = policy.check(`https://${s}/`);
      assert.ok(v.allowed, s);
      assert.equal(v.url.hostname, '127.0.0.1', s);
      assert.equal(policy.isAddressAllowed(v.url.hostname), false, `${s} must still be a blocked address`);
    }
    const zero = policy.check('https://0/');
    assert.equal(zero.allowed, false);
    const mapped = HostPolicy.from({ allow: ['https://[::ffff:127.0.0.1]'] }).check('https://[::ffff:7f00:1]/');
    assert.ok(mapped.allowed);
    assert.equal(mapped.url.hostname, '[::ffff:7f00:1]');
    assert.equal(policy.isAddressAllowed(mapped.url.hostname), false);
  });

  test('property: no generated host outside the list is ever allowed', () => {
    const policy = HostPolicy.from({ allow: ['https://agents.example.com', 'https://*.corp.example.org', 'https://api.example.net:8443'] });
    const piece = fc.oneof(
      fc.constantFrom('agents', 'example', 'com', 'corp', 'org', 'api', 'net', 'evil', 'test', 'AGENTS', 'Example', 'xn--80ak6aa92e'),
      fc.constantFrom('.', '.', '.', '-', '%2e', '%2E', '@', '#', '\\', '/', '?', ':8443', ':443', ':80', '..', 'а', 'ｅ', '\u3002', '*', '0x7f', '127'),
      fc.stringMatching(/^[a-z0-9-]{1,6}$/),
    );
    const url = fc.record({
      scheme: fc.constantFrom('https', 'HTTPS', 'http', 'ftp', 'https'),
      userinfo: fc.constantFrom('', '', '', 'agents.example.com@', 'u:p@'),
      // Tricks around the listed names: prefixes, suffixes and separators glued to them.
      host: fc
        .tuple(
          fc.array(piece, { maxLength: 4 }),
          fc.constantFrom('agents.example.com', 'corp.example.org', 'api.example.net', 'example.com', 'example.org', ''),
          fc.array(piece, { maxLength: 4 }),
        )
        .map(([before, core, after]) => `${before.join('')}${core}${after.join('')}`)
        .filter((host) => host !== ''),
      tail: fc.constantFrom('/', '', '/.well-known/agent-card.json', '#@agents.example.com', '?x=@agents.example.com'),
    });
    // Independent oracle: what the allowlist means, evaluated on the WHATWG parse.
    const inList = (raw: string): boolean => {
      let u: URL;
      try {
        u = new URL(raw);
      } catch {
        return false;
      }
      if (u.username !== '' || u.password !== '' || u.protocol !== 'https:') return false;
      const host = u.hostname.endsWith('.') ? u.hostname.slice(0, -1) : u.hostname;
      if (host.split('.').some((label) => label === '' || label.includes('*'))) return false;
      if (u.port === '' && host === 'agents.example.com') return true;
      if (u.port === '' && host.endsWith('.corp.example.org')) return true;
      return u.port === '8443' && host === 'api.example.net';
    };
    fc.assert(
      fc.property(url, ({ scheme, userinfo, host, tail }) => {
        const raw = `${scheme}://${userinfo}${host}${tail}`;
        const verdict = policy.check(raw);
        if (verdict.allowed) {
          assert.ok(inList(raw), `allowed but not in the list: ${raw}`);
          assert.ok(inList(verdict.url.href), `verdict URL escapes the list: ${verdict.url.href}`);
        }
      }),
      { numRuns: 3000 },
    );
  });

  test('property: every subdomain of a wildcard entry is allowed (the property above is not vacuous)', () => {
    const policy = HostPolicy.from({ allow: ['https://*.corp.example.org'] });
    // An `xn--` label must be valid punycode to be a host name at all (`xn--0` is not): those are not plain subdomains.
    const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/).filter((l) => !l.startsWith('xn--'));
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 4 }), fc.boolean(), (labels, dot) => {
        const host = `${labels.join('.')}.corp.example.org${dot ? '.' : ''}`;
        const verdict = policy.check(`https://${host}/`);
        assert.ok(verdict.allowed, host);
      }),
      { numRuns: 500 },
    );
  });
});

describe('HostPolicy.isAddressAllowed', () => {
  // T1: SSRF to internal addresses, including ranges smuggled through IPv6 prefixes.
  test('T1: only public unicast addresses are allowed by default', () => {
    const policy = HostPolicy.from({ allow: [] });
    const blocked = [
      '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '192.168.1.1',
      '169.254.169.254', // cloud metadata
      '100.100.100.200', // Alibaba metadata
      '100.64.0.1', '0.0.0.0', '255.255.255.255', '224.0.0.1', '192.0.0.170', '198.18.0.1', '192.0.2.1',
      '::1', '::', 'fe80::1', 'fe80::1%eth0', 'fc00::1',
      'fd00:ec2::254', // AWS metadata over IPv6
      '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:169.254.169.254', '[::ffff:7f00:1]',
      '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
      '2002:a9fe:a9fe::', // 6to4
      '2001::1', // Teredo
      '2001:db8::1', 'ff02::1',
      'not-an-ip', '', 'localhost',
    ];
    for (const address of blocked) assert.equal(policy.isAddressAllowed(address), false, address);
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8', '[2606:4700::1111]']) {
      assert.equal(policy.isAddressAllowed(address), true, address);
    }
  });

  test('allowCidrs admits exactly the listed ranges, IPv4-mapped forms included', () => {
    const policy = HostPolicy.from({ allow: [], allowCidrs: ['10.0.0.0/8', 'fd00::/8'] });
    assert.equal(policy.isAddressAllowed('10.1.2.3'), true);
    assert.equal(policy.isAddressAllowed('::ffff:10.1.2.3'), true);
    assert.equal(policy.isAddressAllowed('fd00:ec2::254'), true);
    assert.equal(policy.isAddressAllowed('11.0.0.1'), true); // public anyway
    assert.equal(policy.isAddressAllowed('192.168.1.1'), false);
    assert.equal(policy.isAddressAllowed('169.254.169.254'), false);
    assert.equal(policy.isAddressAllowed('127.0.0.1'), false);
  });

  test('a reload judges every address again: one allowed before is refused after, and the reverse, however often it was judged', () => {
    const policy = HostPolicy.from({ allow: [], allowCidrs: ['10.0.0.0/8'] });
    // Judged again and again (a verdict kept per address must not outlive the rules it came from).
    for (let i = 0; i < 3; i++) {
      assert.equal(policy.isAddressAllowed('10.1.2.3'), true);
      assert.equal(policy.isAddressAllowed('127.0.0.1'), false);
    }
    policy.update(HostPolicy.from({ allow: [], allowLoopback: true }));
    assert.equal(policy.isAddressAllowed('10.1.2.3'), false, 'the CIDR range is gone');
    assert.equal(policy.isAddressAllowed('127.0.0.1'), true, 'loopback is exempt now');
    policy.update(HostPolicy.from({ allow: [] }));
    assert.equal(policy.isAddressAllowed('127.0.0.1'), false);
  });

  test('the loopback exemption admits loopback only', () => {
    const policy = HostPolicy.from({ allow: [], allowLoopback: true });
    for (const a of ['127.0.0.1', '127.3.4.5', '::1', '::ffff:127.0.0.1']) assert.equal(policy.isAddressAllowed(a), true, a);
    for (const a of ['169.254.169.254', '10.0.0.1', '0.0.0.0', '::']) assert.equal(policy.isAddressAllowed(a), false, a);
  });
});

describe('isLoopbackHost', () => {
  test('covers localhost, 127/8 and ::1, nothing that merely looks like them', () => {
    for (const h of ['localhost', 'LOCALHOST', 'localhost.', '127.0.0.1', '127.9.9.9', '[::1]', '::1']) assert.equal(isLoopbackHost(h), true, h);
    for (const h of ['localhost.evil.test', 'evil-localhost', '128.0.0.1', '10.0.0.1', '[::2]', '127.1', '0x7f000001', '']) assert.equal(isLoopbackHost(h), false, h);
  });
});

describe('normalizeBaseUrl and cardUrl', () => {
  const policy = HostPolicy.from({ allow: ['https://a.example.com', 'https://*.b.example.com'] });

  test('normalizes to origin + path ending in /', () => {
    assert.equal(policy.normalizeBaseUrl('https://A.example.com.'), 'https://a.example.com/');
    assert.equal(policy.normalizeBaseUrl('https://a.example.com/v1?x=1#frag'), 'https://a.example.com/v1/');
    assert.equal(policy.normalizeBaseUrl('https://a.example.com/v1/../v2/'), 'https://a.example.com/v2/');
  });

  // T6: the card URL keeps the allowlisted origin whatever the base path says.
  test('T6: cardUrl stays on the base origin and under the base path', () => {
    assert.equal(policy.cardUrl('https://a.example.com'), 'https://a.example.com/.well-known/agent-card.json');
    assert.equal(policy.cardUrl('https://a.example.com/agents/billing'), 'https://a.example.com/agents/billing/.well-known/agent-card.json');
    assert.equal(policy.cardUrl('https://a.example.com/', { legacyPath: true }), 'https://a.example.com/.well-known/agent.json');
    for (const base of ['https://a.example.com//evil.test', 'https://a.example.com/%2e%2e/x', 'https://a.example.com/..%2f..%2f']) {
      const card = new URL(policy.cardUrl(base));
      assert.equal(card.origin, 'https://a.example.com', base);
      assert.ok(card.pathname.endsWith('/.well-known/agent-card.json'), base);
    }
  });

  test('refused bases throw the policy code with url and stage', () => {
    assert.throws(() => policy.cardUrl('https://evil.test/'), { code: 'ERR_HOST_NOT_ALLOWED', stage: 'resolve', url: 'https://evil.test/' });
    assert.throws(() => policy.normalizeBaseUrl('http://a.example.com/'), { code: 'ERR_INSECURE_URL', stage: 'policy' });
    assert.throws(() => policy.normalizeBaseUrl('https://a.example.com@evil.test/'), (err: unknown) => {
      assert.ok(isDiscoveryError(err));
      assert.equal(err.code, 'ERR_HOST_NOT_ALLOWED');
      assert.ok(!String(err.url).includes('a.example.com@'), 'userinfo is not echoed');
      return true;
    });
  });
});
