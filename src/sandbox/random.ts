// A small seeded PRNG for the sandbox's latency and fault draws. Math.random cannot be seeded, and
// a benchmark or a fault test must replay the same sequence for the same `seed` option.

/** Returns a function yielding uniform floats in [0, 1), mulberry32 over a 32-bit state. */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Derives an independent seed, so one stream (faults) does not shift another (latency). */
export function deriveSeed(seed: number, stream: number): number {
  let h = (Math.trunc(seed) ^ Math.imul(stream + 1, 0x9e3779b9)) >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b) >>> 0;
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35) >>> 0;
  return (h ^ (h >>> 16)) >>> 0;
}
