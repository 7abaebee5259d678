// The sandbox's account answers (interface 2.5 to 2.7) and what a found lookup costs. Pure: the
// live balance and rate window are passed in by their owners (account.ts, rate-window.ts).
//
// - myplans is fixed: plan "Growth" plus one add-on whose next_charge_renewal is in the slash
//   form "2026/12/01";
// - credits and limits reflect the sandbox's live balance and rate window;
// - costs are charged only for a found answer (a miss or a 400 costs 0): person lookups 4,
//   domain lookup 1, MX 1, Whois 1 by default (server option `costs`).

import type { Credits, PlanInfo, ServiceLimits } from '../api/types.js';
import type { SandboxKeyOperation } from './keys.js';

export interface SandboxCosts {
  person: number;
  company: number;
  mx: number;
  whois: number;
}

export const DEFAULT_SANDBOX_COSTS: Readonly<SandboxCosts> = { person: 4, company: 1, mx: 1, whois: 1 };

/** Credits a FOUND answer of `op` costs (a miss or a rejection costs 0). */
export function sandboxCost(op: SandboxKeyOperation, costs: SandboxCosts = DEFAULT_SANDBOX_COSTS): number {
  switch (op) {
    case 'lookup_url':
    case 'lookup_email':
      return costs.person;
    case 'lookup_domain':
      return costs.company;
    case 'mx':
      return costs.mx;
    case 'whois':
      return costs.whois;
  }
}

/** GET /account/myplans (2.5). One add-on renews in the slash form the interface's sample shows. */
export function sandboxPlans(): PlanInfo {
  return {
    current_plan: {
      name: 'Growth',
      status: 'active',
      type: 'subscription',
      charge: '$49.00 / month',
      next_credit_allocation: '2026-01-01T00:00:00.000Z',
      next_charge_renewal: '2026-01-01T00:00:00.000Z',
    },
    addons: [
      {
        name: 'Rate Limit Booster',
        status: 'active',
        type: 'addon',
        charge: '$10.00 / month',
        next_charge_renewal: '2026/12/01',
      },
    ],
  };
}

/**
 * GET /account/credits (2.6). The breakdown always sums to the balance: bonus = min(balance, 100),
 * subscription = floor(3/4 of the rest), pay-as-you-go = what remains.
 */
export function sandboxCredits(balance: number, threshold: number): Credits {
  const bonus = Math.min(balance, 100);
  const rest = balance - bonus;
  const subscription = Math.floor((rest * 3) / 4);
  return {
    total_remaining_credits: balance,
    plan_remaining_credits: { 'pay-as-you-go': rest - subscription, subscription, bonus },
    low_credit_balance_min_threshold: threshold,
  };
}

/** GET /account/limits (2.7): "<n> RPM" strings and the end of the current window. */
export function sandboxLimits(rpm: number, remaining: number, resetAt: Date): ServiceLimits {
  return {
    email_verify: {
      api_rate_limit: {
        total: `${rpm} RPM`,
        remaining: `${remaining} RPM`,
        next_limit_reset: resetAt.toISOString(),
      },
      bulk_verify_concurrency_limit: { total: '5 parallel bulk jobs', remaining: '5 parallel bulk jobs' },
    },
  };
}
