// A key is fetched by one worker and its answer shared (docs/reference.md, "Running on several machines"):
// a worker claims a key before it pays for it, and publishes the answer for the others, who wait
// for it instead of paying again.
import { createHash } from 'node:crypto';
import type { Answer } from '../core/answer.js';
import type { RedisLink } from './redis-link.js';

/** An answer as Redis shares it between workers (a refusal is not shared: each worker's store keeps its own). */
export type SharedAnswer = Omit<Answer, 'refused'>;

/** How long a claim on a key in flight holds before another worker may take it over. */
const CLAIM_TTL_MS = 60_000;
/** How long answers stay shared in Redis (the durable store keeps them longer). */
const ANSWER_TTL_MS = 24 * 60 * 60 * 1000;

export class SharedAnswers {
  readonly #link: RedisLink;
  readonly #clusterId: string;
  readonly #workerId: string;
  readonly #claimTtlMs: number;
  readonly #answerTtlMs: number;

  constructor(link: RedisLink, clusterId: string, workerId: string, claimTtlMs = CLAIM_TTL_MS, answerTtlMs = ANSWER_TTL_MS) {
    this.#link = link;
    this.#clusterId = clusterId;
    this.#workerId = workerId;
    this.#claimTtlMs = claimTtlMs;
    this.#answerTtlMs = answerTtlMs;
  }

  #answerKey(op: string, key: string): string {
    return `${this.#clusterId}:answer:${op}:${createHash('sha1').update(key).digest('hex')}`;
  }
  #claimKey(op: string, key: string): string {
    return `${this.#clusterId}:claim:${op}:${createHash('sha1').update(key).digest('hex')}`;
  }

  /** The answer another worker fetched for the key, with when it was fetched (epoch ms, its clock). */
  async sharedAnswer(op: string, key: string): Promise<SharedAnswer | undefined> {
    const text = await this.#link.call(() => this.#link.client.get(this.#answerKey(op, key)));
    if (text === null) return undefined;
    const answer = JSON.parse(text) as Partial<SharedAnswer>;
    // An answer without a date (published by an older version) counts as fetched long ago.
    return { found: answer.found === true, data: answer.data, fetchedAt: typeof answer.fetchedAt === 'number' ? answer.fetchedAt : 0 };
  }

  /** True when this worker may fetch the key; false while another worker holds it. */
  async claim(op: string, key: string): Promise<boolean> {
    const won = await this.#link.call(() => this.#link.client.set(this.#claimKey(op, key), this.#workerId, 'PX', this.#claimTtlMs, 'NX'));
    return won === 'OK';
  }

  async publishAnswer(op: string, key: string, answer: SharedAnswer): Promise<void> {
    await this.#link.call(() =>
      this.#link.client.multi().set(this.#answerKey(op, key), JSON.stringify(answer), 'PX', this.#answerTtlMs).del(this.#claimKey(op, key)).exec(),
    );
  }

  async release(op: string, key: string): Promise<void> {
    await this.#link.call(() => this.#link.client.del(this.#claimKey(op, key)));
  }
}
