// Scenario 4, 429 storms without Retry-After: the run is told (--rpm) it may go far faster than
// the server allows in its short windows, so the server answers 429 again and again. Whatever the
// shape of the hint (the code-1030 message with x-ratelimit-* headers; the legacy message and no
// headers at all), no row may be lost or paid twice, and the run must wait for the window instead
// of hammering the server: the number of requests stays close to the number of rows.
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../../helpers/files.js';
import { chargedTwice, closeAll, envFor, expectNoCrash, expectNoSecret, expectRowsMatchSandbox, lookupsSeen, sandbox } from './support.js';
import { hangBound } from '../../helpers/processes.js';

afterAll(closeAll);

const styles = [
  {
    name: 'x-ratelimit-* headers and the code-1030 "Retry after <timestamp> UTC" message',
    style: { retryAfter: 'none', rateLimitHeaders: true, message: 'code1030' },
  },
  { name: 'no rate headers, only the legacy message with a long date string', style: { retryAfter: 'none', rateLimitHeaders: false, message: 'legacy' } },
  { name: 'only x-ratelimit-reset: code 1030 with no date in the message', style: { retryAfter: 'none', rateLimitHeaders: true, message: 'plain' } },
  // With no hint at all only the rate window's length (60 s in production; 1 s here, told with
  // --rate-window as a user would) and a fresh /account/limits say when the window ends.
  { name: 'no hint at all: code 1030 without a date and no headers', style: { retryAfter: 'none', rateLimitHeaders: false, message: 'plain' }, window: true },
] as const;

describe.concurrent('429 storms without Retry-After', () => {
  for (const { name, style, ...rest } of styles) {
    it(
      `${name}: no row lost or paid twice, and no hot loop`,
      async () => {
        // The server allows 30 requests per 1-second window; the run is told 6000 RPM (100 a second).
        const rows = 150;
        const s = await sandbox({ rpm: 30, windowMs: 1000, rateLimitStyle: style });
        const dir = makeTempDir();
        const keys = emails(rows, `storm-${style.message}-${style.rateLimitHeaders}`);
        const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((k) => [k])]);
        const window = 'window' in rest ? ['--rate-window', '1000'] : [];
        const result = await runCli(['enrich', input, '--rpm', '6000', '--json', ...window], { env: envFor(s, dir), timeoutMs: 60_000 });
        expectNoCrash(result);
        expect(result.code, result.stderr).toBe(0);
        const summary = JSON.parse(result.stdout);

        // The storm happened: the server refused requests, and the run saw it.
        expect(s.stats.rateLimited).toBeGreaterThan(0);
        expect(summary.rateLimited).toBe(s.stats.rateLimited);
        // Never more accepted per window than the server allows (the server enforces it; this
        // checks the stats mean what we think).
        expect(Math.max(...s.stats.windows.map((w) => w.accepted))).toBeLessThanOrEqual(30);

        // Nothing lost, nothing paid twice.
        expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys);
        expect(readCsvObjects(path.join(dir, 'in.enriched.errors.csv'))).toEqual([]);
        expect(chargedTwice(s)).toEqual([]);

        // No hot loop: after a 429 the whole run waits for the next window, so each window costs
        // at most the requests already in flight when the first 429 came (requests granted but not
        // yet sent wait for the pause to end). Hammering at the requested 100/s would refuse ~70 a
        // window (over 3 requests per row); retrying each row up to its 20-429 limit, 21 per row.
        const windows = s.stats.windows.length;
        const refused = s.stats.windows.map((w) => w.requests - w.accepted);
        // After the first window to overflow, every window costs only the few requests whose edge
        // the run could not place: those in flight when a 429 came, and (without any hint) the ones
        // its learned allowance counts twice because their request straddled an edge (it errs high,
        // see RateWindow.settled: erring low would be for good). Measured: 0-2 a window with the
        // file alone beside two busy processes, up to 9 in one window of a whole-suite run beside
        // them; 4 a window on average is the bound, a tenth of what hammering at 100/s would cost.
        expect(s.stats.rateLimited - Math.max(...refused), JSON.stringify(refused)).toBeLessThanOrEqual(4 * windows);
        if ('window' in rest) {
          // Without any hint the run cannot know the server's real limit until one window's overflow
          // is refused: that window is refused what the run sent beyond the limit, once.
          expect(lookupsSeen(s) - Math.max(...refused)).toBeLessThanOrEqual(Math.ceil(rows * 1.25));
        } else {
          // The first window to overflow is refused what was in flight when its first 429 came:
          // the rate × the latency of a machine starting four runs at once (17 seen on this 2-core machine).
          expect(lookupsSeen(s)).toBeLessThanOrEqual(Math.ceil(rows * 1.25));
        }
        // ...and yet it does not wait needlessly: the run keeps to a window or two per 30 rows.
        expect(windows).toBeLessThanOrEqual(Math.ceil(rows / 30) * 2 + 2);
        expectNoSecret([result.stdout, result.stderr], [dir]);
      },
      hangBound(60_000),
    );
  }
});
