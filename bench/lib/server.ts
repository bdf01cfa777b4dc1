/** Parent side of the fault-server child: start it, ask for stats, stop it. */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { FromServer, ReadyMessage, ServerLayout, StatsMessage, ToServer } from './protocol.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface ServerHandle {
  ready: ReadyMessage;
  pid: number;
  stats(): Promise<StatsMessage>;
  close(): Promise<void>;
}

/** Starts the fault servers in a child process (`node --import tsx`), bounded by `timeoutMs`. */
export async function startServerChild(layout: ServerLayout, timeoutMs = 60_000): Promise<ServerHandle> {
  const child: ChildProcess = fork(fileURLToPath(new URL('./server-child.ts', import.meta.url)), [JSON.stringify(layout)], {
    cwd: ROOT,
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const waiters: Array<(m: FromServer) => void> = [];
  child.on('message', (m: FromServer) => waiters.shift()?.(m));
  const next = <M extends FromServer>(type: M['type']): Promise<M> =>
    new Promise<M>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`fault-server child: no ${type} message within ${timeoutMs} ms`)), timeoutMs);
      const onExit = (code: number | null) => reject(new Error(`fault-server child exited (${code}) before sending ${type}`));
      child.once('exit', onExit);
      waiters.push((m) => {
        clearTimeout(t);
        child.off('exit', onExit);
        if (m.type === type) resolve(m as M);
        else reject(new Error(`fault-server child: expected ${type}, got ${m.type}`));
      });
    });
  const send = (m: ToServer) => child.send(m);
  let ready: ReadyMessage;
  try {
    ready = await next<ReadyMessage>('ready');
  } catch (err) {
    child.kill();
    throw err;
  }
  return {
    ready,
    pid: ready.pid,
    async stats() {
      const p = next<StatsMessage>('stats');
      send({ type: 'stats' });
      return p;
    },
    async close() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      send({ type: 'close' });
      const t = setTimeout(() => child.kill(), 5_000);
      await exited;
      clearTimeout(t);
    },
  };
}
