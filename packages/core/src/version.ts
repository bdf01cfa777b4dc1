/** The package version, read once from package.json (one level above both src/ and dist/). */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
export const VERSION: string = (require('../package.json') as { version: string }).version;
