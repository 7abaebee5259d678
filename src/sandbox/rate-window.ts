// The sandbox's rate limit (step 3 of the server's order): fixed windows of `windowMs` from the
// moment the server is ready; every authenticated request counts; once `rpm` were accepted in a
// window the rest get 429 until it ends. The 429 looks like the production server's (behaviour
// notes, "Rate limiting": code 1030 with a "Retry after <UTC>" message), or like one of the
// variants `rateLimitStyle` asks for.

import type { ResolvedSandboxOptions } from './options.js';
import type { SandboxStats, SandboxWindowStats } from './stats.js';

export type ResponseHeaders = Record<string, string | number>;

type RateLimitStyle = ResolvedSandboxOptions['rateLimitStyle'];

/** "YYYY-MM-DD HH:MM:SS" in UTC (the 1030 message's form). */
function utcStamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

export class SandboxRateWindow {
  readonly rpm: number;
  readonly windowMs: number;
  private readonly style: RateLimitStyle;
  private readonly stats: SandboxStats;
  private startMs = Date.now();
  private index = -1;
  private current: SandboxWindowStats;

  constructor(options: Pick<ResolvedSandboxOptions, 'rpm' | 'windowMs' | 'rateLimitStyle'>, stats: SandboxStats) {
    this.rpm = options.rpm;
    this.windowMs = options.windowMs;
    this.style = options.rateLimitStyle;
    this.stats = stats;
    this.current = { start: this.startMs, requests: 0, accepted: 0, limited: 0 };
  }

  /** Windows are aligned to the moment the server is ready to accept requests. */
  alignTo(now: number): void {
    this.startMs = now;
  }

  /** The fixed window `now` falls in (never going back if the clock does). */
  at(now: number): SandboxWindowStats {
    const index = Math.max(this.index, Math.floor((now - this.startMs) / this.windowMs));
    if (index !== this.index) {
      this.index = index;
      this.current = { start: this.startMs + index * this.windowMs, requests: 0, accepted: 0, limited: 0 };
      this.stats.windows.push(this.current);
    }
    return this.current;
  }

  endOf(win: SandboxWindowStats): number {
    return win.start + this.windowMs;
  }

  /** Counts the request in `win`: accepted (true), or limited (false) once `rpm` were accepted. */
  admit(win: SandboxWindowStats): boolean {
    if (win.accepted >= this.rpm) {
      win.limited++;
      this.stats.rateLimited++;
      return false;
    }
    win.accepted++;
    return true;
  }

  remaining(win: SandboxWindowStats): number {
    return Math.max(0, this.rpm - win.accepted);
  }

  headers(remaining: number, resetSeconds: number): ResponseHeaders {
    return {
      'x-ratelimit-limit': this.rpm,
      'x-ratelimit-remaining': remaining,
      'x-ratelimit-reset': resetSeconds,
    };
  }

  /** The 429 for a request refused at `now` in the window ending at `windowEnd`. */
  tooManyRequests(now: number, windowEnd: number, resetSeconds: number): { body: string; headers: ResponseHeaders } {
    const style = this.style;
    // The stamp is rounded UP to a whole second: a client waiting until the stamp must find the
    // window over, which a truncated stamp would not guarantee.
    const endCeil = Math.ceil(windowEnd / 1000) * 1000;
    const body =
      style.message === 'code1030'
        ? JSON.stringify({
            status: 'failed',
            error: { code: 1030, message: `Too many requests, Retry after ${utcStamp(endCeil)} UTC` },
          })
        : style.message === 'plain'
          ? JSON.stringify({ status: 'failed', error: { code: 1030, message: 'Too many requests' } })
          : JSON.stringify({
              status: 'failed',
              error: { message: `Too many requests, Retry after ${new Date(endCeil).toString()}` },
            });
    const headers: ResponseHeaders = style.rateLimitHeaders ? this.headers(0, resetSeconds) : {};
    if (style.retryAfter === 'seconds') {
      headers['retry-after'] = Math.max(1, Math.ceil((windowEnd - now) / 1000));
    } else if (style.retryAfter === 'http-date') {
      headers['retry-after'] = new Date(endCeil).toUTCString();
    }
    return { body, headers };
  }
}
