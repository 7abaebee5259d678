// The process's environment, read through here only: a function that takes the environment as a
// parameter (for tests) defaults it to `processEnv()`, and a single variable is read with
// `environment(name)`. In the bottom folder, so that every folder may read it.

/** The whole environment (the platform's folders, proxies: read by name by their owners). */
export const processEnv = (): NodeJS.ProcessEnv => process.env;

/** The variable's value; an empty one is as good as unset. */
export function environment(name: string): string | undefined {
  const value = process.env[name];
  return value === '' ? undefined : value;
}

/** Sets a variable for this process and the processes it starts. */
export function setEnvironment(name: string, value: string): void {
  process.env[name] = value;
}
