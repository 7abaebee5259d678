// lead-enrich's own version (package.json), for --version and the JSON every outcome writes with
// --json. Only node: imports, so that the entry point may load it before the Node.js version is known good.
import { createRequire } from 'node:module';

export const VERSION = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
