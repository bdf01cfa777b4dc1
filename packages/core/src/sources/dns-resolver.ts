/**
 * A small DNS client for the DNS source: asks configured recursive resolvers (or an authoritative
 * server) over UDP with EDNS0, asks again over TCP when the answer comes truncated (the TC bit),
 * and bounds everything it reads: the UDP payload size, the TCP answer's bytes, the records per
 * answer, each attempt's time, and the attempts (retries with the project's jittered doubling
 * backoff, `backoffDelay`, rotating through the resolvers). Messages are encoded and decoded by
 * `dns-packet`; SVCB rdata, which it does not know, arrives as raw bytes for `decodeSvcb`. The AD
 * bit (RFC 4035 §3.2.3, data the resolver validated with DNSSEC) is reported per answer.
 *
 * An off-path attacker cannot answer (RFC 5452): each query has an unpredictable id (node:crypto,
 * not `Math.random`) and goes out from a port the system picks at random; a UDP datagram counts
 * only when it comes from the exact address and port asked, carries the query's id and QR bit,
 * and echoes its one question (name case-insensitively, type, class IN). Any other datagram is
 * ignored, never fatal: the attempt keeps waiting until its timeout. Over TCP (one connection to
 * the server asked) the same id and question checks apply, and a mismatch, a malformed or a
 * still-truncated answer fails the attempt: a truncated TCP answer is never asked again.
 *
 * A record is the answer only when its owner name is the name asked, or the end of the CNAME
 * chain that starts there (at most {@link MAX_CNAME_HOPS} CNAMEs, in any order in the answer
 * section): a record for another owner name, even of the asked type and in a well-formed answer,
 * is ignored (its owner is listed in `ignoredOwners`) and never read as the asked name's record.
 *
 * @module
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { randomInt } from 'node:crypto';
import type * as dnsPacket from 'dns-packet';
import { systemClock, systemRandom, type Clock, type Random } from '../clock/index.js';
import { DiscoveryError } from '../errors.js';
import { backoffDelay } from '../rules/backoff.js';
import { RR_TYPES, parseDnsServer, type DnsServer as Server } from '../rules/dns-aid.js';
import { DNS_SOURCE_DEFAULTS } from '../rules/defaults.js';
import { ATTR, SPAN, withSpan, type SpanScope } from '../telemetry/index.js';

/**
 * dns-packet, loaded with the first question a resolver asks: a process that reads no DNS source
 * never loads it (part of a command's start, docs/benchmarks.md "Issue 43: the command line").
 */
let codec: typeof dnsPacket | undefined;

async function loadCodec(): Promise<typeof dnsPacket> {
  return (codec ??= await import('dns-packet'));
}

/** The record types the DNS source asks for. */
export type DnsQueryType = keyof typeof RR_TYPES;

/** One resource record of an answer section. */
interface DnsRecord {
  /** Owner name, lower case, no trailing dot. */
  readonly name: string;
  readonly type: DnsQueryType | 'OTHER';
  readonly ttl: number;
  /**
   * By type: `A`/`AAAA`/`PTR` the text; `TXT` the character-strings (UTF-8); `SRV`
   * `{priority, weight, port, target}`; `SVCB` the raw rdata bytes (see `decodeSvcb`).
   */
  readonly data: string | readonly string[] | Uint8Array | { readonly priority: number; readonly weight: number; readonly port: number; readonly target: string };
}

/** A resolver's answer to one question. */
export interface DnsAnswer {
  readonly name: string;
  readonly type: DnsQueryType;
  /** `NOERROR` or `NXDOMAIN` (other rcodes are errors). */
  readonly rcode: 'NOERROR' | 'NXDOMAIN';
  /**
   * The records of the answer section of the asked type owned by the name asked, or by the end of
   * the CNAME chain that starts at it (the CNAMEs themselves are not listed). A record for any
   * other owner name is not here: see `ignoredOwners`.
   */
  readonly records: readonly DnsRecord[];
  /**
   * The owner names (lower case, no trailing dot, each once) of answer records of the asked type
   * that were ignored because they belong to another name than the one asked (or its CNAME
   * target). Absent or empty when there were none.
   */
  readonly ignoredOwners?: readonly string[];
  /** The AD bit: the resolver validated the answer with DNSSEC. */
  readonly authenticated: boolean;
  /** The resolver that answered, `host:port`. */
  readonly server: string;
  /** True when the UDP answer was truncated and this one came over TCP. */
  readonly tcp: boolean;
}

