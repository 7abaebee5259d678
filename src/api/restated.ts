// An error of the library said again with what was being done when it happened, kept of its own
// class: not exported by the package (src/index.ts exports errors.ts whole).
import { LeadEnrichError } from './errors.js';

/**
 * The same failure in other words (what was being done when it happened): of the same class and
 * with the same fields, so that `instanceof` and `code` still tell its kind (docs/library.md,
 * "Errors"); the original is its cause.
 */
export function restated<E extends LeadEnrichError>(error: E, message: string): E {
  const copy = new LeadEnrichError(error.code, message, { cause: error });
  Object.setPrototypeOf(copy, Object.getPrototypeOf(error));
  // The own fields: name, code, status, apiCode, and a subclass's (retryAt, reasons).
  return Object.assign(copy, error) as E;
}
