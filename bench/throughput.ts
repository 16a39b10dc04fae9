/**
 * Backfill and sync wall time, requests and peak RSS at a workspace size, per dialect, each
 * against the raw fetch loop making the minimal plan's requests in the same run (bench/README.md).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { SizeSpec } from './options.js';
import { postgresCpuSampler, type CpuSampler } from './cpu.js';
import { runJob } from './jobs.js';
import { summarizeProfile, type ProfileSummary } from './profile.js';
import { lean, measured, phase, type CpuSources, type PhaseFigures, type ThroughputFigures } from './throughput-figures.js';
import { medianSteps, stepsOf } from './steps.js';
import type { StepTimes } from '../src/sync/index.js';
import { roundDatabases, summarizeRounds, type Round, type RoundDatabases, type RoundsSummary } from './rounds.js';
import { control, KEY, simNow, startSim, takeRequests } from './sim.js';

const LOOKBACK_MS = 300_000;
/** wsmirror's default tickOverlapSeconds (src/sync/window.ts). */
const TICK_OVERLAP_MS = 5_000;
/**
 * The simulated time each batch of writes is spread over, so a tick's overlap re-reads the last
 * seconds of a period, as in a running daemon, not the whole batch made in one burst. The
 * simulator's Date header follows its clock, so its events never look ahead of it; the mirror's
 * local clock (the real one) falls behind it by this much per batch, so the tick does not trust
 * the Date as a read floor and re-reads the whole overlap, as the rules floor counts (after writes
 * it would anyway: docs/sync.md, "Windows and lookback").
 */
const WRITE_SPAN_MS = 15_000;
const WRITE_CHUNKS = 15;

/** `writes` random writes in WRITE_CHUNKS bursts, the simulator's clock moved on between them. */
async function spreadWrites(url: string, writes: number): Promise<void> {
  const chunk = Math.ceil(writes / WRITE_CHUNKS);
  for (let left = writes; left > 0; left -= chunk) {
    await control(url, 'POST', 'act', { count: Math.min(chunk, left) });
    if (left > chunk) await control(url, 'POST', 'clock', { advanceMs: WRITE_SPAN_MS / WRITE_CHUNKS });
  }
}

/** How a phase is repeated: interleaved rounds, one profiled run, and where their databases come from. */
export interface RepeatOptions {
  rounds: number;
  profile: boolean;
}

/** One measured sync: writes, the raw loop over the window the mirror will read, then wsmirror's cycle. */
async function measureSync(
  url: string,
  cpu: CpuSources,
  database: string,
  writes: number,
  watermarkMs: number,
  sinceMs: number,
  repeat?: RepeatOptions & { dbs: RoundDatabases; label: string; profileFile: string },
): Promise<{ figures: PhaseFigures; watermarkMs: number | undefined }> {
  await spreadWrites(url, writes);
  await takeRequests(url);
  const window = JSON.stringify({ since: new Date(sinceMs).toISOString(), watermark: new Date(watermarkMs).toISOString() });
  // The mirror as the writes left it, so every round, the lean job and the profiled run sync the same window from the same state.
  const snapshot = repeat ? await repeat.dbs.copy(database, `${repeat.label}_snap`) : undefined;
  const leanSync = async (i: number, contract = false) =>
    runJob(
      'floor-sync',
      url,
      JSON.stringify({
        ...JSON.parse(window),
        database: await repeat!.dbs.copy(snapshot!, `${repeat!.label}_${contract ? 'contract' : 'lean'}_${i}`),
        contract,
      }),
    );
  const raw = await measured(cpu, () => runJob('raw-sync', url, window));
  const rawSeen = await takeRequests(url);
  // The tick's lean equivalent (bench/floor-sync.ts) on a copy, between the raw loop and wsmirror as in the backfill's rounds.
  const leanRun = snapshot ? await measured(cpu, () => leanSync(1)) : undefined;
  const leanFigures = leanRun ? lean(leanRun, await takeRequests(url), raw.result.ms!) : undefined;
  // The tick's contract floor (bench/floor-sync-contract.ts) on another copy, after the lean tick.
  const contractRun = snapshot ? await leanSync(1, true) : undefined;
  await takeRequests(url);
  const ws = await measured(cpu, () => runJob('wsmirror-sync', url, JSON.stringify({ database })));
  const wsSeen = await takeRequests(url);
  const figures: PhaseFigures = {
    ...phase(raw, rawSeen, ws, wsSeen),
    ...(leanFigures ? { lean: leanFigures } : {}),
    ...(contractRun ? { contract: contractRun } : {}),
  };
  if (repeat && snapshot && leanFigures && contractRun) {
    const each: Round[] = [
      {
        rawMs: raw.result.ms!,
        leanMs: leanFigures.ms,
        leanCpuMs: leanFigures.cpuMs,
        contractMs: contractRun.ms!,
        wsmirrorMs: ws.result.ms!,
        wsmirrorCpuMs: ws.result.cpuMs!,
        ...withSteps(ws.result),
      },
    ];
    for (let i = 2; i <= repeat.rounds; i++) {
      const r = await runJob('raw-sync', url, window);
      const l = await leanSync(i);
      const c = await leanSync(i, true);
      const copy = await repeat.dbs.copy(snapshot, `${repeat.label}_${i}`);
      const w = await runJob('wsmirror-sync', url, JSON.stringify({ database: copy }));
      each.push({
        rawMs: r.ms!,
        leanMs: l.ms!,
        leanCpuMs: l.cpuMs!,
        contractMs: c.ms!,
        wsmirrorMs: w.ms!,
        wsmirrorCpuMs: w.cpuMs!,
        ...withSteps(w),
      });
    }
    const steps = medianSteps(each.map((e) => e.steps));
    figures.rounds = { ...summarizeRounds(each), ...(steps ? { steps } : {}) };
    if (repeat.profile) {
      const copy = await repeat.dbs.copy(snapshot, `${repeat.label}_prof`);
      await runJob('wsmirror-sync', url, JSON.stringify({ database: copy }), repeat.profileFile);
      figures.profile = summarizeProfile(repeat.profileFile);
    }
    await takeRequests(url);
  }
  return { figures, watermarkMs: ws.result.watermarkMs };
}

