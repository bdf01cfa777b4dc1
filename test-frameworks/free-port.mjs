/**
 * A free loopback port, for the framework servers that must be told their port up front
 * (BeeAI's `A2AServer`, VoltAgent's `honoServer`): listen on port 0, read it, close. Plain Node:
 * each framework folder imports it as `../free-port.mjs`.
 */
import { createServer } from 'node:net';

export async function freePort() {
  const srv = createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}
