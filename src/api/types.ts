// Wire types of the Lead Lookup interface (docs/lead-api-interface.md, part 2).
// Field names keep the interface's own spellings (`contructed_title`, `steet`, `pay-as-you-go`).
// Every object type but the leads allows unknown members: the server may add fields and we keep
// them. The leads name their members only, so that a typo in a caller's code does not compile.

/** The eight operations of the interface, named once for the client, sandbox, store and stats. */
export type Operation = 'lookup_url' | 'lookup_email' | 'lookup_domain' | 'mx' | 'whois' | 'myplans' | 'credits' | 'limits';

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

/** An address of a person (2.1). */
export interface Address {
  full_address?: string;
  state?: string;
  city?: string;
  country?: string;
  country_code?: string;
}

/**
 * 2.1 Lead (person): what a lookup by email or profile URL finds. Every member optional: "not
 * found" is an empty object (docs/api-behaviour-notes.md). No index signature, so that a member
 * the interface does not name (`jobTitle`) does not compile; members the service adds beyond it
 * are still in the object (read them as `(lead as Record<string, unknown>).phones`).
 */
export interface PersonLead {
  id?: string;
  type?: string;
  name?: string;
  /** Spelled so by the interface. */
  contructed_title?: string;
  profile_picture?: string;
  network_url?: string;
  title?: string;
  company_name?: string;
  company_domain?: string;
  addresses?: Address[];
  total_experience_in_months?: number;
}

/** The person lead under its former name. @deprecated Use PersonLead. */
export type Lead = PersonLead;

/** The address of a company (2.2): a single object. */
export interface CompanyAddress {
  full_address?: string;
  country?: string;
  country_code?: string;
}

/** 2.2 Company lead: what a lookup by domain finds. `addresses` is a single object, not an array. */
export interface CompanyLead {
  id?: string;
  type?: string;
  name?: string;
  profile_picture?: string;
  network_url?: string;
  addresses?: CompanyAddress;
}

/**
 * A domain lookup's `lead`: one company, or, when the domain matches several, the API's array of
 * them (docs/api-behaviour-notes.md, "Domain lookup").
 */
export type DomainLead = CompanyLead | CompanyLead[];

/** `T`, with the members of `U` it lacks read as undefined (as they are on such an object). */
type Lacking<T, U> = T & { readonly [K in Exclude<keyof U, keyof T>]?: undefined };

/**
 * The lead of a found row when the lookup is not known to the compiler (a waterfall, or a kind
 * detected from the header): a person, a company, or several companies. Read as a person's, each
 * member is typed (`lead.title` is `string | undefined`, undefined on a company); a member of
 * none of them does not compile. `Array.isArray(lead)` tells the several companies apart.
 */
export type AnyLead = PersonLead | Lacking<CompanyLead, PersonLead> | Lacking<CompanyLead[], PersonLead>;

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
  lead: PersonLead;
}
export interface UrlLookupData extends Open {
  lead: PersonLead;
}
export interface DomainLookupData extends Open {
  name: string;
  lead: DomainLead;
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
