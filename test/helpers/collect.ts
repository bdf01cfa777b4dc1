/**
 * Full garbage collections on demand, for the tests that check what is let go (a WeakRef's target
 * collected): `--expose-gc` is set at run time and `gc` read from a fresh context.
 */
import { setImmediate as tick } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Full collections, each after the current job (a WeakRef's target lives until its job ends). */
export async function collect(): Promise<void> {
  for (let i = 0; i < 3; i++) {
    await tick();
    gc();
  }
}
