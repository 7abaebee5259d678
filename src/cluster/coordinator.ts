// Several workers, one account (docs/reference.md, "Running on several machines"): the state that must be
// shared lives in Redis, under keys derived from the service and a hash of the token (never the
// token itself). Bottleneck's own clustering carries the rate limiter; the Coordinator is the one
// object the run holds for the rest, each concern in a file of its own: the connection and its
// loss (redis-link.ts), the credit reserve (shared-credits.ts), claims on keys in flight and
// answers shared between workers (shared-answers.ts), the window-edge refill and pause that
// keep the shared reservoir in step with the server (shared-rate.ts), and the ledger with the day
// and month budgets (shared-spend.ts).
import { createHash, randomUUID } from 'node:crypto';
import type Bottleneck from 'bottleneck';
import type { Redis } from 'ioredis';
import { RedisLink, type CoordinationLostError } from './redis-link.js';
import { SharedAnswers, type SharedAnswer } from './shared-answers.js';
import { SharedCredits } from './shared-credits.js';
import { SharedRate } from './shared-rate.js';
import { SharedSpend } from './shared-spend.js';

export { CoordinationLostError } from './redis-link.js';
export type { SharedAnswer } from './shared-answers.js';

export interface CoordinatorOptions {
  url: string;
  service: string;
  /** A hash of the token (Transport.tokenFingerprint): the token itself never reaches Redis. */
  tokenFingerprint: string;
  /** How long a claim on a key in flight holds before another worker may take it over. */
  claimTtlMs?: number;
  /** How long answers stay shared in Redis (the durable store keeps them longer). */
  answerTtlMs?: number;
  /** How long a worker's credits in flight (and its holds on the budgets) outlive its last reservation or settlement (see INFLIGHT_TTL_MS in shared-credits.ts). */
  inflightTtlMs?: number;
  connectTimeoutMs?: number;
}

export class Coordinator {
  readonly id: string;
  readonly client: Redis;
  readonly connection: Bottleneck.IORedisConnection;
  readonly workerId = randomUUID();
  readonly #link: RedisLink;
  readonly #rate: SharedRate;
  readonly #credits: SharedCredits;
  readonly #answers: SharedAnswers;
  /** The ledger and the day and month budgets every worker shares (shared-spend.ts). */
  readonly spend: SharedSpend;

  private constructor(link: RedisLink, options: CoordinatorOptions) {
    this.#link = link;
    this.client = link.client;
    this.connection = link.connection;
    // One cluster per account and service: a hash of the token names it, never the token.
    this.id = `lead-enrich:${createHash('sha256').update(`${options.service}\u0000${options.tokenFingerprint}`).digest('hex').slice(0, 20)}`;
    this.#rate = new SharedRate(link, this.id, this.workerId);
    this.#credits = new SharedCredits(link, this.id, this.workerId, options.inflightTtlMs);
    this.#answers = new SharedAnswers(link, this.id, this.workerId, options.claimTtlMs, options.answerTtlMs);
    this.spend = new SharedSpend(link, this.id, this.workerId, options.inflightTtlMs);
  }

  static async connect(options: CoordinatorOptions): Promise<Coordinator> {
    return new Coordinator(await RedisLink.connect(options.url, options.connectTimeoutMs), options);
  }

  // --- the connection ----------------------------------------------------------------------------

  get lost(): CoordinationLostError | undefined {
    return this.#link.lost;
  }

  onLost(listener: (error: CoordinationLostError) => void): void {
    this.#link.onLost(listener);
  }

  /** Marks Redis as gone (once) and tells the run. */
  fail(cause: unknown): CoordinationLostError {
    return this.#link.fail(cause);
  }

  close(): Promise<void> {
    return this.#link.close();
  }

  // --- rate: one refill per window edge, and a pause every worker sees (shared-rate.ts) ---------

  refillTurn(edge: number, windowMs: number, delayMs: number): Promise<number | undefined> {
    return this.#rate.refillTurn(edge, windowMs, delayMs);
  }

  countOutside(edge: number, n: number, windowMs: number): Promise<void> {
    return this.#rate.countOutside(edge, n, windowMs);
  }

  refillReservoir(edge: number, windowMs: number, allowance: number, minTimeMs: number): Promise<number | 'late' | undefined> {
    return this.#rate.refillReservoir(edge, windowMs, allowance, minTimeMs);
  }

  pauseUntil(until: number): Promise<void> {
    return this.#rate.pauseUntil(until);
  }

  pausedUntil(): Promise<number> {
    return this.#rate.pausedUntil();
  }

  // --- credits: one estimate for every worker (shared-credits.ts) ----------------------------------

  creditReading(balance: number, reserve: number, atStart = false): Promise<void> {
    return this.#credits.creditReading(balance, reserve, atStart);
  }

  tryReserve(cost: number, reserve: number): Promise<boolean> {
    return this.#credits.tryReserve(cost, reserve);
  }

  settle(cost: number, charged: boolean): Promise<void> {
    return this.#credits.settle(cost, charged);
  }

  markExhausted(): Promise<void> {
    return this.#credits.markExhausted();
  }

  sharedBalance(): Promise<number | undefined> {
    return this.#credits.sharedBalance();
  }

  // --- answers: a key is fetched by one worker, and its answer shared (shared-answers.ts) ----------

  sharedAnswer(op: string, key: string): Promise<SharedAnswer | undefined> {
    return this.#answers.sharedAnswer(op, key);
  }

  claim(op: string, key: string): Promise<boolean> {
    return this.#answers.claim(op, key);
  }

  publishAnswer(op: string, key: string, answer: SharedAnswer): Promise<void> {
    return this.#answers.publishAnswer(op, key, answer);
  }

  release(op: string, key: string): Promise<void> {
    return this.#answers.release(op, key);
  }
}
