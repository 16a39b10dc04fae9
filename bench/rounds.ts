/**
 * Interleaved rounds of one phase (bench/README.md, "Rounds"): the same jobs again, one after
 * another in turn, so a noisy moment of the machine lands on one round of each rather than on one
 * job; the figures are medians over the rounds. Also the databases the rounds need: a fresh one
 * per backfill, a copy of the mirror per repeated sync.
 */
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { StepTimes } from '../src/sync/index.js';

/** One round's figures: wall ms and process CPU ms per job. */
export interface Round {
  rawMs: number;
  wsmirrorMs: number;
  wsmirrorCpuMs: number;
  leanMs?: number;
  leanCpuMs?: number;
  /** The contract floor's wall time (bench/floor.ts, FloorOptions.contract; bench/floor-sync.ts, FloorSyncOptions.contract). */
  contractMs?: number;
  /** The tick only: wsmirror's wall time per step (bench/steps.ts). */
  steps?: StepTimes;
}

export interface RoundsSummary {
  rounds: number;
  /** Medians over the rounds. */
  rawMs: number;
  wsmirrorMs: number;
  wsmirrorCpuMs: number;
  leanMs?: number;
  leanCpuMs?: number;
  /** Median of each round's wsmirror ms / lean ms (and CPU over CPU): the goal's figure. */
  leanRatio?: number;
  leanCpuRatio?: number;
  contractMs?: number;
  /** Median of each round's wsmirror ms / contract floor ms. */
  contractRatio?: number;
  /** Median of each round's wsmirror ms / raw ms. */
  rawRatio: number;
  /** The tick only: each step's median wall time over the rounds (bench/steps.ts). */
  steps?: StepTimes;
  each: Round[];
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

const ratio = (a: number, b: number) => Number((a / b).toFixed(2));

export function summarizeRounds(each: Round[]): RoundsSummary {
  const m = (pick: (r: Round) => number | undefined) => {
    const v = each.map(pick).filter((x): x is number => x !== undefined);
    return v.length === each.length ? Math.round(median(v)) : undefined;
  };
  const leanRatios = each.every((r) => r.leanMs) ? each.map((r) => r.wsmirrorMs / r.leanMs!) : undefined;
  const leanCpuRatios = each.every((r) => r.leanCpuMs) ? each.map((r) => r.wsmirrorCpuMs / r.leanCpuMs!) : undefined;
  const contractRatios = each.every((r) => r.contractMs) ? each.map((r) => r.wsmirrorMs / r.contractMs!) : undefined;
  const contractMs = m((r) => r.contractMs);
  const leanMs = m((r) => r.leanMs);
  const leanCpuMs = m((r) => r.leanCpuMs);
  return {
    rounds: each.length,
    rawMs: m((r) => r.rawMs)!,
    wsmirrorMs: m((r) => r.wsmirrorMs)!,
    wsmirrorCpuMs: m((r) => r.wsmirrorCpuMs)!,
    ...(leanMs === undefined ? {} : { leanMs }),
    ...(leanCpuMs === undefined ? {} : { leanCpuMs }),
    ...(leanRatios ? { leanRatio: ratio(median(leanRatios), 1) } : {}),
    ...(leanCpuRatios ? { leanCpuRatio: ratio(median(leanCpuRatios), 1) } : {}),
    ...(contractMs === undefined ? {} : { contractMs }),
    ...(contractRatios ? { contractRatio: ratio(median(contractRatios), 1) } : {}),
    rawRatio: ratio(median(each.map((r) => r.wsmirrorMs / r.rawMs)), 1),
    each,
  };
}

/** Databases for the rounds: SQLite files in `dir`, or PostgreSQL databases beside `postgresUrl`'s. */
export interface RoundDatabases {
  /** An empty database (no tables: the job migrates it). */
  fresh(label: string): Promise<string>;
  /** A copy of `source` (closed: no job has it open) as it is now. */
  copy(source: string, label: string): Promise<string>;
  /** Drops every PostgreSQL database made here. */
  dropAll(): Promise<void>;
}

export function roundDatabases(dir: string, postgresUrl?: string): RoundDatabases {
  if (!postgresUrl) {
    return {
      fresh: (label) => Promise.resolve(join(dir, `${label}.sqlite`)),
      copy(source, label) {
        const target = join(dir, `${label}.sqlite`);
        // A closed SQLite database is its file and, when not yet checkpointed, its WAL.
        for (const suffix of ['', '-wal']) if (existsSync(source + suffix)) cpSync(source + suffix, target + suffix);
        return Promise.resolve(target);
      },
      dropAll: () => Promise.resolve(),
    };
  }
  const made: string[] = [];
  const admin = async <T>(fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const c = new pg.Client({ connectionString: postgresUrl });
    await c.connect();
    try {
      return await fn(c);
    } finally {
      await c.end();
    }
  };
  const urlOf = (name: string) => {
    const u = new URL(postgresUrl);
    u.pathname = `/${name}`;
    return u.toString();
  };
  const create = async (label: string, template?: string) => {
    const name = `wsmirror_bench_r_${process.pid}_${label}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
    await admin(async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`);
    });
    made.push(name);
    return urlOf(name);
  };
  return {
    fresh: (label) => create(label),
    copy: (source, label) => create(label, new URL(source).pathname.slice(1)),
    async dropAll() {
      await admin(async (c) => {
        for (const name of made.splice(0)) await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      });
    },
  };
}
