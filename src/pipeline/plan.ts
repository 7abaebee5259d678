// The "plan" step of the data path (design.md): which lookup each row needs and its normalized,
// validated key, decided without any request. Detection of the key column from the header lives
// in detect.ts (its rules are documented there, for the README); key normalization in
// normalize.ts. This module is the single import for the rest of the pipeline.

import type { Operation } from '../api/types.js';
import type { LookupKind } from './normalize.js';

export type { LookupKind, NormalizeResult } from './normalize.js';
export {
  LOOKUP_KINDS,
  normalizeKey,
  normalizeEmail,
  normalizeUrl,
  normalizeDomain,
  domainForRow,
} from './normalize.js';
export type { LookupTarget, DetectOptions } from './detect.js';
export { detectTarget, detectDomainColumn, parseLookupKind, describeHeader } from './detect.js';

/** The API operation behind each `--by` kind (interface 4.1-4.3). */
export const LOOKUP_OPERATION: Record<LookupKind, Operation> = {
  email: 'lookup_email',
  url: 'lookup_url',
  domain: 'lookup_domain',
};
