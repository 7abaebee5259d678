// The plain client: one typed method per operation of the interface (lead-api-interface.md,
// part 4), each a single attempt through the transport, its answer checked for the members the
// pipeline relies on. No retry and no rate limit here: those are the request path's
// (src/lookup/request-path/), and the library's LeadClient adds them (src/lookup/lead-client.ts).
import { BadRequestError, BadResponseError, NotFoundError } from './errors.js';
import { RESOLVE_TIMEOUT_DEFAULT_MS, validateResolveTimeout } from './resolve-timeout.js';
import { Transport, type ApiResponse, type TransportOptions } from './transport.js';
import {
  OPERATION_PATHS,
  type Credits,
  type DomainLookupData,
  type EmailLookupData,
  type MxResult,
  type Operation,
  type PlanInfo,
  type ServiceLimits,
  type UrlLookupData,
  type WhoisResult,
} from './types.js';

/** How much longer than the server's own timeout we wait for its answer. */
const RESOLVE_CLIENT_MARGIN_MS = 15_000;

/** The input of each operation, so the pipeline can call any of them through one function. */
export interface OperationInput {
  lookup_url: { url: string };
  lookup_email: { email: string };
  lookup_domain: { name: string };
  mx: { domain: string; timeout?: number };
  whois: { domain: string; timeout?: number };
  myplans: Record<string, never>;
  credits: Record<string, never>;
  limits: Record<string, never>;
}
export interface OperationOutput {
  lookup_url: UrlLookupData;
  lookup_email: EmailLookupData;
  lookup_domain: DomainLookupData;
  mx: MxResult;
  whois: WhoisResult;
  myplans: PlanInfo;
  credits: Credits;
  limits: ServiceLimits;
}

export class ApiClient {
  readonly transport: Transport;

  constructor(options: TransportOptions | Transport) {
    this.transport = options instanceof Transport ? options : new Transport(options);
  }

  get baseUrl(): string {
    return this.transport.baseUrl;
  }

  /** Single attempts: this client itself (a LeadClient's `direct` is its ApiClient). */
  get direct(): ApiClient {
    return this;
  }

  /**
   * Set once an account call answered: the base URL is right, so a 404 on a lookup path is the
   * service's "not found", not a path that does not exist.
   */
  #accountAnswered = false;

  /** Any operation with its response metadata (rate-limit headers); the typed methods below wrap it. */
  async call<Op extends Operation>(op: Op, input: OperationInput[Op]): Promise<ApiResponse<OperationOutput[Op]>> {
    let response: ApiResponse<OperationOutput[Op]>;
    try {
      response = await this.#send(op, input);
    } catch (error) {
      if (!LOOKUPS.has(op) || !this.#meansNotFound(error)) throw error;
      const status = (error as NotFoundError).status ?? 404;
      return { data: notFoundData(op, input) as OperationOutput[Op], status, rate: undefined };
    }
    checkShape(op, response.data as unknown as Record<string, unknown>);
    if (ACCOUNT.has(op)) this.#accountAnswered = true;
    return response;
  }

  /** The shapes of "nothing found" that arrive as errors: code 1027, and a 404 once the base URL is known to be right. */
  #meansNotFound(error: unknown): boolean {
    if (error instanceof NotFoundError) return true;
    return this.#accountAnswered && error instanceof BadRequestError && error.status === 404;
  }

