/**
 * A STAND-IN for the real DNS servers of test/helpers/dns-server.ts (Knot, Unbound), for tests that
 * must run everywhere (a plain `npm test` where Knot is missing): an in-process responder on one
 * loopback port, UDP and TCP, built with dns-packet. It is not a DNS server: it answers what the
 * test says, from a table of records ({@link zoneHandler}) or from a handler that may misbehave on
 * purpose (another id, another question, TC set, garbage) — which no real server does on request.
 * What only a real server proves (zone files, signing, validation) stays in the Knot tests.
 *
 * - {@link startStandInDns}: the responder; every query it received is in `queries`.
 * - {@link answerFor}: a well-formed response to a query (id and question echoed).
 * - {@link zoneHandler}: answers from records keyed by name and type, with the AD bit set or not
 *   per name (the stand-in for a validating resolver: Unbound sets AD for a signed zone only).
 * - {@link svcbRdata}: RFC 9460 SVCB rdata (dns-packet does not know SVCB; it travels as UNKNOWN_64).
 */
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server, type Socket as TcpSocket } from 'node:net';
import dnsPacket from 'dns-packet';

/** One query the stand-in received. */
export interface StandInQuery {
  readonly transport: 'udp' | 'tcp';
  readonly id: number;
  /** The question's name, lower case, no trailing dot. */
  readonly name: string;
  /** dns-packet's type name (`UNKNOWN_64` for SVCB). */
  readonly type: string;
  readonly class: string;
  readonly packet: dnsPacket.DecodedPacket;
  /** The querier's address and port (UDP; the TCP peer for TCP). */
  readonly from: { readonly address: string; readonly port: number };
}

/** A reply: a packet to encode, or raw bytes sent as they are (framed with their length over TCP). */
export type StandInReply = dnsPacket.Packet | Buffer;

/** What to send back to one query: nothing (silence), one reply, or several datagrams in order (UDP). */
export type StandInHandler = (q: StandInQuery) => StandInReply | readonly StandInReply[] | undefined | Promise<StandInReply | readonly StandInReply[] | undefined>;

export interface StandInDns {
  readonly host: '127.0.0.1';
  /** UDP and TCP port. */
  readonly port: number;
  /** `127.0.0.1:<port>`, as the resolver's `servers` take it. */
  readonly address: string;
  /** Every query received, in order. */
  readonly queries: StandInQuery[];
  /** TCP connections accepted. */
  readonly tcpConnections: () => number;
  /** The handler; replace it between tests. */
  handler: StandInHandler;
  close(): Promise<void>;
}

const SVCB = 64;

/** Binds UDP and TCP on one free loopback port. */
async function bindBoth(): Promise<{ udp: Socket; tcp: Server }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const udp = createSocket('udp4');
    const port = await new Promise<number>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(0, '127.0.0.1', () => resolve(udp.address().port));
    });
    const tcp = createServer();
    const ok = await new Promise<boolean>((resolve) => {
      tcp.once('error', () => resolve(false));
      tcp.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (ok) return { udp, tcp };
    await new Promise<void>((r) => udp.close(() => r()));
  }
  throw new Error('no loopback port free for both UDP and TCP');
}

function toQuery(packet: dnsPacket.DecodedPacket, transport: 'udp' | 'tcp', from: { address: string; port: number }): StandInQuery {
  const q = packet.questions?.[0];
  return { transport, id: packet.id ?? 0, name: (q?.name ?? '').toLowerCase().replace(/\.$/, ''), type: String(q?.type ?? ''), class: String(q?.class ?? ''), packet, from };
}

function encode(reply: StandInReply): Buffer {
  return Buffer.isBuffer(reply) ? reply : dnsPacket.encode(reply);
}

/** Starts the stand-in on a free loopback port. */
export async function startStandInDns(handler: StandInHandler): Promise<StandInDns> {
  const { udp, tcp } = await bindBoth();
  const port = udp.address().port;
  const queries: StandInQuery[] = [];
  const open = new Set<TcpSocket>();
  let connections = 0;
  const self: StandInDns = {
    host: '127.0.0.1',
    port,
    address: `127.0.0.1:${port}`,
    queries,
    tcpConnections: () => connections,
    handler,
    async close() {
      for (const s of open) s.destroy();
      await Promise.all([new Promise<void>((r) => udp.close(() => r())), new Promise<void>((r) => tcp.close(() => r()))]);
    },
  };
  const replies = async (q: StandInQuery): Promise<StandInReply[]> => {
    const r = await self.handler(q);
    if (r === undefined) return [];
    return Array.isArray(r) ? [...(r as readonly StandInReply[])] : [r as StandInReply];
  };
  udp.on('message', (msg, rinfo) => {
    let packet: dnsPacket.DecodedPacket;
    try {
      packet = dnsPacket.decode(msg);
    } catch {
      return;
    }
    const q = toQuery(packet, 'udp', { address: rinfo.address, port: rinfo.port });
    queries.push(q);
    void replies(q).then(async (list) => {
      for (const reply of list) await new Promise<void>((r) => udp.send(encode(reply), rinfo.port, rinfo.address, () => r()));
    });
  });
  tcp.on('connection', (socket) => {
    connections++;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2 || buffered.length < 2 + buffered.readUInt16BE(0)) return;
      const message = buffered.subarray(2, 2 + buffered.readUInt16BE(0));
      buffered = buffered.subarray(2 + message.length);
      let packet: dnsPacket.DecodedPacket;
      try {
        packet = dnsPacket.decode(message);
      } catch {
        socket.destroy();
        return;
      }
      const q = toQuery(packet, 'tcp', { address: socket.remoteAddress ?? '', port: socket.remotePort ?? 0 });
      queries.push(q);
      void replies(q).then((list) => {
        const reply = list[0];
        if (reply === undefined) return;
        const bytes = encode(reply);
        const framed = Buffer.alloc(bytes.length + 2);
        framed.writeUInt16BE(bytes.length, 0);
        bytes.copy(framed, 2);
        socket.write(framed);
      });
    });
  });
  return self;
}

