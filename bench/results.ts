/** bench/results.json (machine, versions, date, every figure) and the printed tables. */
import { writeFileSync } from 'node:fs';
import { cpus, totalmem, release, platform, arch } from 'node:os';
import Database from 'better-sqlite3';
import type { AutoRateFigures } from './auto-rate.js';
import type { FreshnessFigures } from './freshness.js';
import { PROFILE_GROUPS } from './profile.js';
import type { LeanFigures, PhaseFigures, ThroughputFigures } from './throughput-figures.js';
import { root } from './sim.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface BenchResults {
  date: string;
  machine: { cpus: number; cpuModel: string; memoryMb: number; os: string };
  versions: Record<string, string>;
  options: object;
  capacity: Record<string, number>;
  throughput: ThroughputFigures[];
  autoRate: AutoRateFigures[];
  freshness: FreshnessFigures[];
  reporting?: object;
  reportingPostgres?: object;
  errors: string[];
  durationMs?: number;
}

export function newResults(options: object, postgresVersion?: string): BenchResults {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  const sqlite = new Database(':memory:');
  const sqliteVersion = (sqlite.prepare('select sqlite_version() as v').get() as { v: string }).v;
  sqlite.close();
  return {
    date: new Date().toISOString(),
    machine: {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? 'unknown',
      memoryMb: Math.round(totalmem() / 2 ** 20),
      os: `${platform()} ${release()} ${arch()}`,
    },
    versions: {
      wsmirror: pkg.version,
      node: process.version,
      sqlite: sqliteVersion,
      ...(postgresVersion ? { postgres: postgresVersion } : {}),
    },
    options,
    capacity: {},
    throughput: [],
    autoRate: [],
    freshness: [],
    errors: [],
  };
}

export function saveResults(file: string, results: BenchResults): void {
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
}

const fmt = (n: number | null | undefined, digits = 0) =>
  n === null || n === undefined ? '–' : n.toLocaleString('en-US', { maximumFractionDigits: digits });

export function printThroughput(rows: ThroughputFigures[]): void {
  printTable(
    [
      'size',
      'db',
      'job',
      'raw ms',
      'wsmirror ms',
      'ratio',
      'per-record plan',
      'list-based floor',
      'rules floor',
      'wsmirror requests',
      'req ratio (per-record / list floor / rules floor)',
      'wsmirror peak RSS MB',
      'raw peak RSS MB',
    ],
    rows.flatMap((r) =>
      phasesOf(r).map(([job, p]) => [
        `${r.size} (${fmt(r.tickets)} t, ${fmt(r.messages)} m, ${fmt(r.deals)} d)`,
        r.dialect,
        job,
        fmt(p.raw.ms),
        fmt(p.wsmirror.ms),
        p.timeRatio.toFixed(2),
        fmt(p.minimalPlan),
        fmt(p.listPlan),
        fmt(p.rulesPlan),
        fmt(p.wsmirror.requests),
        `${p.requestRatio.toFixed(3)} / ${p.listPlanRatio?.toFixed(3) ?? '–'} / ${p.rulesPlanRatio?.toFixed(3) ?? '–'}`,
        String(p.wsmirror.peakRssMb),
        String(p.raw.peakRssMb),
      ]),
    ),
  );
}

/**
 * Where each job's CPU went, and the least wall time that CPU allows on this machine's cores
 * (bench/README.md, "CPU floor"): a ratio to the raw loop that no overlap of the work can beat.
 */
export function printCpu(rows: ThroughputFigures[]): void {
  printTable(
    [
      'size',
      'db',
      'job',
      'raw ms (CPU ms: loop / simulator)',
      'wsmirror ms',
      'wsmirror CPU ms',
      'simulator CPU ms',
      'PostgreSQL CPU ms',
      'CPU floor ms (cores)',
      'floor / raw',
      'ratio',
    ],
    rows.flatMap((r) =>
      phasesOf(r).map(([job, p]) => {
        const w = p.wsmirror;
        return [
          r.size,
          r.dialect,
          job,
          `${fmt(p.raw.ms)} (${fmt(p.raw.cpuMs)} / ${fmt(p.raw.simulatorCpuMs)})`,
          fmt(w.ms),
          fmt(w.cpuMs),
          fmt(w.simulatorCpuMs),
          r.dialect === 'postgres' ? fmt(w.databaseCpuMs) : 'in wsmirror',
          p.cpuFloor ? `${fmt(p.cpuFloor.ms)} (${p.cpuFloor.cores})` : '–',
          p.cpuFloor?.rawRatio.toFixed(2) ?? '–',
          p.timeRatio.toFixed(2),
        ];
      }),
    ),
  );
}

