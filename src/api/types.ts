// Wire types of the Lead Lookup interface (docs/lead-api-interface.md, part 2).
// Field names keep the interface's own spellings (`contructed_title`, `steet`, `pay-as-you-go`).
// Every object type allows unknown members: the server may add fields and we keep them.

/** The eight operations of the interface, named once for the client, sandbox, store and stats. */
export type Operation =
  | 'lookup_url'
  | 'lookup_email'
  | 'lookup_domain'
  | 'mx'
  | 'whois'
  | 'myplans'
  | 'credits'
  | 'limits';

export const OPERATION_PATHS: Record<Operation, { method: 'GET' | 'POST'; path: string }> = {
  lookup_url: { method: 'GET', path: '/reverse_lookup/network' },
  lookup_email: { method: 'GET', path: '/reverse_lookup/email' },
  lookup_domain: { method: 'GET', path: '/reverse_lookup/domain' },
  mx: { method: 'POST', path: '/domain/resolve/mx' },
  whois: { method: 'POST', path: '/domain/resolve/whois' },
  myplans: { method: 'GET', path: '/account/myplans' },
  credits: { method: 'GET', path: '/account/credits' },
  limits: { method: 'GET', path: '/account/limits' },
};

type Open = { [extra: string]: unknown };

export interface Address extends Open {
  full_address?: string;
  state?: string;
  city?: string;
  country?: string;
  country_code?: string;
}

/** 2.1 Lead (person). Every field optional: "not found" is an empty object (docs/api-behaviour-notes.md). */
export interface Lead extends Open {
  id?: string;
  type?: string;
  name?: string;
  contructed_title?: string;
  profile_picture?: string;
  network_url?: string;
  title?: string;
  company_name?: string;
  company_domain?: string;
  addresses?: Address[];
  total_experience_in_months?: number;
}

export interface CompanyAddress extends Open {
  full_address?: string;
  country?: string;
  country_code?: string;
}

/** 2.2 Company lead: `addresses` is a single object, not an array. */
export interface CompanyLead extends Open {
  id?: string;
  type?: string;
  name?: string;
  profile_picture?: string;
  network_url?: string;
  addresses?: CompanyAddress;
}

export interface MxRecord extends Open {
  exchange: string;
  priority: number;
}

/** 2.3 */
export interface MxResult extends Open {
  domain: string;
  mx_records: MxRecord[];
  verified_on: string;
  time_taken: number;
}

export interface WhoisContact extends Open {
  id?: string;
  name?: string;
  organization?: string;
  steet?: string;
  city?: string;
  state?: string;
  postal_code?: string;
  country?: string;
  phone?: string;
  phone_ext?: string;
  fax?: string;
  fax_ext?: string;
  email?: string;
}

export interface WhoisRecord extends Open {
  domain?: { name?: string; id?: string; status?: Record<string, string>; created_date?: string } & Open;
  registrar?: {
    name?: string;
    whois_server?: string;
    url?: string;
    registration_expiry_date?: string;
    abuse_contact_email?: string;
    abuse_contact_phone?: string;
  } & Open;
  registrant?: WhoisContact & { admin?: WhoisContact; tech?: WhoisContact };
  dnssec?: string;
  nameservers?: unknown[];
  notice?: string;
  term_of_use?: string;
  last_update_whois_database?: string;
}

/** 2.4 */
export interface WhoisResult extends Open {
  domain: string;
  whoisRecord: WhoisRecord;
  verified_on: string;
  time_taken: number;
}

export interface PlanEntry extends Open {
  name: string;
  status: string;
  type: string;
  charge: string;
  /** Timestamps are kept exactly as sent: the interface shows both ISO 8601 and a slash form. */
  next_credit_allocation?: string;
  next_charge_renewal: string;
}

/** 2.5 */
export interface PlanInfo extends Open {
  current_plan: PlanEntry;
  addons: PlanEntry[];
}

/** 2.6 */
export interface Credits extends Open {
  total_remaining_credits: number;
  plan_remaining_credits: { 'pay-as-you-go': number; subscription: number; bonus: number } & Open;
  low_credit_balance_min_threshold: number;
}

/** 2.7 */
export interface ServiceLimits extends Open {
  email_verify: {
    api_rate_limit: { total: string; remaining: string; next_limit_reset: string } & Open;
    bulk_verify_concurrency_limit: { total: string; remaining: string } & Open;
  } & Open;
}

export interface Envelope<T> extends Open {
  status: string;
  data: T;
}

export interface EmailLookupData extends Open {
  email_address: string;
  lead: Lead;
}
export interface UrlLookupData extends Open {
  lead: Lead;
}
export interface DomainLookupData extends Open {
  name: string;
  lead: CompanyLead;
}

/** The error body the production server sends (docs/api-behaviour-notes.md, "Error bodies"). */
export interface ErrorBody {
  status?: string;
  error?: {
    code?: number;
    message?: string;
    reasons?: Array<{ field?: string[]; location?: string; messages?: string[]; types?: string[] }>;
    additional_info?: unknown;
  };
}