  #send<Op extends Operation>(op: Op, input: OperationInput[Op]): Promise<ApiResponse<OperationOutput[Op]>> {
    const { method, path } = OPERATION_PATHS[op];
    const i = input as Partial<Record<'url' | 'email' | 'name' | 'domain' | 'timeout', unknown>>;
    switch (op) {
      case 'lookup_url':
        return this.transport.request({ method, path, query: { url: String(i.url) } });
      case 'lookup_email':
        return this.transport.request({ method, path, query: { email_address: String(i.email) } });
      case 'lookup_domain':
        return this.transport.request({ method, path, query: { name: String(i.name) } });
      case 'mx':
      case 'whois': {
        const timeout = validateResolveTimeout(i.timeout);
        return this.transport.request({
          method,
          path,
          body: timeout === undefined ? { domain: String(i.domain) } : { domain: String(i.domain), timeout },
          timeoutMs: (timeout ?? RESOLVE_TIMEOUT_DEFAULT_MS) + RESOLVE_CLIENT_MARGIN_MS,
        });
      }
      default:
        return this.transport.request({ method, path });
    }
  }

  async lookupUrl(url: string): Promise<UrlLookupData> {
    return (await this.call('lookup_url', { url })).data;
  }
  async lookupEmail(email: string): Promise<EmailLookupData> {
    return (await this.call('lookup_email', { email })).data;
  }
  async lookupDomain(name: string): Promise<DomainLookupData> {
    return (await this.call('lookup_domain', { name })).data;
  }
  async findMx(domain: string, options: { timeout?: number } = {}): Promise<MxResult> {
    return (await this.call('mx', { domain, ...options })).data;
  }
  async findWhois(domain: string, options: { timeout?: number } = {}): Promise<WhoisResult> {
    return (await this.call('whois', { domain, ...options })).data;
  }
  async getPlans(): Promise<PlanInfo> {
    return (await this.call('myplans', {})).data;
  }
  async getCredits(): Promise<Credits> {
    return (await this.call('credits', {})).data;
  }
  async getLimits(): Promise<ServiceLimits> {
    return (await this.call('limits', {})).data;
  }

  /** Closes the connections: a call not on the wire yet is never sent. */
  async close(): Promise<void> {
    this.transport.close();
  }
}

const isObject = (v: unknown): boolean => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The members the pipeline relies on; anything else the server sends is kept as it is. */
function checkShape(op: Operation, data: Record<string, unknown>): void {
  const path = OPERATION_PATHS[op].path;
  const bad = (what: string): never => {
    throw new BadResponseError(`Response from ${path} has the wrong shape: ${what}`);
  };
  switch (op) {
    case 'lookup_url':
    case 'lookup_email':
    case 'lookup_domain':
      // Not found comes as `{}`, `null` or no `lead` at all; several companies as an array of them.
      if (data.lead !== undefined && data.lead !== null && !isObject(data.lead) && !Array.isArray(data.lead)) bad('data.lead is not an object');
      if (Array.isArray(data.lead) && !data.lead.every(isObject)) bad('data.lead is an array of something else than objects');
      break;
    case 'mx':
      if (!Array.isArray(data.mx_records)) bad('data.mx_records is not an array');
      break;
    case 'whois':
      if (!isObject(data.whoisRecord)) bad('data.whoisRecord is not an object');
      break;
    case 'credits':
      if (typeof data.total_remaining_credits !== 'number') bad('data.total_remaining_credits is not a number');
      break;
    case 'limits':
      if (!isObject(data.email_verify)) bad('data.email_verify is not an object');
      break;
    case 'myplans':
      if (!isObject(data.current_plan)) bad('data.current_plan is not an object');
      break;
  }
}

const LOOKUPS: ReadonlySet<Operation> = new Set(['lookup_url', 'lookup_email', 'lookup_domain']);
const ACCOUNT: ReadonlySet<Operation> = new Set(['myplans', 'credits', 'limits']);

/** A lookup's answer when the service said "not found" as an error: the documented empty lead, with the key echoed as a found answer echoes it. */
function notFoundData(op: Operation, input: unknown): Record<string, unknown> {
  const i = input as { email?: string; name?: string };
  if (op === 'lookup_email') return { email_address: i.email, lead: {} };
  if (op === 'lookup_domain') return { name: i.name, lead: {} };
  return { lead: {} };
}

/**
 * Whether an answer found a lead: `lead` empty (`{}`), `null` or absent all mean "not found"
 * (the service's documentation and its other clients show each); an array (a domain that matches
 * several companies) is found when it holds one.
 */
export function isLeadFound(data: { lead?: unknown } | undefined): boolean {
  const lead = data?.lead;
  if (Array.isArray(lead)) return lead.some((one) => isObject(one) && Object.keys(one as object).length > 0);
  return lead !== null && typeof lead === 'object' && Object.keys(lead).length > 0;
}

/** The lead an answer's columns are read from: the first of several companies, or the lead itself. */
export function firstLead(lead: unknown): unknown {
  return Array.isArray(lead) ? lead[0] : lead;
}

/** How many leads an answer holds: the companies of a domain that matched several, else 1; 0 when none was found. */
export function leadMatches(lead: unknown): number {
  if (!isLeadFound({ lead })) return 0;
  return Array.isArray(lead) ? lead.length : 1;
}
