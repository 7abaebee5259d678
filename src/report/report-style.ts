// The HTML report's one style sheet, inline: system fonts only (nothing to load), light and dark
// by the reader's preference, and a print layout (no background, sections kept whole).
export const REPORT_CSS = `
:root { color-scheme: light dark; --bg: #ffffff; --fg: #1d2330; --muted: #5b6475; --line: #d9dee7; --panel: #f5f7fa;
  --bar: #2f6fde; --track: #e3e8f0; --limit: #c2410c; --used: #7c3aed; --ok: #15803d; --warn: #b45309; --bad: #b91c1c; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #14171d; --fg: #e6e9ef; --muted: #9aa3b2; --line: #2c323d; --panel: #1c2129;
    --bar: #5b93f0; --track: #2a313c; --limit: #fb923c; --used: #a78bfa; --ok: #4ade80; --warn: #fbbf24; --bad: #f87171; }
}
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg); font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 28px 32px 48px; }
h1 { font-size: 26px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 0 0 12px; }
.sub { color: var(--muted); margin: 0 0 20px; }
section { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 18px 20px; margin: 0 0 18px; }
.tiles { display: grid; grid-template-columns: repeat(6, 1fr); gap: 12px; margin: 0 0 18px; }
.tile { background: var(--panel); border: 1px solid var(--line); border-radius: 10px; padding: 12px 14px; }
.tile b { display: block; font-size: 24px; line-height: 1.2; font-variant-numeric: tabular-nums; }
.tile span { color: var(--muted); font-size: 13px; }
.cols { display: grid; grid-template-columns: 1fr 1fr; gap: 18px; margin: 0 0 18px; }
.cols > section { margin: 0; }
.notice { border-left: 4px solid var(--warn); }
.notice.bad { border-left-color: var(--bad); }
.notice.ok { border-left-color: var(--ok); }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 5px 10px 5px 0; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; font-size: 13px; }
.n { text-align: right; }
.kv td:first-child { width: 150px; white-space: nowrap; color: var(--muted); }
code, pre { font: 13px/1.45 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { margin: 0; white-space: pre-wrap; word-break: break-all; }
.chart { width: 100%; height: auto; display: block; }
.chart + h2 { margin-top: 20px; }
.chart text { fill: var(--fg); font-size: 13px; }
.chart .axis, .chart .value { fill: var(--muted); font-size: 12px; }
.chart .bar { fill: var(--bar); }
.chart .track { fill: var(--track); }
.chart .grid { stroke: var(--line); stroke-width: 1; }
.chart .axis-line { stroke: var(--muted); stroke-width: 1; }
.chart .limit { stroke: var(--limit); stroke-width: 2; stroke-dasharray: 7 5; }
.chart .limit-label { fill: var(--limit); font-size: 12px; }
.chart .used { stroke: var(--used); stroke-width: 1.5; stroke-dasharray: 2 4; }
.chart .used-label { fill: var(--used); font-size: 12px; }
.muted { color: var(--muted); }
footer { color: var(--muted); font-size: 13px; margin-top: 24px; }
@media (max-width: 900px) { .tiles { grid-template-columns: repeat(3, 1fr); } .cols { grid-template-columns: 1fr; } }
@media print {
  :root { --bg: #fff; --fg: #000; --muted: #444; --line: #bbb; --panel: #fff; --bar: #1f4fa8; --track: #e6e6e6; }
  body { font-size: 11pt; }
  main { max-width: none; padding: 0; }
  section, .tile { break-inside: avoid; border-color: #bbb; }
  .tiles { grid-template-columns: repeat(3, 1fr); }
  @page { margin: 14mm; }
}
`;
