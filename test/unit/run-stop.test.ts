// RunStop on its own: each reason, what a lookup that may not start becomes, the drain deadline
// and the second interrupt. No server, no sleeping.
import { describe, expect, it } from 'vitest';
import { UnauthorizedError } from '../../src/api/errors.js';
import { CoordinationLostError } from '../../src/cluster/coordinator.js';
import { RunStop } from '../../src/run/run-stop.js';

describe('RunStop', () => {
  it('lets lookups start until a reason is given', () => {
    const stop = new RunStop();
    expect(stop.refusal()).toBeUndefined();
    expect(stop.halted).toBe(false);
    expect(stop.signal.aborted).toBe(false);
  });

  it('an interrupt halts: the signal aborts, the queue is dropped, unstarted lookups are interrupted', () => {
    const stop = new RunStop();
    let dropped = 0;
    stop.requestsSignal.addEventListener('abort', () => (dropped += 1));
    stop.stop('interrupt');
    expect(stop.halted).toBe(true);
    expect(stop.signal.aborted).toBe(true);
    expect(dropped).toBe(1);
    expect(stop.refusal()).toMatchObject({ kind: 'skipped', code: 'interrupted' });
    expect(stop.fatal).toBeUndefined();
  });

  it('credits stop new paid lookups only: no halt, no dropped queue (requests in flight finish)', () => {
    const stop = new RunStop();
    let dropped = 0;
    stop.requestsSignal.addEventListener('abort', () => (dropped += 1));
    stop.stop('credits');
    expect(stop.halted).toBe(false);
    expect(dropped).toBe(0);
    expect(stop.refusal()).toMatchObject({ kind: 'skipped', code: 'credit_reserve' });
  });

  it('every reason stops the lookups (the gate drops the lookups and retries waiting for it); credits and a budget leave requests going', () => {
    const reasons = ['interrupt', 'unauthorized', 'forbidden', 'redis', 'credits', 'budget', 'daily_limit', 'max_errors', 'api_unavailable', 'failed'] as const;
    for (const reason of reasons) {
      const stop = new RunStop();
      expect(stop.lookupsStopped).toBe(false);
      stop.stop(reason);
      expect(stop.lookupsStopped, reason).toBe(true);
      expect(stop.lookupsSignal.aborted, reason).toBe(true);
      expect(stop.requestsStopped, reason).toBe(reason !== 'credits' && reason !== 'budget');
    }
  });

  it('a 401 halts and is the fatal error the run ends with', () => {
    const stop = new RunStop();
    const error = new UnauthorizedError('Invalid API Token');
    stop.stop('unauthorized', error);
    expect(stop.fatal).toBe(error);
    expect(stop.halted).toBe(true);
  });

  it('Redis lost drops the queue and takes precedence: the row is an error, not a skip', () => {
    const stop = new RunStop();
    stop.stop('credits');
    const lost = new CoordinationLostError('Lost the connection to Redis', undefined);
    stop.stop('redis', lost);
    expect(stop.halted).toBe(false);
    expect(stop.refusal()).toMatchObject({ kind: 'error', code: 'redis_unavailable' });
  });

  it('max_errors drops the queue without halting (requests in flight finish)', () => {
    const stop = new RunStop();
    let dropped = 0;
    stop.requestsSignal.addEventListener('abort', () => (dropped += 1));
    stop.stop('max_errors');
    expect(dropped).toBe(1);
    expect(stop.halted).toBe(false);
    expect(stop.refusal()).toMatchObject({ kind: 'skipped', code: 'max_errors' });
  });

  it('the queue is dropped once, whatever the reasons that follow', () => {
    const stop = new RunStop();
    let dropped = 0;
    stop.requestsSignal.addEventListener('abort', () => (dropped += 1));
    stop.stop('interrupt');
    stop.stop('unauthorized', new UnauthorizedError('x'));
    stop.stop('max_errors');
    expect(dropped).toBe(1);
    expect(stop.requestsSignal.aborted).toBe(true);
  });

  it('the drain deadline is made once; a second interrupt ends it at once', async () => {
    const stop = new RunStop();
    stop.stop('interrupt');
    const deadline = stop.drainDeadline(60_000);
    expect(stop.drainDeadline(1)).toBe(deadline);
    expect(stop.quitting).toBe(false);
    stop.stop('interrupt');
    expect(stop.quitting).toBe(true);
    await deadline;
  });

  it('quit() is an interrupt that ends the drain at once, given first or after one', async () => {
    for (const before of [0, 1]) {
      const stop = new RunStop();
      if (before) stop.stop('interrupt');
      stop.quit();
      expect(stop.stoppedBy).toBe('interrupt');
      expect(stop.halted).toBe(true);
      expect(stop.quitting).toBe(true);
      await stop.drainDeadline(60_000);
    }
  });

  it('a second interrupt before any drain began makes the drain end at once', async () => {
    const stop = new RunStop();
    stop.stop('interrupt');
    stop.stop('interrupt');
    await stop.drainDeadline(60_000);
  });
});

describe('RunStop: why the run stopped, as the summary says it', () => {
  it('credits stopped the run only once they turned a row away (a run the store answers whole did not stop early)', () => {
    const stop = new RunStop();
    stop.stop('credits');
    expect(stop.stoppedBy).toBeUndefined();
    expect(stop.refusal()).toMatchObject({ code: 'credit_reserve' });
    expect(stop.stoppedBy).toBe('credits');
  });

  it('Redis lost, then an interrupt, then --max-errors, then credits', () => {
    const stop = new RunStop();
    stop.turnAway('credits');
    expect(stop.stoppedBy).toBe('credits');
    stop.stop('max_errors');
    expect(stop.stoppedBy).toBe('max_errors');
    stop.stop('interrupt');
    expect(stop.stoppedBy).toBe('interrupt');
    stop.stop('redis', new CoordinationLostError('Lost the connection to Redis', undefined));
    expect(stop.stoppedBy).toBe('redis');
  });
});
