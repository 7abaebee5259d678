// The sandbox server: a local, deterministic implementation of the Lead Lookup interface
// (docs/lead-api-interface.md) that behaves like the production server as
// docs/api-behaviour-notes.md describes it (error bodies, 401 before the path, 429 with code 1030, 402 on
// credits, empty leads for misses). Used by `--sandbox`, by every test and by the benchmarks.
// node:http only: it must serve a few thousand requests per second on 100+ keep-alive sockets.
//
// Per request, in this order (the order the production server is documented to follow):
//   1. fault injection (seeded, faults.ts): a faulted request is not processed, not charged,
//      not accepted;
//   2. auth (account.ts): `Authorization` must be exactly `Bearer <token>`, else 401 — before
//      the path;
//   3. rate window (rate-window.ts): fixed windows of `windowMs` from server start; every
//      authenticated request counts; once `rpm` were accepted in the window -> 429 until it ends;
//   4. unknown path (or wrong method) -> 404;
//   5. validation -> 400 with `reasons` (keys.ts decides for the key itself);
//   6. credits -> 402 when the balance is <= 0, or when a found answer costs more than is left;
//   7. the answer (data.ts), charging the cost of a found result.
// Steps 4 to 7 are routes.ts's. This file is the loop around them: it listens, tracks sockets,
// draws faults and latency (latency.ts: counted from the request's arrival and applied before
// the response is written; the request is processed, and charged, on arrival), counts, and
// closes.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ConfigError } from '../api/errors.js';
import { SandboxAccount } from './account.js';
import { applyFault, FaultInjector, type FaultKind } from './faults.js';
import { outageFault, resolveOutage, type Outage, type OutageOptions } from './outage.js';
import { Latency } from './latency.js';
import { intOption, latencyOption, resolveSandboxOptions, type ResolvedSandboxOptions, type SandboxOptions } from './options.js';
import type { SandboxKeyOperation } from './keys.js';
import type { SandboxTruth, ServedAnswer } from './answer-log.js';
import { createRandom, deriveSeed } from './random.js';
import { SandboxRateWindow, type ResponseHeaders } from './rate-window.js';
import { BASE_PATH, MAX_BODY_BYTES, PAYLOAD_TOO_LARGE, routeOf, SandboxRoutes, UNAUTHORIZED } from './routes.js';
import { createSandboxStats, type SandboxStats } from './stats.js';

// The names this module has always offered, now defined beside it.
export type { FaultKind } from './faults.js';
export type { OutageKind, OutageOptions } from './outage.js';
export { resolveSandboxOptions, type ResolvedSandboxOptions, type SandboxOptions } from './options.js';
export type { SandboxStats, SandboxWindowStats } from './stats.js';
export type { SandboxTruth, ServedAnswer } from './answer-log.js';

export interface Sandbox {
  /** e.g. http://127.0.0.1:PORT/v2 */
  readonly baseUrl: string;
  readonly token: string;
  /** Live object: updated as requests arrive. */
  readonly stats: SandboxStats;
  /** Current balance. */
  readonly credits: number;
  setCredits(n: number): void;
  /** From now on every request gets 401. */
  revokeToken(): void;
  /** Replaces the fault probabilities (kinds not named become 0). */
  setFaults(f: Partial<Record<FaultKind, number>>): void;
  /** Begins an outage (times counted from now), or ends the current one (undefined). */
  setOutage(outage: OutageOptions | undefined): void;
  /**
   * A new day for the daily limit (`dailyLimit`): the requests counted so far no longer count. And
   * a new epoch: with `drift`, that share of found people move (a new title and company) or leave.
   */
  nextDay(): void;
  /** Epochs passed: the `epoch` option, plus one per nextDay(). */
  readonly epoch: number;
  /** Keyed requests answered per day from now on (undefined: no limit), as the `dailyLimit` option; today's count stands. */
  setDailyLimit(limit: number | undefined): void;
  /** The latency of the requests that arrive from now on, as the `latency` option (`'50-150'`, 80) or `[min, max]` ms. */
  setLatency(latency: string | number | [number, number]): void;
  /**
   * With the `answerLog` option, every keyed answer sent, oldest first: when, the normalized key,
   * found or not, what it charged, at which epoch (answer-log.ts). Empty without it.
   */
  readonly answers: readonly ServedAnswer[];
  /** What the sandbox answers for `key` at `epoch` (default: the current one), as it would send it, without a request: nothing charged or counted. */
  truth(op: SandboxKeyOperation, key: string, epoch?: number): SandboxTruth;
  /** Stops listening and destroys every open socket (hanging and keep-alive ones included). */
  close(): Promise<void>;
}

