/**
 * Self-signed certificates for loopback HTTPS tests, generated at test time with the `openssl`
 * CLI into a temporary directory (removed right after). Nothing is checked in.
 *
 * @example
 * const { key, cert } = await createTestCertificate();
 * const server = await startFaultServer({ tls: { key, cert }, hostname: 'localhost' });
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A PEM key and certificate. The certificate is its own CA (pass it as `ca` to trust it). */
export interface TestCertificate {
  key: string;
  cert: string;
}

export interface TestCertificateOptions {
  /** Subject alternative DNS names. Default `['localhost', 'rebind.test']`. */
  dnsNames?: readonly string[];
  /** Subject alternative IP addresses. Default `['127.0.0.1']`. */
  ipAddresses?: readonly string[];
}

const cache = new Map<string, Promise<TestCertificate>>();

/**
 * Generates (once per option set per process) an EC P-256 self-signed certificate valid for one
 * day. Throws if `openssl` is missing or fails.
 */
export function createTestCertificate(options: TestCertificateOptions = {}): Promise<TestCertificate> {
  const dnsNames = options.dnsNames ?? ['localhost', 'rebind.test'];
  const ipAddresses = options.ipAddresses ?? ['127.0.0.1'];
  const san = [...dnsNames.map((d) => `DNS:${d}`), ...ipAddresses.map((ip) => `IP:${ip}`)].join(',');
  let pending = cache.get(san);
  if (pending === undefined) {
    pending = generate(san, dnsNames[0] ?? 'localhost');
    cache.set(san, pending);
  }
  return pending;
}

async function generate(san: string, commonName: string): Promise<TestCertificate> {
  const dir = await mkdtemp(path.join(tmpdir(), 'a2a-discovery-tls-'));
  try {
    const keyPath = path.join(dir, 'key.pem');
    const certPath = path.join(dir, 'cert.pem');
    await run(
      'openssl',
      [
        'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
        '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', `/CN=${commonName}`,
        '-addext', `subjectAltName=${san}`,
      ],
      { timeout: 10_000 },
    );
    const [key, cert] = await Promise.all([readFile(keyPath, 'utf8'), readFile(certPath, 'utf8')]);
    return { key, cert };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
