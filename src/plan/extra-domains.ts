// Which domain each --with operation of a row asks about, once the row's answer is known: the
// same rule for the run (lookup/batch-lookups.ts) and its dry run (dry-run.ts), so the plan counts what
// the run will send. MX and Whois: the row's own domain (the email's, the key, or the domain
// column), else for a profile URL the found lead's company_domain. Company: company-domain.ts.
import type { CompanyLead, Lead } from '../api/types.js';
import type { Extra } from '../core/kinds.js';
import { companyDomainOf } from './company-domain.js';
import { domainForRow, normalizeDomain, type WaterfallKey } from './plan.js';

export interface ExtraSources {
  /** The key that answered the row (or the last one tried). */
  attempt: WaterfallKey;
  /** The lead it found, if any (undefined also when not known yet, in a dry run). */
  lead: Lead | CompanyLead | undefined;
  /** The row's domain column cell, as text, when the run has one. */
  domainCell: string | undefined;
  /** The row's well-formed email key, if it has one (a waterfall row answered by another kind). */
  emailKey: string | undefined;
}

/** The MX/Whois domain: the row's own, else (profile URL) the lead's company_domain. */
function domainOf({ attempt, lead, domainCell }: ExtraSources): string | undefined {
  const own = domainForRow(attempt.target.kind, attempt.key, domainCell);
  if (own !== undefined || attempt.target.kind !== 'url' || typeof (lead as Lead | undefined)?.company_domain !== 'string') return own;
  const fromLead = normalizeDomain((lead as Lead).company_domain!);
  return fromLead.ok ? fromLead.key : undefined;
}

/** The domain each extra of the run asks about for this row; an extra with none is left out. */
export function extraDomains(extras: readonly Extra[], row: ExtraSources): Partial<Record<Extra, string>> {
  const out: Partial<Record<Extra, string>> = {};
  const domain = extras.includes('mx') || extras.includes('whois') ? domainOf(row) : undefined;
  for (const extra of extras) {
    const key =
      extra === 'company'
        ? companyDomainOf({ kind: row.attempt.target.kind, key: row.attempt.key, lead: row.lead, domainCell: row.domainCell, emailKey: row.emailKey })
        : domain;
    if (key !== undefined) out[extra] = key;
  }
  return out;
}

/**
 * Whether, before the answer is known, an extra's domain may be one the row does not show: a
 * profile URL's (its lead's company_domain comes first for the company, and stands in for a
 * missing domain column for MX/Whois). An email's company is counted as the email's domain: a
 * person's company_domain is that domain but for free mail, which is never looked up.
 */
export function domainAwaitsLead(extra: Extra, row: Omit<ExtraSources, 'lead'>): boolean {
  if (row.attempt.target.kind !== 'url') return false;
  return extra === 'company' || domainForRow('url', row.attempt.key, row.domainCell) === undefined;
}
