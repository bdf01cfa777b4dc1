/**
 * The fault servers of the benchmarks, in their own process so the client under test does not
 * share its event loop with them (they still share the machine's cores). Started by
 * bench/run.ts with `fork(..., { execArgv: ['--import', 'tsx'] })`; the layout comes as argv[2]
 * (JSON), the answer and the stats go back over IPC. Listens on 127.0.0.1 only.
 */
import type { FaultServer } from '../../test/helpers/fault-server.js';
import { startFaultServer } from '../../test/helpers/fault-server.js';
import { benchCard } from './card.js';
import type { FromServer, ServerLayout, ToServer } from './protocol.js';

const layout = JSON.parse(process.argv[2] ?? '{}') as ServerLayout;
const send = (m: FromServer): void => {
  process.send?.(m);
};

const servers: FaultServer[] = [];
for (let k = 0; k < layout.origins; k++) {
  const fs = await startFaultServer({ maxRecordedRequests: 0 });
  for (let j = 0; j < layout.perOrigin; j++) fs.endpoint(`a${j}`, { card: benchCard(fs.origin, `a${j}`), cacheControl: layout.cacheControl });
  for (let j = 0; j < (layout.noCacheTwins ?? 0); j++) fs.endpoint(`n${j}`, { card: benchCard(fs.origin, `n${j}`), cacheControl: layout.noCacheControl ?? 'public, no-cache' });
  servers.push(fs);
}
const solo = await startFaultServer({ maxRecordedRequests: 0 });
for (let j = 0; j < layout.soloEndpoints; j++) solo.endpoint(`s${j}`, { card: benchCard(solo.origin, `s${j}`), cacheControl: layout.cacheControl });
servers.push(solo);

async function closeAll(): Promise<void> {
  await Promise.all(servers.map((s) => s.close()));
  process.exit(0);
}

process.on('message', (m: ToServer) => {
  if (m.type === 'stats') {
    const cpu = process.cpuUsage();
    send({
      type: 'stats',
      hits: servers.reduce((n, s) => n + s.hits, 0),
      connections: servers.reduce((n, s) => n + s.connections, 0),
      cpuUserUs: cpu.user,
      cpuSystemUs: cpu.system,
    });
  } else if (m.type === 'close') void closeAll();
});
// The parent went away: never outlive it.
process.on('disconnect', () => void closeAll());

send({
  type: 'ready',
  origins: servers.slice(0, layout.origins).map((s) => s.origin),
  solo: solo.origin,
  cardBytes: servers[0]?.get('a0')?.body.length ?? solo.get('s0')?.body.length ?? 0,
  pid: process.pid,
});
