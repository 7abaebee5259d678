// The company behind a row, for `--with company` (docs/cli-contract.md, "Company"): the found person's
// `company_domain`, else the domain of the row's email address, else the row's domain column —
// never a free mail provider's domain (gmail.com, outlook.com, ...), which says nothing about an
// employer. The providers come from the maintained `email-providers` package (thousands of
// domains, updated monthly), loaded only by runs that ask for companies.
import { createRequire } from 'node:module';
import type { Lead } from '../api/types.js';
import { normalizeDomain, type LookupKind } from './normalize.js';

let freeMail: ReadonlySet<string> | undefined;

/** Whether mail at this domain says nothing about an employer. */
export function isFreeMailDomain(domain: string): boolean {
  // The package's main module is ESM with a JSON require inside; its list is read the same way.
  freeMail ??= new Set(createRequire(import.meta.url)('email-providers/all.json') as string[]);
  return freeMail.has(domain.toLowerCase());
}

export interface CompanySources {
  /** The kind and normalized key the row was answered by. */
  kind: LookupKind;
  key: string;
  /** The lead found, if any. */
  lead: unknown;
  /** The row's domain column cell, as text, if the header has one. */
  domainCell: string | undefined;
  /** A waterfall row answered by another kind: its well-formed email key, if it has one. */
  emailKey?: string | undefined;
}

const domainOfEmail = (email: string | undefined) => (email === undefined ? undefined : email.slice(email.lastIndexOf('@') + 1));

/** The normalized company domain, or undefined when none is known or it is a free mail provider's. */
export function companyDomainOf(row: CompanySources): string | undefined {
  const candidates = [
    typeof (row.lead as Lead | undefined)?.company_domain === 'string' ? (row.lead as Lead).company_domain : undefined,
    domainOfEmail(row.kind === 'email' ? row.key : row.emailKey),
    row.kind === 'domain' ? row.key : undefined,
    row.domainCell,
  ];
  for (const candidate of candidates) {
    if (!candidate) continue;
    const domain = normalizeDomain(candidate);
    if (domain.ok && !isFreeMailDomain(domain.key)) return domain.key;
  }
  return undefined;
}
