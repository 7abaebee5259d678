// Seeded draws. Every night's conditions come from (seed, night) alone, so the first N nights of a
// seed are the same whatever --nights says: replaying night N runs nights 1 to N as they ran.
// The generator is the sandbox's own (mulberry32), from the build the simulation runs.
import { createRandom } from '../../dist/sandbox/random.js';

/** A 32-bit hash of the seed and the names of a stream (murmur3's finalizer over FNV-1a). */
function streamSeed(seed, names) {
  let h = 0x811c9dc5 ^ (seed >>> 0) ^ Math.floor(seed / 2 ** 32);
  for (const ch of names.join('\u0000')) h = Math.imul(h ^ ch.charCodeAt(0), 0x01000193) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}

/** The draws of one stream: `random(seed, 'night', 12)`. */
export function random(seed, ...names) {
  const next = createRandom(streamSeed(seed, names.map(String)));
  const draw = {
    float: () => next(),
    /** An integer in [lo, hi]. */
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)),
    between: (lo, hi) => lo + next() * (hi - lo),
    chance: (p) => next() < p,
    pick: (items) => items[Math.floor(next() * items.length)],
  };
  return draw;
}

/** A fresh seed (for a run that names none): printed, so that it can be replayed. */
export function freshSeed() {
  return Math.floor(Math.random() * 2 ** 31);
}
