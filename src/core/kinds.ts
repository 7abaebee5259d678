// The words of the data path that every layer above the API shares: the kinds of lookup a row can
// ask for, the operations that may cost credits, and the extra lookups of `--with`.
import type { Operation } from '../api/types.js';

/** `--by`: a person by email or profile URL, or a company by domain. */
export type LookupKind = 'email' | 'url' | 'domain';
export const LOOKUP_KINDS: readonly LookupKind[] = ['email', 'url', 'domain'];

/** `--with`: the extra lookups of a row's domain. */
export type Extra = 'mx' | 'whois' | 'company';
export const EXTRAS: readonly Extra[] = ['mx', 'whois', 'company'];

/** Operations that may cost credits. */
export type BillableOperation = Extract<Operation, 'lookup_url' | 'lookup_email' | 'lookup_domain' | 'mx' | 'whois'>;

/** The API operation behind each `--by` kind (interface 4.1-4.3). */
export const LOOKUP_OPERATION: Record<LookupKind, BillableOperation> = {
  email: 'lookup_email',
  url: 'lookup_url',
  domain: 'lookup_domain',
};
