// Flush every open store when the process exits normally or through process.exit(): node:sqlite
// is synchronous, so this works in an 'exit' handler. (SIGKILL cannot be caught: that is what the
// store's flush timer is for. SIGINT/SIGTERM must be handled by the CLI, which should close() the store.)

import { logText } from '../core/log-lines.js';
import { terminalText } from '../core/terminal-text.js';
import { oneLine } from './open-database.js';

interface ClosableStore {
  readonly path: string;
  close(): void;
}

/** The stores open in this process; the 'exit' hook is installed only while there is one. */
class OpenStores {
  readonly #stores = new Set<ClosableStore>();
  #hooked = false;

  add(store: ClosableStore): void {
    this.#stores.add(store);
    if (!this.#hooked) {
      process.on('exit', this.#closeAll);
      this.#hooked = true;
    }
  }

  delete(store: ClosableStore): void {
    this.#stores.delete(store);
    if (this.#stores.size === 0 && this.#hooked) {
      process.removeListener('exit', this.#closeAll);
      this.#hooked = false;
    }
  }

  readonly #closeAll = (): void => {
    for (const store of this.#stores) {
      try {
        store.close();
      } catch (error) {
        process.stderr.write(`${logText(terminalText(`lead-enrich: could not save pending results to ${store.path}: ${oneLine(error)}`))}\n`);
      }
    }
  };
}

export const openStores = new OpenStores();