/** What the DNS source needs of a resolver; inject another for tests or a custom transport. */
export interface DnsResolver {
  /**
   * Asks one question. Resolves with the answer (NXDOMAIN and empty answers included).
   *
   * @throws DiscoveryError `ERR_FETCH_TIMEOUT` (no answer in time from any attempt),
   * `ERR_FETCH_NETWORK` (SERVFAIL, REFUSED, a malformed or mismatched message, a socket error),
   * `ERR_BODY_TOO_LARGE` (an answer over `maxTcpBytes` or with more than `maxRecords` records).
   */
  query(name: string, type: DnsQueryType, options?: { signal?: AbortSignal }): Promise<DnsAnswer>;
  /** The resolvers asked, `host:port`, in order. */
  readonly servers: readonly string[];
}

/** Inputs of {@link createDnsResolver}. Durations are milliseconds. */
export interface DnsResolverOptions {
  /** Resolvers as `host:port` (`127.0.0.1:53`, `[::1]:5353`; an address without a port means 53). IP addresses only. */
  servers: readonly string[];
  /** One attempt's wait. Default 2,000. */
  timeoutMs?: number;
  /** Further attempts after a failed one. Default 2. */
  retries?: number;
  /**
   * Wait before the first retry, doubled each time and shortened at random by up to half
   * (`backoffDelay` with jitter 0.5, so many replicas do not retry in step). Default 200.
   */
  backoffMs?: number;
  /** EDNS0 UDP payload size advertised. Default 4,096. */
  udpPayloadSize?: number;
  /** Largest answer read over TCP, bytes. Default 65,535. */
  maxTcpBytes?: number;
  /** Records accepted in one answer's answer section. Default 64. */
  maxRecords?: number;
  /** Timers of each attempt's timeout and sleeps of the backoff. Default {@link systemClock}. */
  clock?: Clock;
  /** The backoff's jitter. Default {@link systemRandom}. */
  random?: Random;
  /**
   * The query id of each attempt: an integer from 0 to 65,535 (a UDP attempt and its TCP retry
   * share it). Default `randomInt(65_536)` from node:crypto: ids an off-path attacker cannot
   * predict. Inject a fixed sequence in tests only.
   */
  queryId?: () => number;
}

/** The most retries (`retries` is bounded by it); the backoff is capped at its last doubling. */
const MAX_RETRIES = 10;
/** The backoff's cap: the last doubling MAX_RETRIES retries can reach (2^9). */
const MAX_BACKOFF_FACTOR = 512;
/** The share of each backoff delay taken away at random (the card cache's backoff jitter too). */
const BACKOFF_JITTER = 0.5;

/**
 * Creates a resolver client. No I/O until `query`.
 *
 * @throws DiscoveryError `ERR_CONFIG_INVALID` for a bad server address, bound, clock, random or query id source.
 * @example
 * const resolver = createDnsResolver({ servers: ['127.0.0.1:53'] });
 * const answer = await resolver.query('_billing._a2a._agents.example.com', 'SVCB');
 */
export function createDnsResolver(options: DnsResolverOptions): DnsResolver {
  const problems: string[] = [];
  const servers: Server[] = [];
  if (!Array.isArray(options?.servers) || options.servers.length === 0) problems.push('servers: give at least one resolver ("127.0.0.1:53")');
  else options.servers.forEach((s, i) => {
    const parsed = parseDnsServer(s);
    if ('problem' in parsed) problems.push(`servers[${i}]: ${parsed.problem}`);
    else servers.push(parsed);
  });
  const bound = (key: keyof typeof DNS_SOURCE_DEFAULTS & keyof DnsResolverOptions, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const v = options?.[key];
    if (v === undefined) return DNS_SOURCE_DEFAULTS[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) problems.push(`${key}: must be an integer from ${min} to ${max}, got ${JSON.stringify(v)}`);
    return v as number;
  };
  const clock = options?.clock ?? systemClock;
  if (typeof clock?.setTimer !== 'function' || typeof clock.sleep !== 'function') problems.push('clock: must be a Clock (setTimer, sleep), e.g. systemClock');
  const random = options?.random ?? systemRandom;
  if (typeof random !== 'function') problems.push('random: must be a function returning numbers in [0, 1), e.g. systemRandom');
  const queryId = options?.queryId ?? secureQueryId;
  if (typeof queryId !== 'function') problems.push('queryId: must be a function returning query ids from 0 to 65535 (the default draws them from node:crypto)');
  const settings: Settings = {
    timeoutMs: bound('timeoutMs', 1),
    retries: bound('retries', 0, MAX_RETRIES),
    backoffMs: bound('backoffMs', 0),
    udpPayloadSize: bound('udpPayloadSize', 512, 65_535),
    maxTcpBytes: bound('maxTcpBytes', 512, 65_535),
    maxRecords: bound('maxRecords', 1),
    clock,
    random,
    queryId,
  };
  if (problems.length > 0) throw new DiscoveryError('ERR_CONFIG_INVALID', `DNS resolver: ${problems.join('; ')}`, { stage: 'config' });
  return new UdpTcpResolver(servers, settings);
}

