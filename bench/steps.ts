/**
 * The tick's wall time per step (src/sync/steps.ts; bench/README.md, "Where the tick's time
 * goes"): the worker returns them as `step.<name>` figures, the rounds keep their medians.
 */
import { CYCLE_STEPS, emptyStepTimes, type CycleStep, type StepTimes } from '../src/sync/index.js';
import { printTable } from './results.js';
import { median, type RoundsSummary } from './rounds.js';
import type { ThroughputFigures } from './throughput-figures.js';

const PREFIX = 'step.';

export function flatSteps(steps: StepTimes): Record<string, number> {
  return Object.fromEntries(CYCLE_STEPS.map((s) => [`${PREFIX}${s}`, Number(steps[s].toFixed(2))]));
}

/** The steps of a job's figures; undefined when the job returned none (not a wsmirror sync). */
export function stepsOf(result: Record<string, number>): StepTimes | undefined {
  if (!(`${PREFIX}${CYCLE_STEPS[0]}` in result)) return undefined;
  const steps = emptyStepTimes();
  for (const s of CYCLE_STEPS) steps[s] = result[`${PREFIX}${s}`] ?? 0;
  return steps;
}

/** Each step's median over the rounds (the medians need not sum to the median wall time). */
export function medianSteps(each: readonly (StepTimes | undefined)[]): StepTimes | undefined {
  if (each.length === 0 || each.some((s) => s === undefined)) return undefined;
  const out = emptyStepTimes();
  for (const s of CYCLE_STEPS) out[s] = Number(median(each.map((x) => x![s])).toFixed(1));
  return out;
}

/**
 * What the tick's lean equivalent leaves out by definition (bench/README.md, "The tick sync's lean
 * equivalent"): the dirty marks and their clearing, the saved window, the rpt_ refresh, the
 * catch-up check, the as-of. History rows are inside `events` and `records` (the store writes
 * them with the rows); the README gives their statement-level share.
 */
export const LEFT_OUT_BY_LEAN: readonly CycleStep[] = [
  'dirty-marks',
  'dirty-clear',
  'window-state',
  'drain-plan',
  'as-of',
  'report',
  'behind',
  'quarantine',
];

/**
 * The tick's steps per size and database: median ms over the rounds, and the median over the
 * rounds of each one's share of its own tick (so the shares of one column describe real ticks);
 * then what the lean tick leaves out by definition, and wsmirror's tick without it over the lean tick.
 */
export function printSteps(rows: readonly ThroughputFigures[]): void {
  const ticks = rows.flatMap((r) => (r.tick?.rounds?.steps ? [{ r, x: r.tick.rounds }] : []));
  if (ticks.length === 0) return;
  const sum = (steps: StepTimes, of: readonly CycleStep[]) => of.reduce((n, s) => n + steps[s], 0);
  const share = (x: RoundsSummary, part: (steps: StepTimes) => number) => {
    const shares = x.each.map((e) => part(e.steps!) / e.wsmirrorMs);
    return `${(median(shares) * 100).toFixed(1)} %`;
  };
  const line = (label: string, part: (steps: StepTimes) => number) => [
    label,
    ...ticks.map(({ x }) => `${fmtMs(median(x.each.map((e) => part(e.steps!))))} (${share(x, part)})`),
  ];
  const out: string[][] = CYCLE_STEPS.map((s) => line(s, (steps) => steps[s]));
  out.push(line('all steps', (steps) => sum(steps, CYCLE_STEPS)));
  out.push(line('left out by the lean tick', (steps) => sum(steps, LEFT_OUT_BY_LEAN)));
  out.push([
    '(wsmirror − left out) / lean',
    ...ticks.map(({ x }) =>
      x.each.every((e) => e.leanMs)
        ? median(x.each.map((e) => (e.wsmirrorMs - sum(e.steps!, LEFT_OUT_BY_LEAN)) / e.leanMs!)).toFixed(2)
        : '–',
    ),
  ]);
  console.log("\nWhere wsmirror's tick spends its wall time (median ms over the rounds, median share of its tick):");
  printTable(['step', ...ticks.map(({ r, x }) => `${r.size} ${r.dialect} (${fmtMs(x.wsmirrorMs)} ms)`)], out);
}

const fmtMs = (ms: number) => Math.round(ms).toLocaleString('en-US');
