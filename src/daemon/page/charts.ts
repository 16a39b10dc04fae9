import type { ChartData } from '../cycle-log.js';
import { RECORD_OUTCOMES } from '../cycle-log.js';
import { markup, type Markup } from './html.js';

const W = 520;
const H = 210;
const M = { left: 58, right: 12, top: 14, bottom: 28 };
const PW = W - M.left - M.right;
const PH = H - M.top - M.bottom;

interface Frame {
  from: number;
  to: number;
  max: number;
  x(t: number): number;
  y(v: number): number;
}

function frame(data: ChartData, max: number): Frame {
  const from = Date.parse(data.from);
  const to = Math.max(Date.parse(data.to), from + 1000);
  const top = niceMax(max);
  return {
    from,
    to,
    max: top,
    // A bucket that began before the axis (the process's first) is drawn at its start.
    x: (t) => round(M.left + (Math.max(0, Math.min(t - from, to - from)) / (to - from)) * PW),
    y: (v) => round(M.top + PH - (Math.min(v, top) / top) * PH),
  };
}

/** The lag at the end of each cycle; a failed cycle is a red cross on the axis (it measured none). */
export function lagChart(data: ChartData): Markup {
  const lags = data.cycles.map((c) => c.lagSeconds ?? 0);
  const unit = lagUnit(Math.max(1, ...lags));
  const f = frame(data, Math.max(1, ...lags) / unit.seconds);
  const measured = data.cycles.filter((c) => c.lagSeconds !== null);
  const line = measured.map((c, i) => `${i ? 'L' : 'M'}${f.x(Date.parse(c.at))} ${f.y(c.lagSeconds! / unit.seconds)}`).join('');
  // No tooltip per point: at 144 points they would be a third of the page (the cycle table has the figures).
  const points = data.cycles.map((c) => {
    const x = f.x(Date.parse(c.at));
    if (c.lagSeconds === null) {
      const y = f.y(0);
      return markup`<path class="pt fail" d="M${x - 4} ${y - 4}l8 8m-8 0l8-8"/>`;
    }
    return markup`<circle class="pt${c.failed ? ' fail' : ''}" cx="${x}" cy="${f.y(c.lagSeconds / unit.seconds)}" r="3"/>`;
  });
  return svg('chart-lag', `lag (${unit.label})`, f, data.cycles.length, [markup`<path class="line" d="${line}"/>`, points]);
}

/** Request attempts per minute as columns, the client's ceiling as a dashed line, and the buckets with 429 answers as red marks. */
export function requestsChart(data: ChartData, ceilingPerMinute: number | null): Markup {
  const drawn = ceilingDrawn(data, ceilingPerMinute) ? ceilingPerMinute : null;
  const f = frame(data, Math.max(1, ...data.requests.map((r) => r.perMinute), drawn ?? 0));
  const step = data.requestBucketSeconds * 1000;
  // One column per bucket, all in one path: a single bucket (a young process) still shows.
  const bars = data.requests
    .filter((r) => r.perMinute > 0)
    .map((r) => `M${f.x(Date.parse(r.at) + step / 2)} ${f.y(0)}V${Math.min(f.y(r.perMinute), f.y(0) - 1)}`)
    .join('');
  const width = round(Math.max(1, Math.min(14, (PW / Math.max(1, data.requests.length)) * 0.8)));
  const right = W - M.right;
  let ceiling: Markup | null = null;
  if (drawn !== null) {
    const y = f.y(drawn);
    ceiling = markup`<line class="ceiling" x1="${M.left}" x2="${right}" y1="${y}" y2="${y}"/><text class="ceiling-label" x="${right - 4}" y="${y - 4}" text-anchor="end">ceiling ${label(drawn)}/min</text>`;
  }
  const marks = data.requests
    .filter((r) => r.rateLimited > 0)
    .map((r) => markup`<path class="mark-429" d="M${f.x(Date.parse(r.at) + step / 2) - 5} ${M.top}h10l-5 8z"/>`);
  const columns = markup`<path class="req" stroke-width="${width}" d="${bars}"/>`;
  return svg('chart-requests', 'requests / min', f, data.requests.length, [columns, ceiling, marks]);
}

