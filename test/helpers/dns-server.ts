/**
 * Real DNS servers for the tests, from Debian's packages, on loopback ports:
 *
 * - {@link startDnsServer}: an authoritative Knot DNS (`knot`: knotd, knotc, keymgr; 3.2 serves
 *   SVCB) serving zones given as text, over UDP and TCP on 127.0.0.1:<free port>. With
 *   `dnssec: true` knot signs the zone itself (its default automatic signing policy) and the
 *   helper returns the zone's trust anchor (DS records, from keymgr). `reload()` rewrites a zone
 *   and waits for knot to serve it.
 * - {@link startValidatingResolver}: an Unbound (`unbound`) on another loopback port with a
 *   stub-zone per zone of that knot and the trust anchors of the signed ones: its answers for a
 *   signed zone carry the AD bit; an unsigned zone (declared `domain-insecure`) has none.
 *
 * Both run as the current user (also as root: no user switch, no chroot), with config, rundir,
 * storage, keys and logs in a temporary directory; `close()` stops only that process and deletes
 * the directory. A start is bounded (a daemon that does not answer within 15 s fails with its
 * log). Without the binaries the tests are skipped with {@link DNS_SKIP} (never when
 * `A2A_TEST_REQUIRE_DNS=1` or `A2A_TEST_REQUIRE_ALL=1`, as in CI). {@link queryDns} asks a question over UDP with dns-packet
 * (which does not know SVCB: {@link decodeSvcb} reads its RFC 9460 wire format).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { missingError, skipUnlessRequired } from './skip.js';

/** The path of a Debian DNS binary (sbin first: it is often not on a user's PATH), or undefined. */
function binary(name: string): string | undefined {
  const dirs = ['/usr/sbin', '/usr/bin', '/usr/local/sbin', '/usr/local/bin', ...(process.env.PATH ?? '').split(':').filter(Boolean)];
  return dirs.map((d) => join(d, name)).find((p) => existsSync(p));
}

const KNOT = ['knotd', 'knotc', 'keymgr'] as const;
const UNBOUND = ['unbound'] as const;

/** What of `names` is missing, and where to get it; undefined when all are here. */
function missingReason(names: readonly string[], packages: string): string | undefined {
  const missing = names.filter((n) => binary(n) === undefined);
  if (missing.length === 0) return undefined;
  return `${missing.join(', ')} not found: install Debian's ${packages} (scripts/ensure-test-deps.sh does)`;
}

/**
 * Why the DNS tests are skipped here (knot or unbound missing), or undefined when they run. Never
 * skipped when `A2A_TEST_REQUIRE_DNS=1` or `A2A_TEST_REQUIRE_ALL=1` (helpers/skip.ts).
 */
export const DNS_SKIP: string | undefined = skipUnlessRequired('dns', missingReason([...KNOT, ...UNBOUND], 'knot and unbound packages'));

/** One zone: its apex (no trailing dot needed) and its records in zone-file presentation format. */
export interface TestZone {
  /** The apex, e.g. `agents.test`. */
  readonly name: string;
  /**
   * Records (relative names are under the apex; `$TTL 60` applies unless a record says
   * otherwise). Without a SOA record, the helper adds one (and `NS ns` + `ns A 127.0.0.1`).
   */
  readonly text: string;
  /** Let knot sign the zone (automatic DNSSEC signing) and return its trust anchor. */
  readonly dnssec?: boolean;
}

export interface TestDnsServerOptions {
  readonly zones: readonly TestZone[];
}

export interface TestDnsServer {
  readonly host: '127.0.0.1';
  /** UDP and TCP port. */
  readonly port: number;
  /** The zone apexes, as given. */
  readonly zones: readonly string[];
  /** Per signed zone: its DS records in presentation format (`zone. DS tag 13 2 hex`). */
  readonly trustAnchors: ReadonlyMap<string, readonly string[]>;
  /** Replaces a zone's records (the first zone unless named) and waits until knot serves them. */
  reload(text: string, zone?: string): Promise<void>;
  /** knotd's log so far. */
  log(): Promise<string>;
  /** Stops this knotd (only it) and deletes its directory. */
  close(): Promise<void>;
}

export interface TestResolver {
  readonly host: '127.0.0.1';
  readonly port: number;
  log(): Promise<string>;
  /** Stops this unbound (only it) and deletes its directory. */
  close(): Promise<void>;
}

const START_BOUND_MS = 15_000;

