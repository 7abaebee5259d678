// The sandbox's controls for a simulation of many nights (test/simulation/): its own books (every
// keyed answer with when, at which epoch and what it charged), the truth of a key at any epoch
// without a request, and the daily limit and latency switched while it runs.
import { describe, expect, it } from 'vitest';
import { sandboxAnswer } from '../../src/sandbox/data.js';
import type { Sandbox } from '../../src/sandbox/server.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';

const sandbox = sandboxesPerTest();

async function lookup(s: Sandbox, email: string): Promise<{ status: number; body: { data?: unknown; error?: { code?: number } } }> {
  const res = await fetch(`${s.baseUrl}/reverse_lookup/email?email_address=${encodeURIComponent(email)}`, { headers: { authorization: `Bearer ${s.token}` } });
  const text = await res.text();
  // A 503 fault has no body.
  return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as { data?: unknown; error?: { code?: number } } };
}

async function mx(s: Sandbox, domain: string): Promise<number> {
  const res = await fetch(`${s.baseUrl}/domain/resolve/mx`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ domain }),
  });
  await res.arrayBuffer();
  return res.status;
}

const keys = Array.from({ length: 60 }, (_, i) => `person.${i}@books${i % 5}.example`);

describe('the sandbox books (answerLog)', () => {
  it('lists every keyed answer sent, found or not, with its time, epoch and charge; refusals and faults are not answers', async () => {
    const s = await sandbox({ answerLog: true, drift: 0.3, credits: 1_000 });
    const before = Date.now();
    await lookup(s, ' Person.1@Books1.example ');
    await lookup(s, 'someone@notfound-corp.example');
    await lookup(s, 'not-an-email');
    expect(await mx(s, 'books1.example')).toBe(200);
    s.nextDay();
    await lookup(s, 'person.1@books1.example');
    s.setFaults({ error503: 1 });
    expect((await lookup(s, 'person.2@books2.example')).status).toBe(503);
    s.setFaults({});
    s.setCredits(0);
    expect((await lookup(s, 'person.3@books3.example')).status).toBe(402);
    const after = Date.now();

    expect(s.answers.map(({ at: _at, ...rest }) => rest)).toEqual([
      { op: 'lookup_email', key: 'person.1@books1.example', found: true, credits: 4, epoch: 0 },
      { op: 'lookup_email', key: 'someone@notfound-corp.example', found: false, credits: 0, epoch: 0 },
      { op: 'mx', key: 'books1.example', found: true, credits: 1, epoch: 0 },
      {
        op: 'lookup_email',
        key: 'person.1@books1.example',
        found: s.truth('lookup_email', 'person.1@books1.example', 1).kind === 'found',
        credits: s.truth('lookup_email', 'person.1@books1.example', 1).credits,
        epoch: 1,
      },
    ]);
    for (const answer of s.answers) {
      expect(answer.at).toBeGreaterThanOrEqual(before);
      expect(answer.at).toBeLessThanOrEqual(after);
    }
    // The books and the balance agree: what the log charged is what the account was charged.
    expect(s.answers.reduce((sum, a) => sum + a.credits, 0)).toBe(s.stats.creditsCharged);
  });

  it('keeps nothing unless asked', async () => {
    const s = await sandbox();
    await lookup(s, 'person.1@books1.example');
    expect(s.answers).toEqual([]);
  });

  it('refuses an answerLog that is not a boolean, naming the option', async () => {
    await expect(sandbox({ answerLog: 'yes' as unknown as boolean })).rejects.toThrow(/Invalid sandbox option answerLog: must be a boolean/);
  });
});

describe('the truth of a key at an epoch', () => {
  it('is what the server sends at that epoch, shapes and prices included, and costs nothing', async () => {
    const s = await sandbox({ answerLog: true, drift: 0.3, variedPrices: true, credits: 100_000 });
    for (let epoch = 0; epoch < 3; epoch += 1) {
      for (const key of keys) {
        const sent = await lookup(s, key);
        const truth = s.truth('lookup_email', key, epoch);
        expect(truth.data).toEqual(sent.body.data);
        expect(truth.kind).toBe(sandboxAnswer('lookup_email', key, { drift: 0.3, epoch }).kind);
        expect(s.truth('lookup_email', key)).toEqual(truth);
      }
      s.nextDay();
    }
    const charged = s.stats.creditsCharged;
    const requests = s.stats.requests;
    // Each answer's charge is the truth's, phones included (2 credits each on top of 4).
    expect(s.answers.map((a) => a.credits)).toEqual(s.answers.map((a) => s.truth(a.op, a.key, a.epoch).credits));
    expect(new Set(s.answers.map((a) => a.credits))).toEqual(new Set([0, 4, 6, 8]));
    s.truth('lookup_email', keys[0]!, 7);
    expect([s.stats.creditsCharged, s.stats.requests]).toEqual([charged, requests]);
    expect(s.truth('lookup_email', 'nobody').kind).toBe('rejected');
    expect(() => s.truth('lookup_email', keys[0]!, -1)).toThrow(/Invalid sandbox option epoch/);
  });
});

describe('conditions switched while the sandbox runs', () => {
  it('setDailyLimit: the limit from now on, today’s count kept; nextDay() starts a new count; undefined lifts it', async () => {
    const s = await sandbox();
    expect((await lookup(s, keys[0]!)).status).toBe(200);
    s.setDailyLimit(2);
    expect((await lookup(s, keys[1]!)).status).toBe(200);
    const refused = await lookup(s, keys[2]!);
    expect([refused.status, refused.body.error?.code]).toEqual([429, 1017]);
    s.nextDay();
    expect((await lookup(s, keys[2]!)).status).toBe(200);
    expect((await lookup(s, keys[3]!)).status).toBe(200);
    expect((await lookup(s, keys[4]!)).body.error?.code).toBe(1017);
    s.setDailyLimit(undefined);
    expect((await lookup(s, keys[4]!)).status).toBe(200);
    expect(() => s.setDailyLimit(-1)).toThrow(/Invalid sandbox option dailyLimit/);
  });

  it('setLatency: the requests that arrive next wait that long; back to none', async () => {
    const s = await sandbox();
    s.setLatency('150');
    let started = performance.now();
    await lookup(s, keys[0]!);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    s.setLatency([0, 0]);
    started = performance.now();
    await lookup(s, keys[1]!);
    expect(performance.now() - started).toBeLessThan(140);
    expect(() => s.setLatency('9-1')).toThrow(/Invalid sandbox option latency/);
    expect(() => s.setLatency([5] as unknown as [number, number])).toThrow(/Invalid sandbox option latency/);
  });
});
