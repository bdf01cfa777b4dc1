/**
 * The SQLite file is one process's, whatever the name it is opened by: a second process opening
 * it through the same path, a symlink or a hard link is refused with `ERR_STORE_LOCKED` naming the
 * real file; after the first closes, or is killed with SIGKILL, the next one opens. Real
 * processes: this file, run with `HOLD_STORE=<path>`, is the other process (it opens the store,
 * says so on stdout, and closes when its stdin ends).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { link, mkdtemp, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDiscoveryError } from '../../packages/core/src/errors.js';
import { openStateStore } from '../../packages/store/src/index.js';

const HOLD = process.env.HOLD_STORE;

if (HOLD !== undefined) {
  // The child: open, report, hold until stdin ends.
  try {
    const store = await openStateStore(`sqlite:${HOLD}`);
    await store.cards.delete('https://nothing.example.com/');
    process.stdout.write(`${JSON.stringify({ open: true })}\n`);
    process.stdin.resume();
    await new Promise((r) => process.stdin.on('end', r));
    await store.close();
  } catch (err) {
    process.stdout.write(`${JSON.stringify({ open: false, code: isDiscoveryError(err) ? err.code : String(err), message: (err as Error).message })}\n`);
  }
} else {
  interface Opened {
    open: boolean;
    code?: string;
    message?: string;
  }

  /** Starts a process opening the store at `path`; resolves with its report and the process (holding the store when it opened). */
  function other(path: string): Promise<{ report: Opened; child: ChildProcessWithoutNullStreams }> {
    const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname], { env: { ...process.env, HOLD_STORE: path } });
    return new Promise((resolve, reject) => {
      let out = '';
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const nl = out.indexOf('\n');
        if (nl >= 0) resolve({ report: JSON.parse(out.slice(0, nl)) as Opened, child });
      });
      child.on('exit', (code) => reject(new Error(`the other process exited ${code} before reporting: ${err}`)));
    });
  }

  async function refused(path: string, real: string): Promise<void> {
    const { report, child } = await other(path);
    child.stdin.end();
    assert.equal(report.open, false, `${path} must be refused`);
    assert.equal(report.code, 'ERR_STORE_LOCKED', report.message);
    assert.match(report.message!, /in use by another process/);
    assert.ok(report.message!.includes(`store ${real}`), `the message names the real file: ${report.message}`);
    assert.match(report.message!, /stop the other one/);
  }

  function ended(child: ChildProcessWithoutNullStreams): Promise<void> {
    return new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));
  }

  describe('the SQLite store lock holds the file, not its name', () => {
    let dir: string;
    let file: string;
    let real: string;
    let viaSymlink: string;
    let viaHardLink: string;
    const children: ChildProcessWithoutNullStreams[] = [];

    before(async () => {
      dir = await mkdtemp(join(tmpdir(), 'a2a-lock-'));
      file = join(dir, 'a2a.sqlite');
      real = join(await realpath(dir), 'a2a.sqlite');
      // Create the file (and its tables) once, so the links have something to point at.
      const s = await openStateStore(`sqlite:${file}`);
      await s.close();
      viaSymlink = join(dir, 'linked.sqlite');
      await symlink(file, viaSymlink);
      viaHardLink = join(dir, 'hard.sqlite');
      await link(file, viaHardLink);
    });

    after(async () => {
      for (const c of children) c.kill('SIGKILL');
      await Promise.all(children.map(ended));
      await rm(dir, { recursive: true, force: true });
    });

    /** Runs `body` while this process holds the store open through its first name. */
    async function whileHeld(body: () => Promise<void>): Promise<void> {
      const first = await openStateStore(`sqlite:${file}`);
      try {
        await body();
      } finally {
        await first.close();
      }
    }

    test('a second process through a symlink is refused, the message naming the real file', () => whileHeld(() => refused(viaSymlink, real)));

    test('a second process through a hard link is refused', () => whileHeld(() => refused(viaHardLink, join(real, '..', 'hard.sqlite'))));

    test('a second process through the same path is refused', () => whileHeld(() => refused(file, real)));

    test('after the first closes the next opens; while it holds the file, this process is refused through every name', async () => {
      await whileHeld(() => Promise.resolve());
      const { report, child } = await other(viaHardLink);
      children.push(child);
      assert.deepEqual(report, { open: true });
      for (const name of [viaSymlink, file, viaHardLink]) {
        await assert.rejects(openStateStore(`sqlite:${name}`), (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_STORE_LOCKED', name);
      }
      child.stdin.end();
      await ended(child);
      const again = await openStateStore(`sqlite:${file}`);
      await again.close();
    });

    test('a process killed with SIGKILL leaves no lock behind', async () => {
      const { report, child } = await other(viaSymlink);
      children.push(child);
      assert.deepEqual(report, { open: true });
      await assert.rejects(openStateStore(`sqlite:${viaHardLink}`), (err: unknown) => isDiscoveryError(err) && err.code === 'ERR_STORE_LOCKED');
      child.kill('SIGKILL');
      await ended(child);
      // The kernel releases the locks when the process's descriptors close; the flock holder
      // notices the closed pipe at once, but give it a moment on a loaded machine.
      let store;
      for (let i = 0; ; i++) {
        try {
          store = await openStateStore(`sqlite:${viaHardLink}`);
          break;
        } catch (err) {
          if (!(isDiscoveryError(err) && err.code === 'ERR_STORE_LOCKED') || i >= 50) throw err;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      assert.equal(store.status().ok, true);
      await store.close();
    });
  });
}
