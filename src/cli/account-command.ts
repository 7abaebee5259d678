// `lead-enrich account`: plan, add-ons, credits and limits in a human layout; `--json` for the data.
import type { CommandModule } from 'yargs';
import { flagOptions } from './flag-options.js';
import { parseServiceLimits } from '../api/limits.js';
import type { Credits, PlanEntry, PlanInfo, ServiceLimits } from '../api/types.js';
import { examplesText } from './help-examples.js';
import { printJson, type CliIo } from './io.js';
import { noticeLines } from './stderr-lines.js';
import { openTarget, targetOptions, type TargetArgs } from './target.js';

interface AccountArgs extends TargetArgs {
  json?: boolean;
}

const number = (n: number | undefined) => (typeof n === 'number' ? n.toLocaleString('en-US') : '?');

function planLine(entry: PlanEntry): string {
  const parts = [entry.status, entry.type].filter(Boolean).join(', ');
  return `${entry.name}${parts ? ` (${parts})` : ''}${entry.charge ? ` - ${entry.charge}` : ''}`;
}

export function formatAccount(plans: PlanInfo, credits: Credits, limits: ServiceLimits): string {
  const label = (text: string) => text.padEnd(12);
  const lines: string[] = [];
  const plan = plans.current_plan;
  lines.push(`${label('Plan')}${planLine(plan)}`);
  const planDates = [
    plan.next_credit_allocation ? `next credits ${plan.next_credit_allocation}` : '',
    plan.next_charge_renewal ? `renews ${plan.next_charge_renewal}` : '',
  ].filter(Boolean);
  if (planDates.length) lines.push(`${label('')}${planDates.join(', ')}`);
  const addons = Array.isArray(plans.addons) ? plans.addons : [];
  if (addons.length === 0) lines.push(`${label('Add-ons')}none`);
  addons.forEach((addon, i) => {
    lines.push(`${label(i === 0 ? 'Add-ons' : '')}${planLine(addon)}${addon.next_charge_renewal ? `, renews ${addon.next_charge_renewal}` : ''}`);
  });
  const breakdown = credits.plan_remaining_credits ?? {};
  lines.push(
    `${label('Credits')}${number(credits.total_remaining_credits)} remaining (pay-as-you-go ${number(breakdown['pay-as-you-go'])}, subscription ${number(breakdown.subscription)}, bonus ${number(breakdown.bonus)})`,
  );
  lines.push(`${label('')}low-balance threshold ${number(credits.low_credit_balance_min_threshold)}`);
  const rate = limits.email_verify?.api_rate_limit;
  try {
    const facts = parseServiceLimits(limits);
    lines.push(
      `${label('Rate limit')}${number(facts.rpm)} requests/minute, ${number(facts.remaining)} left in this window, resets ${rate?.next_limit_reset ?? '?'}`,
    );
  } catch {
    lines.push(`${label('Rate limit')}${rate?.total ?? '?'} (${rate?.remaining ?? '?'} remaining), resets ${rate?.next_limit_reset ?? '?'}`);
  }
  const bulk = limits.email_verify?.bulk_verify_concurrency_limit;
  if (bulk) lines.push(`${label('Bulk jobs')}${bulk.total} (${bulk.remaining} remaining)`);
  return `${lines.join('\n')}\n`;
}

export function accountCommand(io: CliIo): CommandModule<object, AccountArgs> {
  return {
    command: 'account',
    describe: 'Show the plan, add-ons, credit balance and rate limits',
    builder: (yargs) =>
      flagOptions(targetOptions(yargs), ['json'], { json: { describe: 'print the raw data as JSON: {plans, credits, limits}' } }).epilogue(
        examplesText([
          ['$0 account', 'human-readable summary'],
          ['$0 account --json | jq .credits.total_remaining_credits', 'the balance, for scripts'],
          ['$0 account --sandbox', 'the embedded sandbox account'],
        ]),
      ) as never,
    handler: async (args) => {
      const target = await openTarget(args, noticeLines(io));
      try {
        const [plans, credits, limits] = await Promise.all([target.client.getPlans(), target.client.getCredits(), target.client.getLimits()]);
        if (args.json) printJson(io, { plans, credits, limits });
        else io.out(formatAccount(plans, credits, limits));
      } finally {
        await target.close();
      }
    },
  };
}