/** Whether the ceiling is drawn: one far above the traffic would flatten it to the axis, so it is only named. */
export function ceilingDrawn(data: ChartData, ceilingPerMinute: number | null): boolean {
  return ceilingPerMinute !== null && ceilingPerMinute <= 4 * Math.max(1, ...data.requests.map((r) => r.perMinute));
}

/** Records re-read in each cycle, stacked by outcome: a bar per cycle (a stub when it re-read none). */
export function recordsChart(data: ChartData): Markup {
  const totals = data.cycles.map((c) => RECORD_OUTCOMES.reduce((n, o) => n + c.records[o], 0));
  const f = frame(data, Math.max(1, ...totals));
  const width = round(Math.max(2, Math.min(12, (PW / Math.max(1, data.cycles.length)) * 0.6)));
  const bars = data.cycles.map((c, i) => {
    const x = f.x(Date.parse(c.at));
    if (totals[i] === 0) return markup`<g class="pt"><path class="tick" d="M${x} ${f.y(0)}v-2"/></g>`;
    let base = 0;
    const segments = RECORD_OUTCOMES.filter((o) => c.records[o] > 0).map((o) => {
      const y0 = f.y(base);
      base += c.records[o];
      return markup`<path class="o-${o}" d="M${x} ${y0}V${Math.min(f.y(base), y0 - 1)}"/>`;
    });
    return markup`<g class="pt">${segments}</g>`;
  });
  return svg('chart-records', 'records / cycle', f, data.cycles.length, [markup`<g class="bars" stroke-width="${width}">${bars}</g>`]);
}

/** The frame of every chart: grid, axes with round ticks (UTC times below), the unit on the left. */
function svg(id: string, yLabel: string, f: Frame, points: number, body: (Markup | Markup[] | null)[]): Markup {
  const right = W - M.right;
  const bottom = M.top + PH;
  const seconds = f.to - f.from < 6 * 60_000;
  const grid = [0, 0.25, 0.5, 0.75, 1].map((k) => {
    const y = f.y(f.max * k);
    return markup`<line class="grid" x1="${M.left}" x2="${right}" y1="${y}" y2="${y}"/><text class="axis" x="${M.left - 6}" y="${y + 4}" text-anchor="end">${label(f.max * k)}</text>`;
  });
  const xTicks = timeTicks(f.from, f.to).map((t) => {
    const x = f.x(t);
    const text = new Date(t).toISOString().slice(11, seconds ? 19 : 16);
    return markup`<line class="grid" x1="${x}" x2="${x}" y1="${M.top}" y2="${bottom}"/><text class="axis" x="${x}" y="${H - 8}" text-anchor="middle">${text}</text>`;
  });
  const mid = M.top + PH / 2;
  return markup`<svg id="${id}" class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${yLabel}" data-points="${points}" xmlns="http://www.w3.org/2000/svg">${grid}${xTicks}<line class="axis-line" x1="${M.left}" x2="${right}" y1="${bottom}" y2="${bottom}"/><line class="axis-line" x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${bottom}"/><text class="unit" x="14" y="${mid}" transform="rotate(-90 14 ${mid})" text-anchor="middle">${yLabel}</text>${body}</svg>`;
}

function lagUnit(maxSeconds: number): { seconds: number; label: string } {
  if (maxSeconds >= 7200) return { seconds: 3600, label: 'h' };
  if (maxSeconds >= 120) return { seconds: 60, label: 'min' };
  return { seconds: 1, label: 's' };
}

/** The smallest 1, 2, 4, 6 or 8 times a power of ten at or above `max`, so the ticks fall on round values. */
export function niceMax(max: number): number {
  if (!(max > 0)) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  // Quarters of these fall on round values too (the axis has five ticks).
  for (const m of [1, 2, 4, 6, 8, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

const TIME_STEPS = [10, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600].map((s) => s * 1000);

/** Round times (UTC) between `from` and `to`, at most six of them. */
export function timeTicks(from: number, to: number): number[] {
  const step = TIME_STEPS.find((s) => (to - from) / s <= 6) ?? 21_600_000;
  const out: number[] = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) out.push(t);
  return out;
}

function label(v: number): string {
  if (v >= 10_000) return `${Math.round(v / 100) / 10}k`;
  return String(Math.round(v * 100) / 100);
}

function round(v: number): number {
  return Math.round(v * 10) / 10;
}