/** A query id no one off the path can guess (RFC 5452 §9.2): 16 bits from the system's CSPRNG. */
function secureQueryId(): number {
  return randomInt(65_536);
}

type Settings = Required<Omit<DnsResolverOptions, 'servers'>>;

/** The one question asked, as an answer must echo it. */
interface Question {
  readonly id: number;
  readonly name: string;
  readonly type: DnsQueryType;
}

class UdpTcpResolver implements DnsResolver {
  readonly servers: readonly string[];
  readonly #servers: readonly Server[];
  readonly #s: Settings;
  #next = 0;

  constructor(servers: readonly Server[], settings: Settings) {
    this.#servers = servers;
    this.servers = Object.freeze(servers.map((s) => s.text));
    this.#s = settings;
  }

  query(name: string, type: DnsQueryType, options: { signal?: AbortSignal } = {}): Promise<DnsAnswer> {
    const fqdn = name.replace(/\.$/, '').toLowerCase();
    return withSpan(SPAN.dnsQuery, { kind: 'client', attributes: { [ATTR.dnsQuestionName]: fqdn, [ATTR.dnsQuestionType]: type } }, (span) => this.#attempts(fqdn, type, options, span));
  }

  async #attempts(fqdn: string, type: DnsQueryType, options: { signal?: AbortSignal }, span: SpanScope): Promise<DnsAnswer> {
    let last: DiscoveryError | undefined;
    const aborted = (): DiscoveryError => new DiscoveryError('ERR_FETCH_NETWORK', `DNS ${type} ${fqdn}: aborted`, { stage: 'source' });
    for (let attempt = 0; attempt <= this.#s.retries; attempt++) {
      if (options.signal?.aborted) throw aborted();
      if (attempt > 0) {
        const ms = backoffDelay(attempt, { baseMs: this.#s.backoffMs, maxMs: this.#s.backoffMs * MAX_BACKOFF_FACTOR, jitter: BACKOFF_JITTER, random: this.#s.random });
        try {
          await this.#s.clock.sleep(ms, options.signal);
        } catch {
          throw aborted();
        }
      }
      const server = this.#servers[(this.#next + attempt) % this.#servers.length]!;
      try {
        const answer = await this.#ask(server, fqdn, type, options.signal);
        this.#next = this.#servers.indexOf(server);
        if (span.recording) {
          span.set({
            [ATTR.serverAddress]: server.host,
            [ATTR.serverPort]: server.port,
            [ATTR.dnsRcode]: answer.rcode,
            [ATTR.dnsAuthenticated]: answer.authenticated,
            [ATTR.dnsTcp]: answer.tcp,
            [ATTR.records]: answer.records.length,
            [ATTR.dnsAttempts]: attempt + 1,
          });
        }
        return answer;
      } catch (err) {
        last = err instanceof DiscoveryError ? err : new DiscoveryError('ERR_FETCH_NETWORK', `DNS ${type} ${fqdn} at resolver ${server.text}: ${err instanceof Error ? err.message : String(err)}`, { stage: 'source', cause: err });
        // An answer too large stays too large, a broken id source stays broken: no point asking again.
        if (last.code === 'ERR_BODY_TOO_LARGE' || last.code === 'ERR_CONFIG_INVALID') break;
      }
    }
    // The span is failed with the last error (withSpan marks a rejected promise failed).
    throw last!;
  }

  #queryId(): number {
    const id = this.#s.queryId();
    if (!Number.isInteger(id) || id < 0 || id > 65_535) throw new DiscoveryError('ERR_CONFIG_INVALID', `DNS resolver: the queryId option returned ${JSON.stringify(id)}, not a query id from 0 to 65535`, { stage: 'config' });
    return id;
  }

  async #ask(server: Server, name: string, type: DnsQueryType, signal: AbortSignal | undefined): Promise<DnsAnswer> {
    const packets = await loadCodec();
    const question: Question = { id: this.#queryId(), name, type };
    const packet: dnsPacket.Packet = {
      type: 'query',
      id: question.id,
      // RFC 6840 §5.7: AD set in a query asks the resolver to report whether it validated the answer.
      flags: packets.RECURSION_DESIRED | packets.AUTHENTIC_DATA,
      questions: [{ name, type: qtype(type), class: 'IN' }],
      additionals: [{ type: 'OPT', name: '.', udpPayloadSize: this.#s.udpPayloadSize } as unknown as dnsPacket.Answer],
    };
    const where = `DNS ${type} ${name} at resolver ${server.text}`;
    const query = packets.encode(packet);
    let response = await this.#udp(server, query, question, where, signal);
    let tcp = false;
    if (response.flag_tc) {
      // RFC 7766 §6.2.1: ask the same server the same question over TCP, once.
      response = this.#decode(await this.#tcp(server, query, where, signal), where, 'TCP');
      const mismatch = mismatchOf(response, question);
      if (mismatch !== undefined) throw new DiscoveryError('ERR_FETCH_NETWORK', `${where}: the TCP answer ${mismatch}`, { stage: 'source' });
      if (response.flag_tc) throw new DiscoveryError('ERR_FETCH_NETWORK', `${where}: the TCP answer is truncated too (TC bit set); it is not asked again`, { stage: 'source' });
      tcp = true;
    }
    const rcode = (response as { rcode?: string }).rcode;
    if (rcode !== 'NOERROR' && rcode !== 'NXDOMAIN') throw new DiscoveryError('ERR_FETCH_NETWORK', `${where}: the resolver answered ${rcode}`, { stage: 'source' });
    const answers = response.answers ?? [];
    if (answers.length > this.#s.maxRecords) {
      throw new DiscoveryError('ERR_BODY_TOO_LARGE', `${where}: the answer carries ${answers.length} records, more than maxRecords ${this.#s.maxRecords}`, { stage: 'source' });
    }
    const owner = chainEnd(name, answers);
    const records: DnsRecord[] = [];
    const ignoredOwners = new Set<string>();
    for (const a of answers) {
      if (typeOf(a.type) !== type) continue;
      const recordName = bareName(a.name);
      // A record for another owner name is not this name's record, whatever it says.
      if (recordName !== owner) {
        ignoredOwners.add(recordName);
        continue;
      }
      records.push(Object.freeze({ name: recordName, type, ttl: (a as { ttl?: number }).ttl ?? 0, data: recordData(type, (a as { data?: unknown }).data) }));
    }
    return Object.freeze({
      name,
      type,
      rcode,
      records: Object.freeze(records),
      ...(ignoredOwners.size > 0 && { ignoredOwners: Object.freeze([...ignoredOwners]) }),
      authenticated: response.flag_ad === true,
      server: server.text,
      tcp,
    });
  }

  #decode(message: Buffer, where: string, transport: 'TCP'): dnsPacket.DecodedPacket {
    try {
      return codec!.decode(message);
    } catch (err) {
      throw new DiscoveryError('ERR_FETCH_NETWORK', `${where}: the ${transport} answer is not a DNS message (${err instanceof Error ? err.message : String(err)})`, { stage: 'source', cause: err });
    }
  }

  /**
   * Sends the query from a fresh socket (a port the system picks) and resolves with the first
   * datagram that answers it; every other datagram is ignored (counted for the timeout's message).
   */
  #udp(server: Server, query: Buffer, question: Question, where: string, signal: AbortSignal | undefined): Promise<dnsPacket.DecodedPacket> {
    return new Promise<dnsPacket.DecodedPacket>((resolve, reject) => {
      if (signal?.aborted) return reject(new DiscoveryError('ERR_FETCH_NETWORK', `${where}: aborted`, { stage: 'source' }));
      const socket = dgram.createSocket(server.family === 6 ? 'udp6' : 'udp4');
      let settled = false;
      let ignored = 0;
      let lastIgnored = '';
      const done = (err: Error | undefined, answer?: dnsPacket.DecodedPacket): void => {
        // Settles once: a late error, end or timeout after the answer changes nothing.
        if (settled) return;
        settled = true;
        timer.cancel();
        signal?.removeEventListener('abort', onAbort);
        socket.removeAllListeners('message');
        socket.close();
        if (err) reject(err);
        else resolve(answer!);
      };
      const ignore = (why: string): void => {
        ignored++;
        lastIgnored = why;
      };
      const timer = this.#s.clock.setTimer(() => {
        const note = ignored > 0 ? ` (${ignored} datagram${ignored === 1 ? '' : 's'} ignored, the last ${lastIgnored})` : '';
        done(new DiscoveryError('ERR_FETCH_TIMEOUT', `${where}: no answer over UDP within timeoutMs ${this.#s.timeoutMs}${note}`, { stage: 'source' }));
      }, this.#s.timeoutMs);
      const onAbort = (): void => done(new DiscoveryError('ERR_FETCH_NETWORK', `${where}: aborted`, { stage: 'source' }));
      signal?.addEventListener('abort', onAbort, { once: true });
      socket.on('error', (err) => done(new DiscoveryError('ERR_FETCH_NETWORK', `${where}: ${err.message}`, { stage: 'source', cause: err })));
      socket.on('message', (msg, rinfo) => {
        // Only the server asked may answer: an off-path datagram is ignored.
        if (rinfo.port !== server.port || net.isIP(rinfo.address) === 0 || normalizeIp(rinfo.address) !== normalizeIp(server.host)) return ignore(`came from ${rinfo.address}:${rinfo.port}, not the resolver asked`);
        let answer: dnsPacket.DecodedPacket;
        try {
          answer = codec!.decode(msg);
        } catch {
          return ignore('was not a DNS message');
        }
        const mismatch = mismatchOf(answer, question);
        if (mismatch !== undefined) return ignore(mismatch);
        if (msg.length > this.#s.udpPayloadSize) {
          done(new DiscoveryError('ERR_BODY_TOO_LARGE', `${where}: a UDP answer of ${msg.length} bytes, more than the udpPayloadSize ${this.#s.udpPayloadSize} asked for`, { stage: 'source' }));
          return;
        }
        done(undefined, answer);
      });
      socket.send(query, server.port, server.host);
    });
  }

