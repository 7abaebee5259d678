// The sandbox's routes: steps 4 to 7 of the server's order for a request that passed faults,
// auth and the rate window — the path (404), validation (400 with `reasons`), credits (402,
// account.ts) and the answer (data.ts) — and the fixed bodies of the production server
// (docs/api-behaviour-notes.md, "Error bodies"). Sending, latency and the order of the steps are server.ts's.

import type { Operation } from '../api/types.js';
import { SANDBOX_OPERATION_PATHS } from './operation-paths.js';
import type { SandboxAccount } from './account.js';
import { sandboxLimits, sandboxPlans, type SandboxCosts } from './account-data.js';
import { sandboxAnswer, type SandboxAnswerOptions } from './data.js';
import { isSandboxKeyOperation, normalizeSandboxKey, SANDBOX_KEY_PARAMS, validationReason, type SandboxKeyOperation, type KeyRejectionReason } from './keys.js';
import { isPlainObject } from './options.js';
import { DAILY_LIMIT_ANSWER, DailyCount, FORBIDDEN, shapedAnswer, type ServiceShapes } from './service-shapes.js';
import type { SandboxTruth, ServedAnswer } from './answer-log.js';

export const BASE_PATH = '/v2';
const ROUTES = new Map<string, Operation>(
  (Object.entries(SANDBOX_OPERATION_PATHS) as Array<[Operation, { method: string; path: string }]>).map(([op, r]) => [`${r.method} ${BASE_PATH}${r.path}`, op]),
);

/** The operation a method and path (without the query) name, if any. */
export function routeOf(method: string | undefined, path: string): Operation | undefined {
  return ROUTES.get(`${method ?? ''} ${path}`);
}

/** A status and its JSON body; the fixed ones are shared, never changed. */
export interface Answer {
  readonly status: number;
  readonly body: string;
}

function failed(status: number, code: number, message: string): Answer {
  return { status, body: JSON.stringify({ status: 'failed', error: { code, message } }) };
}

export const UNAUTHORIZED = failed(401, 1000, 'Invalid API Token, please generate new token');
const PAYMENT_REQUIRED = failed(402, 1002, 'You have exhausted your credits, please add additional credits to continue');
const NOT_FOUND = failed(404, 404, 'Not found');
export const PAYLOAD_TOO_LARGE = failed(413, 413, 'Payload Too Large');
/** MX and Whois bodies are tiny; anything bigger is refused rather than buffered. */
export const MAX_BODY_BYTES = 64 * 1024;
/** Interface 4.4 / 4.5: timeout maximum. */
const MAX_TIMEOUT_MS = 110_000;

function validationFailed(reasons: KeyRejectionReason[]): Answer {
  return { status: 400, body: JSON.stringify({ status: 'failed', error: { message: 'validation failed', reasons } }) };
}

/** Reads the key of a POST (MX, Whois) body: `{domain, timeout?}` (interface 4.4, 4.5). */
function parseDomainBody(op: SandboxKeyOperation, text: string): { raw: string | undefined; reasons: KeyRejectionReason[] } {
  const reasons: KeyRejectionReason[] = [];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!isPlainObject(body)) {
    reasons.push(validationReason('value', 'body', 'must be a valid JSON object', 'object.base'));
    return { raw: undefined, reasons };
  }
  const { name } = SANDBOX_KEY_PARAMS[op];
  const domain = body[name];
  let raw: string | undefined;
  if (domain === undefined) reasons.push(validationReason(name, 'body', 'is required', 'any.required'));
  else if (typeof domain !== 'string') reasons.push(validationReason(name, 'body', 'must be a string', 'string.base'));
  else raw = domain;
  const timeout = body.timeout;
  if (timeout !== undefined) {
    if (typeof timeout !== 'number' || !Number.isFinite(timeout)) {
      reasons.push(validationReason('timeout', 'body', 'must be a number', 'number.base'));
    } else if (timeout <= 0) {
      reasons.push(validationReason('timeout', 'body', 'must be a positive number', 'number.positive'));
    } else if (timeout > MAX_TIMEOUT_MS) {
      reasons.push(validationReason('timeout', 'body', `must be less than or equal to ${MAX_TIMEOUT_MS}`, 'number.max'));
    }
  }
  return { raw, reasons };
}

export class SandboxRoutes {
  private readonly account: SandboxAccount;
  private readonly rpm: number;
  private readonly answerOptions: Required<Pick<SandboxAnswerOptions, 'notFoundRate' | 'drift' | 'epoch'>>;
  private readonly shapes: ServiceShapes;
  private readonly costs: SandboxCosts;
  /** Today's keyed requests, for the daily limit. */
  readonly today = new DailyCount();
  /** Every keyed answer sent, when the `answerLog` option asks for them (answer-log.ts). */
  readonly log: ServedAnswer[] | undefined;