const JSON_TYPE = 'application/json; charset=utf-8';

function send(res: ServerResponse, status: number, body: string, headers: ResponseHeaders): void {
  if (res.destroyed || res.headersSent) return;
  headers['content-type'] = JSON_TYPE;
  headers['content-length'] = Buffer.byteLength(body);
  res.writeHead(status, headers);
  res.end(body);
}

/** The listening server: the request loop and what it owns (sockets, the step objects). */
class SandboxServer {
  readonly stats: SandboxStats = createSandboxStats();
  readonly account: SandboxAccount;
  readonly faults: FaultInjector;
  outage: Outage | undefined;
  readonly latency: Latency;
  private readonly rate: SandboxRateWindow;
  readonly routes: SandboxRoutes;
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private closing: Promise<void> | undefined;

  constructor(opts: ResolvedSandboxOptions) {
    // Separate seeded streams, so a fault draw never shifts the latencies (random.ts).
    this.faults = new FaultInjector(opts.faults, createRandom(deriveSeed(opts.seed, 0)));
    // Counted from the server's start (resolveOutage checked the options already).
    this.outage = opts.outage === undefined ? undefined : resolveOutage(opts.outage, Date.now());
    this.latency = new Latency(opts.latencyMs, createRandom(deriveSeed(opts.seed, 1)));
    this.account = new SandboxAccount(opts, this.stats);
    this.rate = new SandboxRateWindow(opts, this.stats);
    this.routes = new SandboxRoutes(this.account, opts);
    this.server = createServer(this.onRequest);
    // Longer than typical client keep-alive idle times, so the server is not the side that closes
    // an idle socket just as a client reuses it (that race looks like a spurious ECONNRESET).
    this.server.keepAliveTimeout = 65_000;
    this.server.headersTimeout = 66_000;
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  /** Listens and returns the base URL. */
  async listen(port: number, host: string): Promise<string> {
    const server = this.server;
    await new Promise<void>((resolve, reject) => {
      // A LeadError, as every error a library caller can get (docs/library.md, "Errors").
      const onError = (err: NodeJS.ErrnoException): void => {
        const why = err.code === 'EADDRINUSE' ? `${host}:${port} is in use (EADDRINUSE); give another port (0: a free one)` : err.message;
        reject(new ConfigError(`Cannot start the sandbox: ${why}`, { cause: err }));
      };
      server.once('error', onError);
      server.listen(port, host, () => {
        server.off('error', onError);
        resolve();
      });
    });
    this.rate.alignTo(Date.now());
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('sandbox: server has no TCP address');
    const hostPart = address.address.includes(':') ? `[${address.address}]` : address.address;
    return `http://${hostPart}:${address.port}${BASE_PATH}`;
  }

  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.latency.cancelAll();
      this.server.close(() => resolve());
      for (const s of this.sockets) s.destroy();
    });
    return this.closing;
  }

  /** One request, through the steps in the order at the top of this file. */
  private readonly onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const stats = this.stats;
    const arrival = Date.now();
    const win = this.rate.at(arrival);
    stats.requests++;
    win.requests++;

    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const op = routeOf(req.method, q < 0 ? url : url.slice(0, q));
    stats.byOperation[op ?? 'unknown'] = (stats.byOperation[op ?? 'unknown'] ?? 0) + 1;

    // 1. Faults: an outage first, then one drawn, so a faulted request never reaches auth, the
    //    window or the balance.
    const down = outageFault(this.outage, arrival, op);
    if (down !== undefined) {
      stats.outage.requests++;
      if (op !== undefined && !['myplans', 'credits', 'limits'].includes(op)) stats.outage.lookups++;
      stats.faults[down]++;
      applyFault(down, req, res);
      return;
    }
    const fault = this.faults.pick();
    const latency = this.latency.draw();
    if (fault !== undefined) {
      stats.faults[fault]++;
      this.latency.after(arrival, latency, () => applyFault(fault, req, res));
      return;
    }

    // 2. Auth, before the path (docs/api-behaviour-notes.md, "Error bodies": 401).
    if (!this.account.authorize(req.headers.authorization)) {
      this.reply(res, arrival, latency, UNAUTHORIZED.status, UNAUTHORIZED.body, {});
      return;
    }

    // 3. Rate window: every authenticated request counts, account operations and unknown paths too.
    const windowEnd = this.rate.endOf(win);
    const resetSeconds = Math.max(0, Math.ceil((windowEnd - arrival) / 1000));
    if (!this.rate.admit(win)) {
      const limited = this.rate.tooManyRequests(arrival, windowEnd, resetSeconds);
      this.reply(res, arrival, latency, 429, limited.body, limited.headers);
      return;
    }
    const remaining = this.rate.remaining(win);
    const headers = this.rate.headers(remaining, resetSeconds);

    // 4-7. Routes.
    const answer = this.routes.answer(op, url, q, remaining, windowEnd);
    if (typeof answer === 'string') this.readBody(req, res, answer, arrival, latency, headers);
    else this.reply(res, arrival, latency, answer.status, answer.body, headers);
  };

  /** POST: reads the (small) JSON body first. A client that goes away meanwhile is never charged. */
  private readBody(req: IncomingMessage, res: ServerResponse, op: SandboxKeyOperation, arrival: number, latency: number, headers: ResponseHeaders): void {
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        tooLarge = true;
        res.setHeader('connection', 'close');
        this.reply(res, arrival, latency, PAYLOAD_TOO_LARGE.status, PAYLOAD_TOO_LARGE.body, headers);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) return;
      const answer = this.routes.answerBody(op, Buffer.concat(chunks, size).toString('utf8'));
      this.reply(res, arrival, latency, answer.status, answer.body, headers);
    });
  }

  /** Sends once the request's latency has passed since its arrival. */
  private reply(res: ServerResponse, arrival: number, latency: number, status: number, body: string, headers: ResponseHeaders): void {
    this.latency.after(arrival, latency, () => send(res, status, body, headers));
  }
}

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const opts = resolveSandboxOptions(options);
  const server = new SandboxServer(opts);
  const baseUrl = await server.listen(opts.port, opts.host);
  const { account, faults } = server;
  return {
    baseUrl,
    token: opts.token,
    stats: server.stats,
    get credits(): number {
      return account.credits;
    },
    setCredits(n: number): void {
      account.setCredits(n);
    },
    revokeToken(): void {
      account.revoke();
    },
    setFaults(f: Partial<Record<FaultKind, number>>): void {
      faults.setRates(f);
    },
    setOutage(outage: OutageOptions | undefined): void {
      server.outage = outage === undefined ? undefined : resolveOutage(outage, Date.now());
    },
    nextDay(): void {
      server.routes.nextDay();
    },
    get epoch(): number {
      return server.routes.epoch;
    },
    setDailyLimit(limit: number | undefined): void {
      server.routes.setDailyLimit(limit === undefined ? undefined : intOption('dailyLimit', limit, 0, 0));
    },
    setLatency(latency: string | number | [number, number]): void {
      server.latency.set(latencyOption(latency));
    },
    get answers(): readonly ServedAnswer[] {
      return server.routes.log ?? [];
    },
    truth(op: SandboxKeyOperation, key: string, epoch?: number): SandboxTruth {
      return server.routes.truth(op, key, epoch === undefined ? undefined : intOption('epoch', epoch, 0, 0));
    },
    close(): Promise<void> {
      return server.close();
    },
  };
}