  #tcp(server: Server, query: Buffer, where: string, signal: AbortSignal | undefined): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      if (signal?.aborted) return reject(new DiscoveryError('ERR_FETCH_NETWORK', `${where}: aborted`, { stage: 'source' }));
      const socket = net.connect({ host: server.host, port: server.port });
      const chunks: Buffer[] = [];
      let received = 0;
      let expected: number | undefined;
      let settled = false;
      const done = (err: Error | undefined, msg?: Buffer): void => {
        // Settles once: a late error, end or timeout after the answer changes nothing.
        if (settled) return;
        settled = true;
        timer.cancel();
        signal?.removeEventListener('abort', onAbort);
        socket.removeAllListeners('data');
        socket.destroy();
        if (err) reject(err);
        else resolve(msg!);
      };
      const timer = this.#s.clock.setTimer(() => done(new DiscoveryError('ERR_FETCH_TIMEOUT', `${where}: no answer over TCP within timeoutMs ${this.#s.timeoutMs}`, { stage: 'source' })), this.#s.timeoutMs);
      const onAbort = (): void => done(new DiscoveryError('ERR_FETCH_NETWORK', `${where}: aborted`, { stage: 'source' }));
      signal?.addEventListener('abort', onAbort, { once: true });
      socket.on('error', (err) => done(new DiscoveryError('ERR_FETCH_NETWORK', `${where}: TCP: ${err.message}`, { stage: 'source', cause: err })));
      socket.on('end', () => done(new DiscoveryError('ERR_FETCH_NETWORK', `${where}: the TCP connection closed before the whole answer (${received} bytes)`, { stage: 'source' })));
      socket.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        received += chunk.length;
        if (expected === undefined && received >= 2) {
          expected = Buffer.concat(chunks).readUInt16BE(0);
          // RFC 7766 §8: a two-byte length precedes the message.
          if (expected > this.#s.maxTcpBytes) {
            done(new DiscoveryError('ERR_BODY_TOO_LARGE', `${where}: a TCP answer of ${expected} bytes, more than maxTcpBytes ${this.#s.maxTcpBytes}`, { stage: 'source' }));
            return;
          }
        }
        if (expected !== undefined && received >= expected + 2) done(undefined, Buffer.concat(chunks).subarray(2, expected + 2));
      });
      const framed = Buffer.alloc(query.length + 2);
      framed.writeUInt16BE(query.length, 0);
      query.copy(framed, 2);
      socket.write(framed);
    });
  }
}

