// The report's two charts as inline SVG (no script, nothing loaded): a bar per column's fill rate,
// and the requests per rate window over the run against the account's limit. Colours come from the
// page's CSS (classes), so the charts follow its light and dark schemes and print.
import { duration, esc, num, pct } from './html-text.js';
import { perWindowRate } from './window-rate.js';

/** A horizontal bar per column: its share of the found rows holding a value. */
export function fillRateChart(columns: ReadonlyArray<{ column: string; filled: number; rate: number | null }>): string {
  const row = 26;
  const label = 250;
  const bar = 520;
  const height = columns.length * row + 8;
  const bars = columns.map((c, i) => {
    const y = 4 + i * row;
    const w = Math.max(0, Math.min(1, c.rate ?? 0)) * bar;
    return [
      `<text class="label" x="${label - 10}" y="${y + 17}" text-anchor="end">${esc(c.column)}</text>`,
      `<rect class="track" x="${label}" y="${y + 4}" width="${bar}" height="16" rx="3"/>`,
      `<rect class="bar" x="${label}" y="${y + 4}" width="${w.toFixed(1)}" height="16" rx="3"/>`,
      `<text class="value" x="${label + bar + 10}" y="${y + 17}">${pct(c.rate)} (${num(c.filled)})</text>`,
    ].join('');
  });
  return `<svg class="chart" viewBox="0 0 900 ${height}" role="img" aria-label="Fill rate per added column"><title>Fill rate per added column</title>${bars.join('')}</svg>`;
}

export interface TimelineFacts {
  windowMs: number;
  limit: number;
  used: number;
  bucketMs: number;
  perWindow: ReadonlyArray<{ startMs: number; requests: number; spanMs: number }>;
}

/** What one window is called: a minute in production. */
export function windowName(windowMs: number): string {
  return windowMs === 60_000 ? 'minute' : `${duration(windowMs)} window`;
}

/** Round steps for an axis up to `max`: 1, 2 or 5 times a power of ten. */
function step(max: number, ticks: number): number {
  const raw = Math.max(1, max / ticks);
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
}

/** Bars of requests per window over the run, the account's limit as a dashed line (and --rpm's, when lower). */
export function timelineChart(t: TimelineFacts): string {
  const [w, h, left, right, top, bottom] = [960, 280, 64, 120, 14, 40];
  const plotW = w - left - right;
  const plotH = h - top - bottom;
  // Bars as requests per window, over the time of each bucket requests were sent (a run shorter
  // than a window is drawn at the rate it used, not at its count over a window it never lasted).
  const values = t.perWindow.map((b) => perWindowRate(b, t.bucketMs, t.windowMs));
  const yMax = Math.max(1, t.limit, ...values) * 1.08;
  const y = (v: number) => top + plotH - (v / yMax) * plotH;
  const slot = plotW / Math.max(1, values.length);
  const bars = values.map(
    (v, i) =>
      `<rect class="bar" x="${(left + i * slot + slot * 0.1).toFixed(2)}" y="${y(v).toFixed(1)}" width="${Math.max(0.5, slot * 0.8).toFixed(2)}" height="${(top + plotH - y(v)).toFixed(1)}"/>`,
  );
  const yStep = step(yMax, 4);
  const yTicks: string[] = [];
  for (let v = 0; v <= yMax; v += yStep) {
    yTicks.push(
      `<line class="grid" x1="${left}" x2="${left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/><text class="axis" x="${left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end">${num(v)}</text>`,
    );
  }
  const xStep = Math.max(1, Math.ceil(values.length / 8));
  const xTicks: string[] = [];
  for (let i = 0; i <= values.length; i += xStep) {
    xTicks.push(`<text class="axis" x="${(left + i * slot).toFixed(1)}" y="${h - bottom + 18}" text-anchor="middle">${esc(duration(i * t.bucketMs))}</text>`);
  }
  const line = (v: number, cls: string, text: string) =>
    `<line class="${cls}" x1="${left}" x2="${left + plotW}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}"/><text class="${cls}-label" x="${left + plotW + 6}" y="${(y(v) + 4).toFixed(1)}">${esc(text)}</text>`;
  const per = windowName(t.windowMs);
  return [
    `<svg class="chart" viewBox="0 0 ${w} ${h}" role="img" aria-label="Requests per ${esc(per)} against the limit"><title>Requests per ${esc(per)} against the account's limit</title>`,
    ...yTicks,
    ...bars,
    line(t.limit, 'limit', `limit ${num(t.limit)}`),
    ...(t.used < t.limit ? [line(t.used, 'used', `--rpm ${num(t.used)}`)] : []),
    `<line class="axis-line" x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}"/>`,
    ...xTicks,
    `<text class="axis" x="${left + plotW / 2}" y="${h - 4}" text-anchor="middle">time since the start</text>`,
    '</svg>',
  ].join('');
}
