/**
 * The tick's wall time per step (src/sync/steps.ts; bench/README.md, "Where the tick's time
 * goes"): the worker returns them as `step.<name>` figures, the rounds keep their medians.
 */
import { CYCLE_STEPS, emptyStepTimes, type CycleStep, type StepTimes } from '../src/sync/index.js';
import { printTable } from './results.js';
import { median } from './rounds.js';
import type { ThroughputFigures } from './throughput.js';

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
 * The tick's steps per size and database: median ms over the rounds and share of the median wall
 * time; then what the lean tick leaves out by definition, and wsmirror's tick without it over the lean tick.
 */
export function printSteps(rows: readonly ThroughputFigures[]): void {
  const ticks = rows.flatMap((r) => (r.tick?.rounds?.steps ? [{ r, x: r.tick.rounds, steps: r.tick.rounds.steps }] : []));
  if (ticks.length === 0) return;
  const cell = (ms: number, wall: number) => `${ms.toFixed(0)} (${((ms / wall) * 100).toFixed(1)} %)`;
  const out: string[][] = CYCLE_STEPS.map((s) => [s, ...ticks.map(({ x, steps }) => cell(steps[s], x.wsmirrorMs))]);
  const sum = (steps: StepTimes, of: readonly CycleStep[]) => of.reduce((n, s) => n + steps[s], 0);
  out.push(['all steps', ...ticks.map(({ x, steps }) => cell(sum(steps, CYCLE_STEPS), x.wsmirrorMs))]);
  out.push(['left out by the lean tick', ...ticks.map(({ x, steps }) => cell(sum(steps, LEFT_OUT_BY_LEAN), x.wsmirrorMs))]);
  out.push([
    '(wsmirror − left out) / lean',
    ...ticks.map(({ x, steps }) => (x.leanMs ? ((x.wsmirrorMs - sum(steps, LEFT_OUT_BY_LEAN)) / x.leanMs).toFixed(2) : '–')),
  ]);
  console.log("\nWhere wsmirror's tick spends its wall time (median ms over the rounds, share of the median tick):");
  printTable(['step', ...ticks.map(({ r, x }) => `${r.size} ${r.dialect} (${x.wsmirrorMs} ms)`)], out);
}
