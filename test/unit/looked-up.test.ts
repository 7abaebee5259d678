// One rule for a row looked up: the summary's rowsLookedUp (RunMetrics) and --max-errors' share
// (ErrorBudget) count the same rows. No server: rows as the run loop hands them over.
import { describe, expect, it } from 'vitest';
import type { Billing, FinishedRow, RowStatus } from '../../src/core/rows.js';
import { ErrorBudget } from '../../src/run/error-budget.js';
import { lookedUp, RunMetrics } from '../../src/run/metrics.js';
import { RunStop } from '../../src/run/run-stop.js';

let next = 0;
function row(status: RowStatus, billing: Billing, more: Partial<FinishedRow> = {}): FinishedRow {
  next += 1;
  return { row: next, cells: [`k${next}`], status, billing, data: {}, ...more };
}

describe('one rule for a row looked up', () => {
  it('the summary and --max-errors count the same rows: requests of this run, and failed requests', () => {
    const rows = [
      row('found', 'charged'),
      row('not_found', 'free'),
      row('error', 'none', { errorCode: 'server_error' }),
      row('found', 'cached', { stored: true }),
      row('found', 'duplicate'),
      row('error', 'none', { errorCode: 'invalid_input' }),
      row('skipped', 'none', { errorCode: 'credit_reserve' }),
    ];
    expect(rows.map(lookedUp)).toEqual([true, true, true, false, false, false, false]);
    const metrics = new RunMetrics('email');
    for (const each of rows) metrics.count(each);
    expect(metrics.rowsLookedUp).toBe(3);
  });

  it('--max-errors judges its share over those rows: answers another row paid for do not dilute it', () => {
    const stop = new RunStop();
    const budget = new ErrorBudget({ percent: 40 }, stop);
    for (let i = 0; i < 30; i += 1) budget.observe(row('found', 'charged'));
    // Found by another row's request: not looked up, so not in the share's denominator.
    for (let i = 0; i < 20; i += 1) budget.observe(row('found', 'duplicate'));
    for (let i = 0; i < 20; i += 1) budget.observe(row('error', 'none', { errorCode: 'server_error' }));
    // 20 errors of 50 looked up: 40 %, not more.
    expect(stop.stoppedBy).toBeUndefined();
    budget.observe(row('error', 'none', { errorCode: 'server_error' }));
    // 21 of 51: over 40 %.
    expect(stop.stoppedBy).toBe('max_errors');
  });
});