/** Options of {@link answerFor}. */
export interface AnswerOptions {
  /** The AD bit (the resolver validated the answer). Default false. */
  ad?: boolean;
  /** The TC bit (truncated; the client must ask again over TCP). Default false. */
  tc?: boolean;
  rcode?: 'NOERROR' | 'NXDOMAIN' | 'SERVFAIL' | 'REFUSED';
  /** Echo this id instead of the query's. */
  id?: number;
  /** Echo this question instead of the query's. */
  question?: { name: string; type: string; class?: string };
}

/** A response to `q`: its id and question echoed (unless told otherwise), with these answers. */
export function answerFor(q: StandInQuery, answers: readonly dnsPacket.Answer[], o: AnswerOptions = {}): dnsPacket.Packet {
  const rcode = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 }[o.rcode ?? 'NOERROR'];
  const flags = dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (o.ad ? dnsPacket.AUTHENTIC_DATA : 0) | (o.tc ? dnsPacket.TRUNCATED_RESPONSE : 0) | rcode;
  const question = o.question ?? { name: q.name, type: q.type, class: q.class };
  return {
    type: 'response',
    id: o.id ?? q.id,
    flags,
    questions: [{ name: question.name, type: question.type as dnsPacket.RecordType, class: (question.class ?? 'IN') as dnsPacket.RecordClass }],
    answers: [...answers],
  };
}

/** An SVCB record for {@link zoneHandler} (type UNKNOWN_64, raw rdata). */
export function svcbRecord(name: string, ttl: number, rdata: Buffer): dnsPacket.Answer {
  return { type: `UNKNOWN_${SVCB}`, name, ttl, class: 'IN', data: rdata } as unknown as dnsPacket.Answer;
}

/** A TXT record for {@link zoneHandler}, one character-string per item. */
export function txtRecord(name: string, ttl: number, strings: readonly string[]): dnsPacket.Answer {
  return { type: 'TXT', name, ttl, class: 'IN', data: [...strings] } as dnsPacket.Answer;
}

/**
 * Answers from `records` (the answer section for each `name TYPE`, TYPE `SVCB`, `TXT`, `SRV`,
 * `PTR`…): NXDOMAIN for a name with no record at all, an empty NOERROR for a name without that
 * type. `ad(name)` says whether the answer carries the AD bit (default: never).
 */
export function zoneHandler(records: Readonly<Record<string, readonly dnsPacket.Answer[]>>, o: { ad?: (name: string) => boolean } = {}): StandInHandler {
  const names = new Set(Object.keys(records).map((k) => k.split(' ')[0]!.toLowerCase()));
  return (q) => {
    const type = q.type === `UNKNOWN_${SVCB}` ? 'SVCB' : q.type;
    const answers = records[`${q.name} ${type}`];
    const ad = o.ad?.(q.name) === true;
    if (answers !== undefined) return answerFor(q, answers, { ad });
    return answerFor(q, [], { ad, rcode: names.has(q.name) ? 'NOERROR' : 'NXDOMAIN' });
  };
}

/** RFC 9460 §2.2 SVCB rdata: priority, uncompressed target, params (key, length, value) sorted by key. */
export function svcbRdata(priority: number, target: string, params: ReadonlyArray<readonly [number, Buffer | string]>): Buffer {
  const name = target === '.' ? Buffer.from([0]) : Buffer.concat([...target.replace(/\.$/, '').split('.').map((l) => Buffer.concat([Buffer.from([l.length]), Buffer.from(l, 'latin1')])), Buffer.from([0])]);
  const head = Buffer.alloc(2);
  head.writeUInt16BE(priority);
  const ps = [...params].sort((a, b) => a[0] - b[0]).map(([k, v]) => {
    const value = Buffer.isBuffer(v) ? v : Buffer.from(v, 'utf8');
    const h = Buffer.alloc(4);
    h.writeUInt16BE(k, 0);
    h.writeUInt16BE(value.length, 2);
    return Buffer.concat([h, value]);
  });
  return Buffer.concat([head, name, ...ps]);
}
