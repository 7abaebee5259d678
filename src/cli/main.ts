#!/usr/bin/env node
// The bin (package.json "bin"). The command line (cli-process.ts) runs from one bundle of it and
// of the dependencies it loads, dist/cli/bundle.js, which `npm run build` makes (.ci/bundle.mjs):
// one file starts in about a third less CPU than the 300 modules it holds (docs/development.md,
// "Where the CPU goes"). The Node.js version is checked first, with a module that imports nothing:
// an older Node may not parse that bundle at all; there cli-process.ts runs as compiled and says
// in one line which versions are needed.
import { unsupportedNode } from '../core/node-version.js';

// A path the compiler does not resolve: the bundle is made after it has run.
const entry = unsupportedNode(process.versions.node) === undefined ? './bundle.js' : './cli-process.js';
await import(entry);