/**
 * Why a decoded message does not answer the question asked (RFC 5452 §4.3: id, QR bit and the
 * echoed question, name compared case-insensitively), or undefined when it does.
 */
function mismatchOf(answer: dnsPacket.DecodedPacket, question: Question): string | undefined {
  if (answer.type !== 'response') return 'was not a response (QR bit clear)';
  if (answer.id !== question.id) return `carried id ${answer.id}, not the query's`;
  const questions = answer.questions ?? [];
  const q = questions[0];
  if (questions.length !== 1 || q === undefined) return `echoed ${questions.length} questions, not the one asked`;
  const name = q.name.toLowerCase().replace(/\.$/, '');
  if (name !== question.name || typeOf(q.type) !== question.type || q.class !== 'IN') return `was for another question (${name} ${q.type} ${q.class})`;
  return undefined;
}

/** The most CNAMEs followed from the name asked to the owner of its records (RFC 1034 §3.6.2 chains). */
const MAX_CNAME_HOPS = 8;

/** A name as compared here: lower case, no trailing dot. */
function bareName(name: string): string {
  return String(name).toLowerCase().replace(/\.$/, '');
}

/**
 * The owner name whose records answer a question for `name`: `name` itself, or the end of the
 * CNAME chain starting at it in the answer section (at most {@link MAX_CNAME_HOPS} hops; a loop
 * ends where it closes). A CNAME owned by any other name moves nothing.
 */