function withSteps(result: Record<string, number>): { steps?: StepTimes } {
  const steps = stepsOf(result);
  return steps ? { steps } : {};
}

/** Rounds 2.. of the backfill (raw, lean, wsmirror in turn, each into a fresh database) and one profiled wsmirror backfill. */
async function repeatBackfill(
  url: string,
  first: Round,
  repeat: RepeatOptions & { dbs: RoundDatabases; profileFile: string },
): Promise<{ rounds: RoundsSummary; profile?: ProfileSummary }> {
  const each: Round[] = [first];
  for (let i = 2; i <= repeat.rounds; i++) {
    const raw = await runJob('raw-backfill', url);
    const lean = await runJob('floor-backfill', url, JSON.stringify({ database: await repeat.dbs.fresh(`lean_${i}`) }));
    const contract = await runJob(
      'floor-backfill',
      url,
      JSON.stringify({ database: await repeat.dbs.fresh(`contract_${i}`), contract: true }),
    );
    const ws = await runJob('wsmirror-backfill', url, JSON.stringify({ database: await repeat.dbs.fresh(`backfill_${i}`) }));
    each.push({
      rawMs: raw.ms!,
      leanMs: lean.ms!,
      leanCpuMs: lean.cpuMs!,
      contractMs: contract.ms!,
      wsmirrorMs: ws.ms!,
      wsmirrorCpuMs: ws.cpuMs!,
    });
  }
  let profile: ProfileSummary | undefined;
  if (repeat.profile) {
    await runJob('wsmirror-backfill', url, JSON.stringify({ database: await repeat.dbs.fresh('backfill_prof') }), repeat.profileFile);
    profile = summarizeProfile(repeat.profileFile);
  }
  await takeRequests(url);
  return { rounds: summarizeRounds(each), ...(profile ? { profile } : {}) };
}

async function withPostgresDatabase<T>(url: string, name: string, fn: (dbUrl: string) => Promise<T>): Promise<T> {
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${name}`);
    const u = new URL(url);
    u.pathname = `/${name}`;
    return await fn(u.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

/** Listed tickets, their messages and deals, from the list endpoints (the control truth of L is hundreds of MB). */
async function workspaceCounts(url: string): Promise<{ tickets: number; messages: number; deals: number }> {
  const count = async (path: string, key: string, each: (item: Record<string, unknown>) => number) => {
    let n = 0;
    let sum = 0;
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const res = await fetch(`${url}/api/v1/${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      const page = (await res.json()) as Record<string, unknown>;
      const items = page[key] as Array<Record<string, unknown>>;
      n += items.length;
      for (const item of items) sum += each(item);
      cursor = page.nextCursor as string | null;
    }
    return { n, sum };
  };
  const tickets = await count('tickets', 'tickets', (t) => Number(t.messageCount ?? 0));
  const deals = await count('deals', 'deals', () => 0);
  return { tickets: tickets.n, messages: tickets.sum, deals: deals.n };
}

