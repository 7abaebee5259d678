// Which Node.js versions lead-enrich runs on (package.json "engines"; docs/cli-contract.md, "Running
// it"). Imports nothing, so the entry point can check before anything else is loaded.

/** The first 22.x with every node:sqlite feature the store uses (the `timeout` option, setReturnArrays). */
const OLDEST = [22, 16] as const;

/**
 * Node 23 (an odd, short-lived line) is not supported: 23.0 has no node:sqlite without a flag and
 * 23.11 no setReturnArrays. 24 and later have everything.
 */
const FIRST_AFTER = 24;

/** A sentence naming the versions needed, or undefined when `version` (process.versions.node) is supported. */
export function unsupportedNode(version: string): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map((part) => Number.parseInt(part, 10));
  if (major >= FIRST_AFTER || (major === OLDEST[0] && minor >= OLDEST[1])) return undefined;
  return `Node.js ${OLDEST.join('.')} or a later 22, or 24 or later, is needed (22, 24 or 26), this is ${version}: install a supported Node.js and run it again`;
}