function apex(name: string): string {
  return name.replace(/\.$/, '').toLowerCase();
}

/** A port free for both TCP and UDP on 127.0.0.1. */
async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const u = createSocket('udp4');
      u.once('error', () => resolve(false));
      u.bind(port, '127.0.0.1', () => u.close(() => resolve(true)));
    });
    if (udpFree) return port;
  }
  throw new Error('no port free for both TCP and UDP on 127.0.0.1');
}

function run(bin: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${bin} ${args.join(' ')} exited ${code}: ${out.slice(-2000)}`));
    });
  });
}

/** A long-running daemon: started in the foreground, stopped by its own pid only. */
class Daemon {
  private exited = false;
  private output = '';
  private readonly child: ChildProcess;
  private readonly onExit = () => this.child.kill('SIGKILL');

  constructor(bin: string, args: string[]) {
    this.child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    this.child.stdout?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-8000)));
    this.child.stderr?.on('data', (d: Buffer) => (this.output = (this.output + d.toString()).slice(-8000)));
    this.child.once('exit', () => {
      this.exited = true;
      process.off('exit', this.onExit);
    });
    this.child.once('error', (err) => {
      this.exited = true;
      this.output += `\n${err.message}`;
    });
    // A test that crashes before close() must not leave the daemon behind.
    process.once('exit', this.onExit);
  }

  get running(): boolean {
    return !this.exited;
  }

  get stdio(): string {
    return this.output;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const gone = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await gone;
    clearTimeout(timer);
  }
}

/**
 * Polls `ready` every 50 ms until it returns true; bounded, fails with the daemon's log (at
 * once when the log matches `failed`).
 */
async function waitUntil(what: string, daemon: Daemon, logFile: string, ready: () => Promise<boolean>, failed?: RegExp): Promise<void> {
  const deadline = Date.now() + START_BOUND_MS;
  while (daemon.running && Date.now() < deadline) {
    if (await ready().catch(() => false)) return;
    if (failed?.test(await readFile(logFile, 'utf8').catch(() => ''))) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const log = await readFile(logFile, 'utf8').catch(() => '');
  const reason = !daemon.running ? 'exited' : failed?.test(log) ? 'failed' : `did not become ready within ${START_BOUND_MS / 1000} s`;
  throw new Error(`${what} ${reason}\n--- log ---\n${log.slice(-4000)}\n--- output ---\n${daemon.stdio}`);
}

export interface DnsAnswer {
  readonly name: string;
  readonly type: string;
  readonly ttl: number;
  readonly data: unknown;
}

export interface DnsResponse {
  readonly rcode: string;
  /** The AD (authentic data) bit: set by a validating resolver for a DNSSEC-secure answer. */
  readonly authenticData: boolean;
  readonly truncated: boolean;
  readonly answers: readonly DnsAnswer[];
}

/**
 * One question over UDP (recursion desired, EDNS with the DO bit when `dnssec`), bounded to
 * `timeoutMs` (5 s).
 * `type` is a dns-packet type name or a number (SVCB = 64 decodes as raw rdata: {@link decodeSvcb}).
 */
export function queryDns(server: { host: string; port: number }, name: string, type: string | number, options: { dnssec?: boolean; timeoutMs?: number } = {}): Promise<DnsResponse> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const qtype = (typeof type === 'number' ? `UNKNOWN_${type}` : type) as dnsPacket.RecordType;
  const id = Math.floor(Math.random() * 0xffff);
  const query = dnsPacket.encode({
    type: 'query',
    id,
    flags: dnsPacket.RECURSION_DESIRED | (options.dnssec ? dnsPacket.AUTHENTIC_DATA : 0),
    questions: [{ type: qtype, name, class: 'IN' }],
    additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 4096, flags: options.dnssec ? dnsPacket.DNSSEC_OK : 0 } as dnsPacket.Answer],
  });
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no DNS answer from ${server.host}:${server.port} for ${name} ${String(type)} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('message', (msg) => {
      const packet = dnsPacket.decode(msg);
      if (packet.id !== id) return;
      clearTimeout(timer);
      socket.close();
      const p = packet as dnsPacket.DecodedPacket & { rcode?: string; flag_ad?: boolean; flag_tc?: boolean };
      resolve({
        rcode: p.rcode ?? 'NOERROR',
        authenticData: p.flag_ad === true,
        truncated: p.flag_tc === true,
        answers: (packet.answers ?? []).map((a) => ({ name: a.name, type: a.type, ttl: (a as { ttl?: number }).ttl ?? 0, data: (a as { data?: unknown }).data })),
      });
    });
    socket.once('error', (err) => {
      clearTimeout(timer);
      socket.close();
      reject(err);
    });
    socket.send(query, server.port, server.host);
  });
}

export interface SvcbRecord {
  readonly priority: number;
  /** The target name, without the trailing dot ('' for the root, `.`). */
  readonly target: string;
  /** SvcParams by key number, raw values. */
  readonly params: ReadonlyMap<number, Buffer>;
}

/** Reads SVCB rdata (RFC 9460 §2.2: priority, uncompressed target name, key/length/value params). */
export function decodeSvcb(rdata: Buffer): SvcbRecord {
  const priority = rdata.readUInt16BE(0);
  let offset = 2;
  const labels: string[] = [];
  for (;;) {
    const len = rdata[offset++];
    if (len === 0) break;
    labels.push(rdata.subarray(offset, offset + len).toString('latin1'));
    offset += len;
  }
  const params = new Map<number, Buffer>();
  while (offset < rdata.length) {
    const key = rdata.readUInt16BE(offset);
    const len = rdata.readUInt16BE(offset + 2);
    params.set(key, rdata.subarray(offset + 4, offset + 4 + len));
    offset += 4 + len;
  }
  return { priority, target: labels.join('.'), params };
}

function zoneFile(zone: TestZone | { name: string; text: string }): string {
  const origin = apex(zone.name);
  const soa = /(^|\s)SOA(\s|$)/im.test(zone.text)
    ? ''
    : `@ SOA ns.${origin}. hostmaster.${origin}. 1 3600 600 86400 60\n@ NS ns\nns A 127.0.0.1\n`;
  return `$ORIGIN ${origin}.\n$TTL 60\n${soa}${zone.text}\n`;
}

function knotConfig(dir: string, port: number, zones: readonly TestZone[]): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    'server:',
    `    rundir: ${q(dir)}`,
    `    pidfile: ${q(join(dir, 'knot.pid'))}`,
    `    listen: 127.0.0.1@${port}`,
    'control:',
    `    listen: ${q(join(dir, 'knot.sock'))}`,
    'log:',
    `  - target: ${q(join(dir, 'knot.log'))}`,
    '    any: info',
    'database:',
    `    storage: ${q(dir)}`,
    'template:',
    '  - id: default',
    `    storage: ${q(dir)}`,
    // Our zone file stays ours (knot never writes the signed zone back), and a reload takes
    // the file's content whatever its serial (knot bumps the served serial itself).
    '    zonefile-sync: -1',
    '    zonefile-load: difference-no-serial',
    '    journal-content: all',
    'zone:',
    ...zones.flatMap((z) => [`  - domain: ${apex(z.name)}.`, `    file: ${q(join(dir, `${apex(z.name)}.zone`))}`, ...(z.dnssec ? ['    dnssec-signing: on'] : [])]),
    '',
  ].join('\n');
}

/** Starts a knotd serving `zones`; throws (with its log) if it does not serve them within 15 s. */
export async function startDnsServer(options: TestDnsServerOptions): Promise<TestDnsServer> {
  const [knotd, knotc, keymgr] = KNOT.map(binary);
  if (!knotd || !knotc || !keymgr) throw missingError('dns', missingReason(KNOT, 'knot package') ?? 'knot binaries not found');
  if (options.zones.length === 0) throw new Error('startDnsServer needs at least one zone');
  const dir = await mkdtemp(join(tmpdir(), 'a2ad-knot-'));
  const port = await freePort();
  const conf = join(dir, 'knot.conf');
  const logFile = join(dir, 'knot.log');
  await writeFile(conf, knotConfig(dir, port, options.zones));
  for (const z of options.zones) await writeFile(join(dir, `${apex(z.name)}.zone`), zoneFile(z));
  const daemon = new Daemon(knotd, ['-c', conf]);
  const server = { host: '127.0.0.1' as const, port };
  try {
    for (const z of options.zones) {
      // Served (and, for a signed zone, signed: the SOA carries an RRSIG) before we return.
      await waitUntil(`knotd (zone ${z.name})`, daemon, logFile, async () => {
        const r = await queryDns(server, apex(z.name), 'SOA', { dnssec: z.dnssec, timeoutMs: 500 });
        return r.rcode === 'NOERROR' && r.answers.some((a) => a.type === 'SOA') && (!z.dnssec || r.answers.some((a) => a.type === 'RRSIG'));
      }, new RegExp(`\\[${apex(z.name).replace(/\./g, '\\.')}\\.\\] zone event '[a-z-]+' failed`));
    }
    const trustAnchors = new Map<string, string[]>();
    for (const z of options.zones.filter((zone) => zone.dnssec)) {
      const out = await run(keymgr, ['-c', conf, `${apex(z.name)}.`, 'ds']);
      trustAnchors.set(apex(z.name), out.split('\n').map((l) => l.trim()).filter((l) => /\sDS\s/.test(l)));
    }
    return {
      ...server,
      zones: options.zones.map((z) => z.name),
      trustAnchors,
      async reload(text, zone = options.zones[0].name) {
        const spec = options.zones.find((z) => apex(z.name) === apex(zone));
        if (!spec) throw new Error(`knotd does not serve ${zone}`);
        await writeFile(join(dir, `${apex(zone)}.zone`), zoneFile({ name: zone, text }));
        // -b: knotc returns when the zone is loaded (and signed) again.
        await run(knotc, ['-s', join(dir, 'knot.sock'), '-b', 'zone-reload', `${apex(zone)}.`]);
      },
      log: () => readFile(logFile, 'utf8').catch(() => ''),
      async close() {
        await daemon.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await daemon.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

export interface TestResolverOptions {
  /** The knot whose zones the resolver asks (stub-zones) and whose signed zones' anchors it trusts. */
  readonly server: TestDnsServer;
}

/**
 * Starts an Unbound validating resolver (module-config "validator iterator") for the zones of
 * `server`: signed zones are validated against their trust anchors (answers carry AD), the others
 * are `domain-insecure` (no AD). Bounded start like {@link startDnsServer}.
 */
export async function startValidatingResolver(options: TestResolverOptions): Promise<TestResolver> {
  const unbound = binary('unbound');
  if (!unbound) throw missingError('dns', missingReason(UNBOUND, 'unbound package') ?? 'unbound not found');
  const { server } = options;
  const dir = await mkdtemp(join(tmpdir(), 'a2ad-unbound-'));
  const port = await freePort();
  const conf = join(dir, 'unbound.conf');
  const logFile = join(dir, 'unbound.log');
  const q = (s: string) => JSON.stringify(s);
  const lines = [
    'server:',
    '    interface: 127.0.0.1',
    `    port: ${port}`,
    '    do-ip6: no',
    '    chroot: ""',
    '    username: ""',
    `    directory: ${q(dir)}`,
    `    pidfile: ${q(join(dir, 'unbound.pid'))}`,
    `    logfile: ${q(logFile)}`,
    '    use-syslog: no',
    '    verbosity: 1',
    '    val-log-level: 2',
    '    num-threads: 1',
    '    do-not-query-localhost: no',
    '    module-config: "validator iterator"',
    '    access-control: 127.0.0.0/8 allow',
  ];
  for (const zone of server.zones.map(apex)) {
    // Unbound answers some special-use names itself (test., invalid., …, RFC 6761): a
    // transparent local zone at the apex lets the stub-zone resolve it.
    lines.push(`    local-zone: ${q(`${zone}.`)} transparent`);
    const anchors = server.trustAnchors.get(zone);
    if (anchors) lines.push(...anchors.map((ds) => `    trust-anchor: ${q(ds)}`));
    else lines.push(`    domain-insecure: ${q(`${zone}.`)}`);
  }
  lines.push('remote-control:', '    control-enable: no');
  for (const zone of server.zones.map(apex)) lines.push('stub-zone:', `    name: ${q(`${zone}.`)}`, `    stub-addr: ${server.host}@${server.port}`);
  await writeFile(conf, `${lines.join('\n')}\n`);
  const daemon = new Daemon(unbound, ['-d', '-c', conf]);
  const resolver = { host: '127.0.0.1' as const, port };
  try {
    await waitUntil('unbound', daemon, logFile, async () => {
      const r = await queryDns(resolver, apex(server.zones[0]), 'SOA', { timeoutMs: 1_000 });
      return r.rcode === 'NOERROR' && r.answers.length > 0;
    });
    return {
      ...resolver,
      log: () => readFile(logFile, 'utf8').catch(() => ''),
      async close() {
        await daemon.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await daemon.stop();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
