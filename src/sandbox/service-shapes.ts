// How the sandbox answers like the production service where the interface says "not shown": the
// other shapes of "not found", a domain that matches several companies, an operation the token
// may not use, the daily limit, and prices that vary with the answer (phones, role-based leads).
// Each is off by default, so the sandbox's ordinary answers stay as they always were.
import type { CompanyLead, Lead, Operation } from '../api/types.js';
import { sandboxCost, type SandboxCosts } from './account-data.js';
import { companyLead, Digest } from './leads.js';
import type { SandboxAnswer } from './data.js';
import type { SandboxKeyOperation } from './keys.js';

/** How a reverse lookup that finds nothing is answered. */
export type NotFoundShape = 'empty' | 'null' | 'absent' | 'code1027' | 'http404';
export const NOT_FOUND_SHAPES: readonly NotFoundShape[] = ['empty', 'null', 'absent', 'code1027', 'http404'];

export interface ServiceShapes {
  /** `empty` (`lead: {}`, the default), `null` (`lead: null`), `absent` (`data: {}`), `code1027` (error 1027 at HTTP 200), `http404` (a 404 with the API's error object and no code). */
  notFound: NotFoundShape;
  /** Companies a found domain matches: more than 1 answers an array of them. Default 1. */
  companies: number;
  /** Operations answered 403 with code 1008, whatever the key. Default none. */
  forbidden: readonly Operation[];
  /** Keyed requests answered per day; past it, code 1017 (at HTTP 429). Default: no limit. */
  dailyLimit: number | undefined;
  /** Person leads carry 0 to 2 phone numbers at 2 credits each, and role addresses (info@, sales@, ...) are role-based leads at 2. Default off. */
  variedPrices: boolean;
}

export const DEFAULT_SHAPES: ServiceShapes = { notFound: 'empty', companies: 1, forbidden: [], dailyLimit: undefined, variedPrices: false };

/** A status and its body, as routes.ts sends them. */
export interface ShapedAnswer {
  status: number;
  body: string;
  /** What the answer costs (0 when nothing was found). */
  cost: number;
}

const failed = (status: number, code: number, message: string): ShapedAnswer => ({
  status,
  body: JSON.stringify({ status: 'failed', error: { code, message } }),
  cost: 0,
});

export const FORBIDDEN = failed(403, 1008, 'You are not authorized to access this resource');
export const DAILY_LIMIT_ANSWER = failed(429, 1017, "You've reached the daily verify limit. Try again the next day");

const ROLE_NAMES = new Set(['info', 'sales', 'support', 'contact', 'hello', 'admin', 'office', 'team', 'jobs', 'billing']);
const PHONE_COST = 2;
const ROLE_COST = 2;

/** The keyed requests of one day, for the daily limit; nextDay() starts a new one. */
export class DailyCount {
  #used = 0;
  /** Whether one more keyed request fits in today's limit (and counts it when it does): counted without a limit too, so that a limit set during the day counts the day's requests. */
  take(limit: number | undefined): boolean {
    if (limit !== undefined && this.#used >= limit) return false;
    this.#used += 1;
    return true;
  }
  nextDay(): void {
    this.#used = 0;
  }
}

/** The answer of a keyed operation in the service's shapes, once the key passed validation. */
export function shapedAnswer(
  op: SandboxKeyOperation,
  key: string,
  answer: Exclude<SandboxAnswer, { kind: 'rejected' }>,
  shapes: ServiceShapes,
  costs: SandboxCosts,
): ShapedAnswer {
  const lookup = op === 'lookup_email' || op === 'lookup_url' || op === 'lookup_domain';
  if (answer.kind === 'not_found') return lookup ? notFound(answer.data as Record<string, unknown>, shapes.notFound) : ok(answer.data, 0);
  const data = answer.data as Record<string, unknown>;
  if (op === 'lookup_domain' && shapes.companies > 1)
    return ok({ ...data, lead: companies(key, data.lead as CompanyLead, shapes.companies) }, sandboxCost(op, costs));
  if ((op === 'lookup_email' || op === 'lookup_url') && shapes.variedPrices) return pricedPerson(key, data, costs);
  return ok(data, sandboxCost(op, costs));
}

function ok(data: unknown, cost: number): ShapedAnswer {
  return { status: 200, body: JSON.stringify({ status: 'success', data }), cost };
}

function notFound(data: Record<string, unknown>, shape: NotFoundShape): ShapedAnswer {
  switch (shape) {
    case 'empty':
      return ok(data, 0);
    case 'null':
      return ok({ ...data, lead: null }, 0);
    case 'absent':
      return ok({}, 0);
    case 'code1027':
      return failed(200, 1027, 'Email address not found');
    case 'http404':
      // The API's own error object, with no code: what a single call can tell from a router's 404.
      return { status: 404, body: JSON.stringify({ status: 'failed', error: { message: 'Not Found' } }), cost: 0 };
  }
}

/** The domain's own company first, then others derived from `<label>-<n>` of the same domain. */
function companies(domain: string, first: CompanyLead, count: number): CompanyLead[] {
  const dot = domain.indexOf('.');
  const others = Array.from({ length: count - 1 }, (_, i) => {
    const sibling = dot < 0 ? `${domain}-${i + 2}` : `${domain.slice(0, dot)}-${i + 2}${domain.slice(dot)}`;
    return companyLead(new Digest(sibling), sibling);
  });
  return [first, ...others];
}

/** A person with 0 to 2 phone numbers (from the key's hash); a role address is a role-based lead. */
function pricedPerson(key: string, data: Record<string, unknown>, costs: SandboxCosts): ShapedAnswer {
  const d = new Digest(key);
  const count = d.u8(19) % 3;
  const phones = Array.from({ length: count }, (_, i) => `+1 555 01${String(d.u8(i + 1) % 100).padStart(2, '0')}`);
  const role = ROLE_NAMES.has(key.slice(0, key.indexOf('@')));
  const lead = { ...(data.lead as Lead), ...(role ? { type: 'role' } : {}), phones };
  return ok({ ...data, lead }, (role ? ROLE_COST : costs.person) + PHONE_COST * count);
}