/**
 * The lean floor of each backfill and the tick's lean equivalent (bench/README.md, "Lean floor",
 * "The tick sync's lean equivalent"): what storing the same mirror costs with the least work each
 * database allows, and the part of it one connection does serially.
 */
export function printLean(rows: ThroughputFigures[]): void {
  printTable(
    [
      'size',
      'db',
      'raw ms',
      'lean ms',
      'lean / raw',
      'lean store ms (serial)',
      'store / raw',
      'lean CPU floor / raw',
      'wsmirror ms',
      'wsmirror / raw',
      'lean peak RSS MB',
    ],
    rows.flatMap((r) => {
      const leans: [string, PhaseFigures | undefined, LeanFigures | undefined][] = [
        ['', r.backfill, r.backfill.lean],
        [' (spec-only raw JSON)', r.backfill, r.backfill.leanSpecOnly],
        [' tick sync', r.tick, r.tick?.lean],
      ];
      return leans.flatMap(([variant, p, l]) => {
        if (!l || !p) return [];
        return [
          [
            r.size,
            `${r.dialect}${variant}`,
            fmt(p.raw.ms),
            fmt(l.ms),
            l.timeRatio.toFixed(2),
            r.dialect === 'postgres' ? `${fmt(l.storeMs)} (server CPU)` : fmt(l.storeMs),
            l.storeRatio?.toFixed(2) ?? '–',
            l.cpuFloor?.rawRatio.toFixed(2) ?? '–',
            fmt(p.wsmirror.ms),
            p.timeRatio.toFixed(2),
            String(l.peakRssMb),
          ],
        ];
      });
    }),
  );
}

/**
 * Medians of the interleaved rounds (bench/README.md, "Rounds and goals"): the backfill against
 * the lean job, the tick sync against its lean equivalent (goal: wsmirror / lean at most 1.5 for both).
 */
export function printRounds(rows: ThroughputFigures[]): void {
  const out: string[][] = [];
  for (const r of rows) {
    for (const [job, p] of [
      ['backfill', r.backfill],
      ['tick sync', r.tick],
    ] as const) {
      const x = p?.rounds;
      if (!x) continue;
      out.push([
        r.size,
        r.dialect,
        job,
        String(x.rounds),
        fmt(x.rawMs),
        x.leanMs === undefined ? '–' : fmt(x.leanMs),
        fmt(x.wsmirrorMs),
        x.leanRatio?.toFixed(2) ?? '–',
        x.contractMs === undefined ? '–' : fmt(x.contractMs),
        x.contractRatio?.toFixed(2) ?? '–',
        x.leanCpuMs === undefined ? '–' : `${fmt(x.wsmirrorCpuMs)} / ${fmt(x.leanCpuMs)}`,
        x.leanCpuRatio?.toFixed(2) ?? '–',
        x.rawRatio.toFixed(2),
      ]);
    }
  }
  if (out.length === 0) return;
  console.log('\nInterleaved rounds (medians):');
  printTable(
    [
      'size',
      'db',
      'job',
      'rounds',
      'raw ms',
      'lean ms',
      'wsmirror ms',
      'wsmirror / lean',
      'contract ms',
      'wsmirror / contract',
      'CPU ms wsmirror / lean',
      'CPU ratio',
      'wsmirror / raw',
    ],
    out,
  );
}

