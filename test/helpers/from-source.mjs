// Registers tsx with this checkout's tsconfig.json (whatever the working directory), so that a
// child process started with `--import <this file> packages/…/src/….ts` runs the sources and
// reaches the other packages' sources through the tsconfig's paths, never their dist/.
import { register } from 'tsx/esm/api';

register({ tsconfig: new URL('../../tsconfig.json', import.meta.url).pathname });