  constructor(
    account: SandboxAccount,
    options: { rpm: number; notFoundRate: number; drift: number; epoch: number; shapes: ServiceShapes; costs: SandboxCosts; answerLog: boolean },
  ) {
    this.account = account;
    this.rpm = options.rpm;
    this.answerOptions = { notFoundRate: options.notFoundRate, drift: options.drift, epoch: options.epoch };
    // A copy: the daily limit may change while the sandbox runs (setDailyLimit).
    this.shapes = { ...options.shapes };
    this.costs = options.costs;
    this.log = options.answerLog ? [] : undefined;
  }

  /** Keyed requests answered per day from now on (undefined: no limit); today's count stands. */
  setDailyLimit(limit: number | undefined): void {
    this.shapes.dailyLimit = limit;
  }

  /** What a key's answer is at `epoch` (default: now), as it would be sent: no charge, no count. */
  truth(op: SandboxKeyOperation, raw: string, epoch = this.answerOptions.epoch): SandboxTruth {
    const key = normalizeSandboxKey(op, raw);
    const answer = sandboxAnswer(op, key, { ...this.answerOptions, epoch });
    if (answer.kind === 'rejected') return { kind: 'rejected', key, data: undefined, credits: 0 };
    const shaped = shapedAnswer(op, key, answer, this.shapes, this.costs);
    const sent = JSON.parse(shaped.body) as { data?: unknown };
    return { kind: answer.kind, key, data: sent.data, credits: shaped.cost };
  }

  /** How many epochs have passed: people move (with drift) at each. */
  get epoch(): number {
    return this.answerOptions.epoch;
  }

  /** A new day: the daily limit's count starts again, and people may move (drift.ts). */
  nextDay(): void {
    this.today.nextDay();
    this.answerOptions.epoch += 1;
  }

  /**
   * Steps 4 to 7 for an admitted request (`q`: where the query starts in `url`, or -1). Returns
   * the answer, or — for MX and Whois, whose key is in a JSON body — the operation, for the
   * caller to read the body and hand it to answerBody.
   */
  answer(op: Operation | undefined, url: string, q: number, remaining: number, windowEnd: number): Answer | SandboxKeyOperation {
    if (op === undefined) return NOT_FOUND;
    if (!isSandboxKeyOperation(op)) {
      let data: unknown;
      if (op === 'myplans') data = sandboxPlans();
      else if (op === 'credits') data = this.account.creditsData();
      else data = sandboxLimits(this.rpm, remaining, new Date(windowEnd));
      return { status: 200, body: JSON.stringify({ status: 'success', data }) };
    }
    // The token may not use this operation, whatever the key (the service's code 1008).
    if (this.shapes.forbidden.includes(op)) return FORBIDDEN;
    const param = SANDBOX_KEY_PARAMS[op];
    if (param.location === 'body') return op;
    const value = q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get(param.name);
    const reasons = value === null ? [validationReason(param.name, 'query', 'is required', 'any.required')] : [];
    return this.answerKeyed(op, value ?? undefined, reasons);
  }

  /** Steps 5 to 7 for an operation whose key is in a JSON body, once the body is read. */
  answerBody(op: SandboxKeyOperation, text: string): Answer {
    const { raw, reasons } = parseDomainBody(op, text);
    return this.answerKeyed(op, raw, reasons);
  }

  /** Steps 5 to 7 for a keyed operation, once its raw key (or the reasons it has none) is known. */
  private answerKeyed(op: SandboxKeyOperation, raw: string | undefined, reasons: KeyRejectionReason[]): Answer {
    if (raw !== undefined) {
      const key = normalizeSandboxKey(op, raw);
      const answer = sandboxAnswer(op, key, this.answerOptions);
      if (answer.kind === 'rejected') reasons.push(...answer.reasons);
      if (reasons.length === 0 && answer.kind !== 'rejected') {
        if (!this.today.take(this.shapes.dailyLimit)) return DAILY_LIMIT_ANSWER;
        const shaped = shapedAnswer(op, key, answer, this.shapes, this.costs);
        const found = answer.kind === 'found';
        if (!this.account.pay(op, key, found, shaped.cost)) return PAYMENT_REQUIRED;
        this.log?.push({ at: Date.now(), op, key, found, credits: found ? shaped.cost : 0, epoch: this.answerOptions.epoch });
        return shaped;
      }
    }
    return validationFailed(reasons);
  }
}