/** Where wsmirror's own CPU went, per job (bench/profile.ts): share of sampled busy time per group. */
export function printProfiles(rows: ThroughputFigures[]): void {
  const groups = PROFILE_GROUPS.filter((g) => g !== 'idle');
  const out: string[][] = [];
  for (const r of rows) {
    for (const [job, p] of [
      ['backfill', r.backfill],
      ['tick sync', r.tick],
    ] as const) {
      const prof = p?.profile;
      if (!prof) continue;
      out.push([r.size, r.dialect, job, fmt(prof.busyMs), ...groups.map((g) => `${((prof.groups[g] ?? 0) * 100).toFixed(1)}`)]);
    }
  }
  if (out.length === 0) return;
  console.log('\nCPU profile of wsmirror (share of its busy time, %):');
  printTable(['size', 'db', 'job', 'busy ms', ...groups], out);
  for (const r of rows) {
    const prof = r.backfill.profile;
    if (!prof) continue;
    console.log(`\nTop self time, ${r.size} ${r.dialect} backfill:`);
    for (const t of prof.top.slice(0, 10)) console.log(`  ${(t.share * 100).toFixed(1).padStart(5)} %  ${t.group.padEnd(14)} ${t.fn}`);
  }
}

function phasesOf(r: ThroughputFigures): [string, PhaseFigures][] {
  const jobs: [string, PhaseFigures][] = [
    ['backfill', r.backfill],
    [`first sync after ${r.writes} writes`, r.sync],
  ];
  if (r.tick) jobs.push([`tick sync after ${r.writes} writes`, r.tick]);
  return jobs;
}

export function printAutoRate(rows: AutoRateFigures[]): void {
  printTable(
    ['"auto" backfill vs token bucket', 'headers', 'tickets', 'ms', 'requests', '429s', 'accepted/s', 'share of allowance', '429 share'],
    rows.map((r) => [
      `${r.allowance} req/s`,
      r.headers,
      fmt(r.tickets),
      fmt(r.ms),
      fmt(r.requests),
      String(r.rateLimited),
      String(r.acceptedPerSecond),
      `${(r.shareOfAllowance * 100).toFixed(1)} %`,
      `${(r.share429 * 100).toFixed(2)} %`,
    ]),
  );
}

export function printFreshness(rows: FreshnessFigures[]): void {
  const s = (ms: number | null) => (ms === null ? '∞' : (ms / 1000).toFixed(1));
  printTable(
    [
      'schedule',
      'writes/s',
      'limit req/s',
      'writes',
      'visible',
      'shown deleted / superseded / missed',
      'p50 s',
      'p95 s',
      'p95 / period',
      'max s',
      'p95 first/last third s',
      'keeps up',
      'requests',
      '429s',
      'cycles / ticks',
      'event-log requests / budget',
      'idle requests / h',
      'record /wait p50 / p95 / max s (unanswered)',
    ],
    rows.map((r) => [
      `\`${r.schedule}\`${r.fromBackfill ? ' from a backfill' : ''}`,
      String(r.writesPerSecond),
      String(r.allowance),
      String(r.writes),
      String(r.visible),
      `${r.shownDeleted} / ${r.superseded} / ${r.missed}`,
      s(r.p50Ms),
      s(r.p95Ms),
      String(r.p95Periods ?? '∞'),
      s(r.maxMs),
      `${s(r.p95FirstThirdMs)} / ${s(r.p95LastThirdMs)}`,
      r.keepsUp ? 'yes' : 'no',
      String(r.requests),
      String(r.rateLimited),
      `${r.cycles} / ${r.ticks}`,
      `${r.eventRequests} / ${r.eventRequestBudget}`,
      String(r.idleRequestsPerHour),
      r.recordWait ? `${s(r.recordWait.p50Ms)} / ${s(r.recordWait.p95Ms)} / ${s(r.recordWait.maxMs)} (${r.recordWait.failed})` : '',
    ]),
  );
}

/** A Markdown table after a blank line, its separator derived from the header; nothing for no rows. */
export function printTable(headers: readonly string[], rows: readonly (readonly string[])[]): void {
  if (rows.length === 0) return;
  console.log(`\n| ${headers.join(' | ')} |`);
  console.log(`|${'---|'.repeat(headers.length)}`);
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
}
