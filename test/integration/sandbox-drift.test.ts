// The sandbox's people change jobs: with `drift`, at each epoch (each nextDay(), or the
// `epoch` option of a restart) that share of found people answer a new title and company, and a
// tenth as many answer not found; from (key, epoch) alone, so the pure sandboxAnswer predicts what
// the server sends. With no drift every answer is the same at every epoch.
import { describe, expect, it } from 'vitest';
import type { Lead } from '../../src/api/types.js';
import { sandboxAnswer } from '../../src/sandbox/data.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { sandboxesPerTest } from '../helpers/sandboxes.js';

const sandbox = sandboxesPerTest();

const keys = Array.from({ length: 3_000 }, (_, i) => `person.${i}@company${i % 7}.com`);
const leadOf = (key: string, options: { drift?: number; epoch?: number }) => {
  const answer = sandboxAnswer('lookup_email', key, options);
  return answer.kind === 'found' ? (answer.data.lead as Lead) : undefined;
};

async function lookup(s: Sandbox, key: string): Promise<unknown> {
  const res = await fetch(`${s.baseUrl}/reverse_lookup/email?email_address=${encodeURIComponent(key)}`, { headers: { authorization: `Bearer ${s.token}` } });
  return ((await res.json()) as { data: unknown }).data;
}

describe('sandbox drift: answers from (key, epoch)', () => {
  it('without drift, or at epoch 0, every answer is as it always was', () => {
    for (const key of keys.slice(0, 300)) {
      const today = sandboxAnswer('lookup_email', key);
      expect(sandboxAnswer('lookup_email', key, { drift: 0, epoch: 5 })).toEqual(today);
      expect(sandboxAnswer('lookup_email', key, { drift: 0.3, epoch: 0 })).toEqual(today);
      expect(sandboxAnswer('lookup_url', `https://network.example/in/${key}`, { drift: 0, epoch: 3 })).toEqual(
        sandboxAnswer('lookup_url', `https://network.example/in/${key}`),
      );
    }
  });

  it('at each epoch that share of found people move to a new title and company, and a tenth as many leave', () => {
    const found = keys.filter((key) => leadOf(key, {}) !== undefined);
    let moved = 0;
    let left = 0;
    for (const key of found) {
      const before = leadOf(key, { drift: 0.3, epoch: 0 })!;
      const after = leadOf(key, { drift: 0.3, epoch: 1 });
      if (after === undefined) {
        left += 1;
        continue;
      }
      if (after.title === before.title) {
        expect(after).toEqual(before);
        continue;
      }
      moved += 1;
      // A new title at a new company; the person is the same person.
      expect(after.company_domain).not.toBe(before.company_domain);
      expect(after.company_name).not.toBe(before.company_name);
      expect(after.contructed_title).toBe(`${after.title} at ${after.company_name}`);
      expect({ ...after, title: 0, company_name: 0, company_domain: 0, contructed_title: 0 }).toEqual({
        ...before,
        title: 0,
        company_name: 0,
        company_domain: 0,
        contructed_title: 0,
      });
    }
    expect(moved / found.length).toBeGreaterThan(0.27);
    expect(moved / found.length).toBeLessThan(0.33);
    expect(left / found.length).toBeGreaterThan(0.015);
    expect(left / found.length).toBeLessThan(0.045);
    // Not found stays not found: only found people drift.
    for (const key of keys.filter((k) => leadOf(k, {}) === undefined)) expect(leadOf(key, { drift: 0.3, epoch: 4 })).toBeUndefined();
  });

  it('a move is from the job a person had: the next epoch never gives back the same title or company', () => {
    for (const key of keys.slice(0, 1_000)) {
      const one = leadOf(key, { drift: 0.5, epoch: 1 });
      const two = leadOf(key, { drift: 0.5, epoch: 2 });
      if (one === undefined || two === undefined || JSON.stringify(one) === JSON.stringify(two)) continue;
      expect(two.title).not.toBe(one.title);
      expect(two.company_domain).not.toBe(one.company_domain);
    }
  });
});

describe('sandbox drift: the server', () => {
  it('answers as sandboxAnswer at its epoch: one more at each nextDay(), or from the start with `epoch`', async () => {
    const s = await sandbox({ drift: 0.3 });
    const sample = keys.slice(0, 40);
    expect(s.epoch).toBe(0);
    for (const key of sample) expect(await lookup(s, key)).toEqual(sandboxAnswer('lookup_email', key).data);
    s.nextDay();
    expect(s.epoch).toBe(1);
    const dayOne = await Promise.all(sample.map((key) => lookup(s, key)));
    expect(dayOne).toEqual(sample.map((key) => sandboxAnswer('lookup_email', key, { drift: 0.3, epoch: 1 }).data));
    expect(dayOne).not.toEqual(sample.map((key) => sandboxAnswer('lookup_email', key).data));
    // A restart at epoch 1 answers as the first did after one nextDay().
    const restarted = await sandbox({ drift: 0.3, epoch: 1 });
    expect(restarted.epoch).toBe(1);
    expect(await Promise.all(sample.map((key) => lookup(restarted, key)))).toEqual(dayOne);
  });

  it('refuses a drift outside 0..1 and an epoch that is not a whole number, naming the option', async () => {
    await expect(startSandbox({ drift: 1.5 })).rejects.toThrow('Invalid sandbox option drift: must be a number between 0 and 1, got 1.5');
    await expect(startSandbox({ epoch: -1 })).rejects.toThrow(/Invalid sandbox option epoch: .*got -1/);
  });
});
