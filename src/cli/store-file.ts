// The store file a `store` command works on, opened by the command itself (no token, no network).
// Loaded only when a command runs: the store is not needed to print --help. The renderer: an older
// store opened for writing is upgraded with its answers' cells rendered, as a run would.
import type { ResultStore } from '../store/result-store.js';

export async function openStoreFile(file: string, readonly: boolean): Promise<ResultStore> {
  const [{ ResultStore }, { ANSWER_CELLS }] = await Promise.all([import('../store/result-store.js'), import('../write/columns.js')]);
  return ResultStore.open({ path: file, readonly, cells: ANSWER_CELLS });
}

/** `fn` over the store, closed when it returns or throws (an async `fn`: once it settles). */
export async function withStore<R>(file: string, readonly: boolean, fn: (store: ResultStore) => R | Promise<R>): Promise<R> {
  const store = await openStoreFile(file, readonly);
  try {
    return await fn(store);
  } finally {
    store.close();
  }
}