function chainEnd(name: string, answers: readonly dnsPacket.Answer[]): string {
  let current = name;
  const seen = new Set([current]);
  for (let hop = 0; hop < MAX_CNAME_HOPS; hop++) {
    const cname = answers.find((a) => a.type === 'CNAME' && bareName(a.name) === current);
    if (cname === undefined) break;
    const target = bareName(String((cname as { data?: unknown }).data ?? ''));
    if (target === '' || seen.has(target)) break;
    seen.add(target);
    current = target;
  }
  return current;
}

function qtype(type: DnsQueryType): dnsPacket.RecordType {
  // dns-packet names the types it does not know `UNKNOWN_<n>` (SVCB is one).
  return (type === 'SVCB' ? `UNKNOWN_${RR_TYPES.SVCB}` : type) as dnsPacket.RecordType;
}

function typeOf(t: string): DnsQueryType | 'OTHER' {
  if (t === `UNKNOWN_${RR_TYPES.SVCB}`) return 'SVCB';
  return t in RR_TYPES ? (t as DnsQueryType) : 'OTHER';
}

function recordData(type: DnsQueryType, data: unknown): DnsRecord['data'] {
  switch (type) {
    case 'TXT': {
      const list = Array.isArray(data) ? data : [data];
      return Object.freeze(list.map((s) => (Buffer.isBuffer(s) ? s.toString('utf8') : String(s))));
    }
    case 'SRV': {
      const d = data as { priority?: number; weight?: number; port?: number; target?: string };
      return Object.freeze({ priority: d.priority ?? 0, weight: d.weight ?? 0, port: d.port ?? 0, target: String(d.target ?? '').toLowerCase().replace(/\.$/, '') });
    }
    case 'SVCB':
      return Buffer.isBuffer(data) ? new Uint8Array(data) : new Uint8Array();
    default:
      return String(data).toLowerCase().replace(/\.$/, '');
  }
}

function normalizeIp(address: string): string {
  return address.replace(/^::ffff:/, '').toLowerCase();
}
