/**
 * What the throughput part reports per job and phase (bench/README.md), and how a job's result
 * and the CPU beside it become those figures.
 */
import { availableParallelism } from 'node:os';
import type { CpuSampler } from './cpu.js';
import { processCpuMs } from './cpu.js';
import type { JobResult } from './jobs.js';
import type { ProfileSummary } from './profile.js';
import type { RoundsSummary } from './rounds.js';
import type { SeenRequests } from './sim.js';

export interface JobFigures {
  ms: number;
  /** Requests the simulator saw. */
  requests: number;
  peakRssMb: number;
  /** CPU ms of the job's process over `ms`, every thread (SQLite's work included). */
  cpuMs: number;
  /** CPU ms the simulator spent meanwhile (null: /proc unreadable). */
  simulatorCpuMs: number | null;
  /** PostgreSQL only: CPU ms the local server spent meanwhile (null: not a process of this machine). */
  databaseCpuMs?: number | null;
}

/**
 * The least wall time the job's CPU allows on this machine, however well the work overlapped:
 * the CPU of the job, the simulator and the database server, over the cores (bench/README.md,
 * "CPU floor"), and that over the raw loop's wall time.
 */
export interface CpuFloor {
  cores: number;
  ms: number;
  rawRatio: number;
}

/**
 * The lean floor (bench/floor.ts; for the tick, bench/floor-sync.ts): wsmirror's requests (the
 * backfill's, and the tick's list-based plan) with every answer stored the cheapest way, against
 * the same simulator just after the raw loop (bench/README.md, "Lean floor", "The tick sync's lean equivalent").
 */
export interface LeanFigures extends JobFigures {
  /** lean ms / raw ms. */
  timeRatio: number;
  /**
   * What one database connection did serially: SQLite's statements and commits (timed in the
   * job), or the PostgreSQL server's CPU. Null when it could not be read.
   */
  storeMs: number | null;
  /** storeMs / raw ms: no overlap of the other work brings a backfill of this mirror below it. */
  storeRatio: number | null;
  /** The lean job's own CPU floor: however well a lean implementation overlapped, it needs this long. */
  cpuFloor?: CpuFloor;
}

export interface PhaseFigures {
  raw: JobFigures;
  wsmirror: JobFigures & { records: number; events: number };
  /** wsmirror ms / raw ms. */
  timeRatio: number;
  /** wsmirror's CPU floor; absent when a CPU figure is missing. */
  cpuFloor?: CpuFloor;
  lean?: LeanFigures;
  /** Backfill only: the lean floor storing only the raw JSON the specification asks for (bench/floor-rows.ts). */
  leanSpecOnly?: LeanFigures;
  /**
   * The contract floor's first round as the job reported it: validateMs and afterCopyMs (the
   * backfill) or reportMs (the tick) included.
   */
  contract?: JobResult;
  /** Requests of the minimal plan (what the raw loop makes). */
  minimalPlan: number;
  /** wsmirror requests / minimal plan. */
  requestRatio: number;
  /** Sync only: the list-based floor (bench/worker.ts listPlan) and wsmirror requests / it. */
  listPlan?: number;
  listPlanRatio?: number;
  /** Medians of interleaved rounds (bench/rounds.ts); the first round is the figures above. */
  rounds?: RoundsSummary;
  /** Where one more run of wsmirror's job spent its own CPU (bench/profile.ts). */
  profile?: ProfileSummary;
  /** Sync only: the list-based floor plus the change-log pages the documented window re-reads (lookback or overlap). */
  rulesPlan?: number;
  rulesPlanRatio?: number;
}

export interface ThroughputFigures {
  size: string;
  dialect: 'sqlite' | 'postgres';
  tickets: number;
  deals: number;
  messages: number;
  writes: number;
  backfill: PhaseFigures;
  /** The first sync after the backfill: a full window, from the hand-over watermark − lookbackSeconds. */
  sync: PhaseFigures;
  /** A steady-state sync: a tick window (watermark − tickOverlapSeconds) after the first sync. */
  tick?: PhaseFigures;
}

/** A job's result with the CPU the simulator and the database server spent while it ran. */
export interface Measured {
  result: JobResult;
  simulatorCpuMs: number | null;
  databaseCpuMs?: number | null;
}

/** Where a job's other CPU goes: the simulator's process, and PostgreSQL's server when local. */
export interface CpuSources {
  simulatorPid: number | undefined;
  database?: CpuSampler;
}

export async function measured(sources: CpuSources, job: () => Promise<JobResult>): Promise<Measured> {
  const sim0 = processCpuMs(sources.simulatorPid);
  const db0 = sources.database?.();
  const result = await job();
  const sim1 = processCpuMs(sources.simulatorPid);
  const db1 = sources.database?.();
  const delta = (a: number | null | undefined, b: number | null | undefined) => (a == null || b == null ? null : Math.round(b - a));
  return { result, simulatorCpuMs: delta(sim0, sim1), ...(sources.database ? { databaseCpuMs: delta(db0, db1) } : {}) };
}

export function figures(m: Measured, seen: SeenRequests): JobFigures {
  const r = m.result;
  return {
    ms: Math.round(r.ms!),
    requests: seen.total,
    peakRssMb: r.maxRssMb!,
    cpuMs: r.cpuMs!,
    simulatorCpuMs: m.simulatorCpuMs,
    ...(m.databaseCpuMs === undefined ? {} : { databaseCpuMs: m.databaseCpuMs }),
  };
}

function cpuFloor(job: JobFigures, rawMs: number): CpuFloor | undefined {
  if (job.simulatorCpuMs === null || job.databaseCpuMs === null) return undefined;
  const cores = availableParallelism();
  const ms = Math.round((job.cpuMs + job.simulatorCpuMs + (job.databaseCpuMs ?? 0)) / cores);
  return { cores, ms, rawRatio: Number((ms / rawMs).toFixed(2)) };
}

export function phase(rawRun: Measured, rawSeen: SeenRequests, wsRun: Measured, wsSeen: SeenRequests): PhaseFigures {
  const raw = rawRun.result;
  const ws = wsRun.result;
  const wsmirror = { ...figures(wsRun, wsSeen), records: ws.records ?? 0, events: ws.events ?? 0 };
  const floor = cpuFloor(wsmirror, raw.ms!);
  return {
    raw: figures(rawRun, rawSeen),
    wsmirror,
    timeRatio: Number((ws.ms! / raw.ms!).toFixed(2)),
    ...(floor ? { cpuFloor: floor } : {}),
    minimalPlan: rawSeen.total,
    requestRatio: Number((wsSeen.total / Math.max(1, rawSeen.total)).toFixed(3)),
    ...(raw.listPlan === undefined ? {} : { listPlan: raw.listPlan, listPlanRatio: Number((wsSeen.total / raw.listPlan).toFixed(3)) }),
    ...(raw.rulesPlan === undefined ? {} : { rulesPlan: raw.rulesPlan, rulesPlanRatio: Number((wsSeen.total / raw.rulesPlan).toFixed(3)) }),
  };
}

export function lean(run: Measured, seen: SeenRequests, rawMs: number): LeanFigures {
  const storeMs = run.databaseCpuMs !== undefined ? run.databaseCpuMs : Math.round(run.result.storeMs!);
  const job = figures(run, seen);
  const floor = cpuFloor(job, rawMs);
  return {
    ...job,
    ...(floor ? { cpuFloor: floor } : {}),
    timeRatio: Number((run.result.ms! / rawMs).toFixed(2)),
    storeMs,
    storeRatio: storeMs === null ? null : Number((storeMs / rawMs).toFixed(2)),
  };
}
