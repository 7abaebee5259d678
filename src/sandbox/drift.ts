// People who change jobs (docs/cli-contract.md, "What changed since the last answer"), so that a
// re-check of stored answers has something to find. The sandbox counts epochs: 0 at its start
// (or --epoch N), one more at each nextDay(). With a drift share D, at each epoch k = 1, 2, ... a
// found person whose hash of (key, k) falls below D moves: a new title at a new company, drawn
// from that hash (leads.ts, movedPerson: never the title or company they had); one whose hash
// falls in the next tenth of D (D to 1.1 D) leaves: not found, until a later move. A person's
// answer at epoch N is their moves from 1 to N in turn, so it depends on (key, epoch) alone:
// tests compute it (data.ts: sandboxAnswer with `drift` and `epoch`).
// With no drift (the default) every answer is as it always was.
import type { Lead } from '../api/types.js';
import { Digest, movedPerson } from './leads.js';

export interface Drift {
  /** The share of found people who move at each epoch, 0 to 1. */
  drift: number;
  /** How many epochs have passed. */
  epoch: number;
}

/** Of D, the share of people who leave (not found) rather than move. */
const LEAVE_SHARE = 0.1;

/** The person at `epoch`: as found at first, after their moves, or undefined when they left. */
export function driftedPerson(lead: Lead, key: string, { drift, epoch }: Drift): Lead | undefined {
  if (drift <= 0) return lead;
  let person = lead;
  let left = false;
  for (let k = 1; k <= epoch; k += 1) {
    const d = new Digest(`${key}\u0000${k}`);
    const bucket = d.bucket();
    if (bucket < drift) [person, left] = [movedPerson(person, d), false];
    else if (bucket < drift * (1 + LEAVE_SHARE)) left = true;
  }
  return left ? undefined : person;
}
