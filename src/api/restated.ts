// An error of the library said again with what was being done when it happened, kept of its own
// class: not exported by the package (src/index.ts exports errors.ts whole).
import { LeadEnrichError } from './errors.js';

/**
 * The same failure in other words (what was being done when it happened): of the same class, with
 * the same fields and the same cause, so that `instanceof`, `code` and what the cause says (a host
 * that does not exist: api/network-errors.ts isUnknownHost) still tell its kind (docs/library.md,
 * "Errors"). The new message holds the old one.
 */
export function restated<E extends LeadEnrichError>(error: E, message: string): E {
  const copy = new LeadEnrichError(error.code, message, error.cause === undefined ? {} : { cause: error.cause });
  Object.setPrototypeOf(copy, Object.getPrototypeOf(error));
  // The own fields: name, code, status, apiCode, and a subclass's (retryAt, reasons).
  return Object.assign(copy, error) as E;
}