/** Simulator capacity on GET /tickets/:id (pipelined loopback load), for scale. */
export async function measureCapacity(size: SizeSpec): Promise<number> {
  const sim = await startSim(size);
  try {
    const res = await fetch(`${sim.url}/api/v1/tickets?limit=100`, { headers: { authorization: `Bearer ${KEY}` } });
    const list = (await res.json()) as { tickets: Array<{ id: string }> };
    const load = await runJob('load', sim.url, JSON.stringify(list.tickets.map((t) => t.id)));
    return load.perSecond!;
  } finally {
    await sim.stop();
  }
}

export async function measureThroughput(
  size: SizeSpec,
  dialect: 'sqlite' | 'postgres',
  writes: number,
  postgresUrl?: string,
  repeatOptions: RepeatOptions = { rounds: 1, profile: false },
): Promise<ThroughputFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-'));
  const dbs = roundDatabases(dir, dialect === 'postgres' ? postgresUrl : undefined);
  const repeat = { ...repeatOptions, dbs };
  // A fresh workspace per dialect, so each sync sees only its own writes.
  const sim = await startSim(size);
  const measure = async (database: string, leanDatabases: [string, string], dbCpu?: CpuSampler): Promise<ThroughputFigures> => {
    const cpu: CpuSources = { simulatorPid: sim.child.pid, ...(dbCpu ? { database: dbCpu } : {}) };
    const counts = await workspaceCounts(sim.url);
    await runJob('raw-backfill', sim.url); // warm-up: the simulator's caches, the OS
    await takeRequests(sim.url);
    const rawBackfill = await measured(cpu, () => runJob('raw-backfill', sim.url));
    const rawBackfillSeen = await takeRequests(sim.url);
    const leanJob = async (database: string, specOnly: boolean) => {
      const run = await measured(cpu, () => runJob('floor-backfill', sim.url, JSON.stringify({ database, specOnly })));
      return lean(run, await takeRequests(sim.url), rawBackfill.result.ms!);
    };
    const leanBackfill = await leanJob(leanDatabases[0], false);
    const leanSpecOnly = await leanJob(leanDatabases[1], true);
    const contractBackfill = await runJob(
      'floor-backfill',
      sim.url,
      JSON.stringify({ database: await dbs.fresh('contract_1'), contract: true }),
    );
    await takeRequests(sim.url);
    const wsBackfill = await measured(cpu, () => runJob('wsmirror-backfill', sim.url, JSON.stringify({ database })));
    const wsBackfillSeen = await takeRequests(sim.url);
    const backfillRepeat = await repeatBackfill(
      sim.url,
      {
        rawMs: rawBackfill.result.ms!,
        leanMs: leanBackfill.ms,
        leanCpuMs: leanBackfill.cpuMs,
        contractMs: contractBackfill.ms!,
        wsmirrorMs: wsBackfill.result.ms!,
        wsmirrorCpuMs: wsBackfill.result.cpuMs!,
      },
      { ...repeat, profileFile: join(dir, 'backfill.cpuprofile') },
    );
    // The first sync is a full window, from the hand-over watermark minus lookbackSeconds; the
    // next one a tick, from its watermark minus tickOverlapSeconds. The raw loop reads the same
    // windows (the simulator's clock stands in should the mirror's watermark be unreadable).
    const handover = wsBackfill.result.watermarkMs ?? (await simNow(sim.url));
    const first = await measureSync(sim.url, cpu, database, writes, handover, handover - LOOKBACK_MS);
    const afterFirst = first.watermarkMs ?? (await simNow(sim.url));
    const tick = await measureSync(sim.url, cpu, database, writes, afterFirst, afterFirst - TICK_OVERLAP_MS, {
      ...repeat,
      label: 'tick',
      profileFile: join(dir, 'tick.cpuprofile'),
    });
    return {
      size: size.name,
      dialect,
      ...counts,
      writes,
      backfill: {
        ...phase(rawBackfill, rawBackfillSeen, wsBackfill, wsBackfillSeen),
        lean: leanBackfill,
        leanSpecOnly,
        contract: contractBackfill,
        ...backfillRepeat,
      },
      sync: first.figures,
      tick: tick.figures,
    };
  };
  try {
    if (dialect === 'sqlite') return await measure(join(dir, 'bench.sqlite'), [join(dir, 'lean.sqlite'), join(dir, 'lean-spec.sqlite')]);
    const pid = process.pid;
    return await withPostgresDatabase(postgresUrl!, `wsmirror_bench_tp_${pid}`, async (url) =>
      withPostgresDatabase(postgresUrl!, `wsmirror_bench_lean_${pid}`, async (leanUrl) =>
        withPostgresDatabase(postgresUrl!, `wsmirror_bench_lean_spec_${pid}`, async (specUrl) =>
          measure(url, [leanUrl, specUrl], await postgresCpuSampler(url)),
        ),
      ),
    );
  } finally {
    await sim.stop();
    await dbs.dropAll().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  }
}
