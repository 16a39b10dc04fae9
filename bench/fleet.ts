/**
 * `npm run bench:fleet`: the fleet at N workspaces (bench/README.md, "Fleet"). ONE simulator
 * process serves every workspace (`wsmirror simulate --workspaces <file> --control`), real
 * `wsmirror fleet worker` processes sync them into a fresh database on the local PostgreSQL, in
 * continuous mode. Per run (one worker, then two):
 *
 * - backfill: from `fleet apply` until every workspace has a successful slice and a done backfill,
 *   and the cross-workspace views take every workspace in;
 * - idle cost: a quiet window with no writes; fleet-table requests and worker CPU (/proc) per
 *   workspace-hour;
 * - write -> visible: each workspace gets one write per minute (control `act`, each minute in a
 *   new seeded order); a write is visible once its workspace's `current_as_of` in the fleet table reaches the write's
 *   `updatedAt` (the simulator's clock, which runs with real time); p50/p95/max over all;
 * - every workspace current: at the end, each workspace's last written record is read from its own
 *   schema and must hold the write (updated_at at or after it, or deleted), an independent check
 *   of the figure above;
 * - worker peak RSS (VmHWM).
 */
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { cli } from './sim.js';

interface Options {
  workspaces: number;
  workerCounts: number[];
  concurrency: number;
  writeSeconds: number;
  idleSeconds: number;
  graceSeconds: number;
  tickets: number;
  deals: number;
  postgresUrl: string;
}

interface Write {
  ws: string;
  entityType: string;
  entityId: string;
  kind: string;
  simMs: number;
  wallMs: number;
  /** Until the record's row shows the write (bench/freshness.ts's "visible", what a BI query sees). */
  delayMs?: number;
  /** Until the workspace's current_as_of covers the write (the mirror claims it complete up to it). */
  asOfDelayMs?: number;
}

export interface FleetRunFigures {
  workspaces: number;
  workers: number;
  concurrency: number;
  backfillSeconds: number;
  idleRequestsPerWorkspaceHour: number;
  idleCpuMsPerWorkspaceHour: number;
  writes: number;
  visible: number;
  p50Ms: number | null;
  p95Ms: number | null;
  maxMs: number | null;
  /** The same writes until the fleet table's current_as_of covered them. */
  asOfP50Ms: number | null;
  asOfP95Ms: number | null;
  workspacesCurrent: number;
  workspacesChecked: number;
  peakRssMb: number[];
  /** In the quiet window: sync slices run, and CPU ms per slice of the workers, the simulator and the rest of the machine (PostgreSQL). */
  idleSlices: number;
  idleCpuMsPerSlice: { workers: number; simulator: number; postgres: number; total: number } | null;
  sliceMsByKind: Record<string, { slices: number; avgMs: number; p95Ms: number }>;
  /** The write window (writes and grace): its length and the whole machine's busy CPU in it, for the cost of a write. */
  writeWindow: { seconds: number; machineBusyMs: number; workersCpuMs: number; simulatorCpuMs: number; syncSlices: number };
  /**
   * Machine CPU ms a write cost beyond the idle slices the window ran anyway (the window's busy
   * CPU less its sync slices at the quiet window's cost each, over its writes), and the workers'
   * share of it likewise.
   */
  cpuMsPerWrite: { machine: number; workers: number } | null;
}

function parseOptions(argv: string[], env: NodeJS.ProcessEnv): Options {
  const arg = (name: string, envName: string, dflt: string): string => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && argv[i + 1] ? argv[i + 1]! : (env[envName] ?? dflt);
  };
  return {
    workspaces: Number(arg('workspaces', 'BENCH_FLEET_WORKSPACES', '200')),
    workerCounts: arg('workers', 'BENCH_FLEET_WORKERS', '1,2').split(',').map(Number),
    concurrency: Number(arg('concurrency', 'BENCH_FLEET_CONCURRENCY', '4')),
    writeSeconds: Number(arg('write-seconds', 'BENCH_FLEET_WRITE_SECONDS', '120')),
    idleSeconds: Number(arg('idle-seconds', 'BENCH_FLEET_IDLE_SECONDS', '30')),
    graceSeconds: Number(arg('grace-seconds', 'BENCH_FLEET_GRACE_SECONDS', '60')),
    tickets: Number(arg('tickets', 'BENCH_FLEET_TICKETS', '10')),
    deals: Number(arg('deals', 'BENCH_FLEET_DEALS', '3')),
    postgresUrl: env.WSMIRROR_BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  };
}

const ids = (n: number): string[] => Array.from({ length: n }, (_, i) => `ws${String(i + 1).padStart(4, '0')}`);

async function startMultiSim(dir: string, o: Options): Promise<{ url: string; child: ChildProcess }> {
  const file = join(dir, 'simulator.json');
  writeFileSync(file, JSON.stringify({ workspaces: ids(o.workspaces).map((id) => ({ id, apiKey: `key-${id}` })) }));
  const args = ['simulate', '--port', '0', '--workspaces', file, '--control', '--tickets', String(o.tickets), '--deals', String(o.deals)];
  const child = spawn(process.execPath, ['--max-old-space-size=2048', cli, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/[\d.:]+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`simulator exited ${code}`)));
  });
  return { url, child };
}

function writeFleetFile(dir: string, database: string, simUrl: string, o: Options): string {
  const workspaces = ids(o.workspaces).map((id) => {
    const keyFile = join(dir, `${id}.key`);
    writeFileSync(keyFile, `key-${id}\n`);
    return { id, baseUrl: `${simUrl}/w/${id}`, apiKeyFile: keyFile };
  });
  const fleet = {
    database,
    defaults: { schedule: 'continuous', maxRequestsPerSecond: 10 },
    worker: { concurrency: o.concurrency, http: { port: 0 }, logLevel: 'warn' },
    workspaces,
  };
  const path = join(dir, 'fleet.json');
  writeFileSync(path, JSON.stringify(fleet));
  return path;
}

function cliRun(args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, [cli, ...args], { maxBuffer: 1 << 26 }, (err, out, stderr) =>
      err ? reject(new Error(`wsmirror ${args.join(' ')} failed: ${stderr}`)) : resolve(out),
    ),
  );
}

/** utime + stime of a process, in ms (Linux /proc; clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * Busy CPU ms of the whole machine (/proc/stat: all but idle and iowait). PostgreSQL's share is
 * this less the workers' and the simulator's: its backends come and go, so their own counters
 * cannot be summed over a window. The bench's machine runs nothing else meanwhile.
 */
function machineBusyMs(): number {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const busy = fields.reduce((a, b) => a + b, 0) - fields[3]! - fields[4]!;
  return busy * 10;
}

async function sliceCount(pool: pg.Pool, sinceMs: number): Promise<number> {
  const { rows } = await pool.query<{ n: string }>(
    `select count(*) as n from wsmirror_fleet.slices where ended_at >= $1 and kind = 'sync'`,
    [new Date(sinceMs)],
  );
  return Number(rows[0]!.n);
}

function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : 0;
}

async function until(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await sleep(500);
  }
}

async function act(simUrl: string, ws: string): Promise<Omit<Write, 'ws' | 'wallMs'>> {
  const res = await fetch(`${simUrl}/w/${ws}/_control/act`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ count: 1 }),
  });
  if (!res.ok) throw new Error(`act on ${ws} answered ${res.status}`);
  const { activity } = (await res.json()) as { activity: Array<{ kind: string; entityType: string; entityId: string; updatedAt: string }> };
  const a = activity[0]!;
  return { kind: a.kind, entityType: a.entityType, entityId: a.entityId, simMs: Date.parse(a.updatedAt) };
}

/** Fisher-Yates with a small LCG seeded by `seed`: the same orders every run. */
function shuffle<T>(items: T[], seed: number): void {
  let state = (seed * 2654435761) >>> 0;
  const next = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
}

const pct = (sorted: number[], p: number): number | null =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

/** One write per workspace per minute, each minute in a new seeded order, while polling the fleet table for visibility. */
async function writeAndWatch(pool: pg.Pool, simUrl: string, o: Options): Promise<Write[]> {
  const names = ids(o.workspaces);
  const spacingMs = 60_000 / o.workspaces;
  const writes: Write[] = [];
  let pending: Write[] = [];
  const start = Date.now();
  let next = 0;
  let covering: Write[] = [];
  const poll = async () => {
    const now = Date.now();
    const rows = await pool
      .query<{ id: string; at: Date | null; ended: Date | null }>(
        'select id, current_as_of as at, last_slice_end as ended from wsmirror_fleet.workspaces',
      )
      .then((r) => r.rows)
      .catch(() => null);
    if (rows === null) return;
    const asOf = new Map(rows.map((r) => [r.id, r.at?.getTime() ?? 0]));
    const ended = new Map(rows.map((r) => [r.id, r.ended?.getTime() ?? 0]));
    covering = covering.filter((w) => {
      if ((asOf.get(w.ws) ?? 0) < w.simMs) return true;
      w.asOfDelayMs = now - w.wallMs;
      return false;
    });
    // Only a slice that ended after the write can have put it in the row: the others are not
    // looked up, so the bench's own queries stay a few a poll however far behind the fleet is
    // (a UNION over every pending write cost PostgreSQL more the further it fell behind).
    const candidates = pending.filter((w) => (ended.get(w.ws) ?? 0) > w.wallMs);
    const shown = await rowsShowing(pool, candidates);
    if (shown === null) return;
    const seen = new Set([...shown].map((i) => candidates[i]!));
    pending = pending.filter((w) => {
      if (!seen.has(w)) return true;
      w.delayMs = now - w.wallMs;
      return false;
    });
  };
  let lastPoll = 0;
  while (Date.now() - start < o.writeSeconds * 1000) {
    const due = start + next * spacingMs;
    if (Date.now() >= due) {
      // Each minute visits every workspace once, in a new (seeded) order: in the fleet's own
      // round-robin order the writes would keep step with the polls, and every delay would be
      // the same fraction of a round.
      if (next % names.length === 0) shuffle(names, next / names.length + 1);
      const ws = names[next % names.length]!;
      next++;
      const wallMs = Date.now();
      const w: Write = { ws, wallMs, ...(await act(simUrl, ws)) };
      writes.push(w);
      pending.push(w);
      covering.push(w);
    }
    if (Date.now() - lastPoll >= 250) {
      lastPoll = Date.now();
      await poll();
    }
    await sleep(Math.max(0, Math.min(20, start + next * spacingMs - Date.now())));
  }
  const graceEnd = Date.now() + o.graceSeconds * 1000;
  while ((pending.length > 0 || covering.length > 0) && Date.now() < graceEnd) {
    await sleep(250);
    await poll();
  }
  return writes;
}

/**
 * Which pending writes the workspaces' own tables show (by index), in one statement: the row holds
 * the write (updated_at at or after it), or the record was deleted (by it or after it).
 */
async function rowsShowing(pool: pg.Pool, pending: Write[]): Promise<Set<number> | null> {
  if (pending.length === 0) return new Set();
  const params: unknown[] = [];
  const parts = pending.map((w, i) => {
    params.push(w.entityId, new Date(w.simMs));
    const a = params.length - 1;
    return `select ${i} as i from "${w.ws}".${w.entityType}s where id = $${a} and (deleted_at is not null or updated_at >= $${a + 1})`;
  });
  // A deleted deal's row may be gone altogether: counted by the end-of-run check, not here.
  const { rows } = await pool.query<{ i: number }>(parts.join(' union all '), params).catch(() => ({ rows: null }));
  return rows === null ? null : new Set(rows.map((r) => r.i));
}

/** The last write of each workspace, read from the workspace's own schema. */
async function checkCurrent(pool: pg.Pool, writes: Write[]): Promise<{ current: number; checked: number }> {
  const last = new Map<string, Write>();
  for (const w of writes) last.set(w.ws, w);
  let current = 0;
  for (const w of last.values()) {
    const table = `${w.entityType}s`;
    const { rows } = await pool.query<{ updated_at: Date | null; deleted_at: Date | null }>(
      `select updated_at, deleted_at from "${w.ws}".${table} where id = $1`,
      [w.entityId],
    );
    const row = rows[0];
    const ok =
      w.kind === 'delete_deal'
        ? row === undefined || row.deleted_at !== null
        : row !== undefined && (row.deleted_at !== null || (row.updated_at?.getTime() ?? 0) >= w.simMs);
    if (ok) current++;
  }
  return { current, checked: last.size };
}

async function sliceProfile(pool: pg.Pool, sinceMs: number): Promise<FleetRunFigures['sliceMsByKind']> {
  const { rows } = await pool.query<{ kind: string; n: string; avg: number; p95: number }>(
    `select kind, count(*) as n, avg(duration_ms)::float as avg,
            percentile_cont(0.95) within group (order by duration_ms)::float as p95
       from wsmirror_fleet.slices where ended_at >= $1 group by kind`,
    [new Date(sinceMs)],
  );
  return Object.fromEntries(rows.map((r) => [r.kind, { slices: Number(r.n), avgMs: Math.round(r.avg), p95Ms: Math.round(r.p95) }]));
}

async function requestsTotal(pool: pg.Pool): Promise<number> {
  return Number((await pool.query<{ n: string }>('select sum(requests_total) as n from wsmirror_fleet.workspaces')).rows[0]!.n);
}

async function runOnce(o: Options, workers: number): Promise<FleetRunFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-fleet-'));
  const dbName = `fleetbench_${process.pid}_${workers}`;
  const admin = new pg.Client({ connectionString: o.postgresUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${dbName}`);
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(o.postgresUrl);
  dbUrl.pathname = `/${dbName}`;
  const database = dbUrl.toString();
  const sim = await startMultiSim(dir, o);
  const pool = new pg.Pool({ connectionString: database, max: 2 });
  // The machine is shared: a connection cut from outside is logged, and the next query reconnects.
  pool.on('error', (err) => console.error(`  bench connection lost: ${err.message}`));
  const children: ChildProcess[] = [];
  try {
    const fleetPath = writeFleetFile(dir, database, sim.url, o);
    await cliRun(['fleet', 'apply', '--config', fleetPath]);
    const t0 = Date.now();
    for (let i = 0; i < workers; i++)
      children.push(
        spawn(process.execPath, [...workerNodeArgs(), cli, 'fleet', 'worker', '--config', fleetPath], {
          stdio: ['ignore', 'ignore', 'inherit'],
        }),
      );
    await until('every workspace backfilled', 30 * 60_000, async () => {
      const { rows } = await pool.query<{ n: string }>(
        `select count(*) as n from wsmirror_fleet.workspaces where backfill_phase = 'done' and last_success_at is not null`,
      );
      return Number(rows[0]!.n) === o.workspaces;
    });
    // The cross-workspace views take the new schemas in by rebuilds spaced out while workspaces
    // keep arriving (docs/fleet.md, "Storage"): the last one of a 1,000-workspace
    // start otherwise ran inside the measured windows (a tenth of the machine for seconds).
    await until('the cross-workspace views take every workspace in', 10 * 60_000, async () => {
      const { rows } = await pool.query<{ current: boolean }>(`select wanted = built as current from wsmirror_fleet.views_state`);
      return rows[0]?.current === true;
    });
    const backfillSeconds = (Date.now() - t0) / 1000;
    console.log(`  ${workers} worker(s): backfill of ${o.workspaces} in ${backfillSeconds.toFixed(1)} s; idle ${o.idleSeconds} s...`);
    const cpu0 = children.map((c) => cpuMs(c.pid!));
    const sim0 = cpuMs(sim.child.pid!);
    const machine0 = machineBusyMs();
    const self0 = process.cpuUsage();
    const req0 = await requestsTotal(pool);
    const i0 = Date.now();
    await sleep(o.idleSeconds * 1000);
    const idleHours = ((Date.now() - i0) / 3_600_000) * o.workspaces;
    const idleCpu = children.reduce((s, c, i) => s + cpuMs(c.pid!) - cpu0[i]!, 0);
    const simCpu = cpuMs(sim.child.pid!) - sim0;
    const selfUsage = process.cpuUsage(self0);
    // The rest of the machine: PostgreSQL, with the bench's own process taken out too.
    const pgCpu = machineBusyMs() - machine0 - idleCpu - simCpu - (selfUsage.user + selfUsage.system) / 1000;
    const idleReq = (await requestsTotal(pool)) - req0;
    const idleSlices = await sliceCount(pool, i0);
    const per = (ms: number) => Math.round((ms / idleSlices) * 10) / 10;
    const idleCpuMsPerSlice =
      idleSlices === 0
        ? null
        : { workers: per(idleCpu), simulator: per(simCpu), postgres: per(pgCpu), total: per(idleCpu + simCpu + pgCpu) };
    console.log(`  writes for ${o.writeSeconds} s (1 per workspace per minute)...`);
    const w0 = Date.now();
    const busy0 = machineBusyMs();
    const wcpu0 = children.reduce((s, c) => s + cpuMs(c.pid!), 0);
    const wsim0 = cpuMs(sim.child.pid!);
    const writes = await writeAndWatch(pool, sim.url, o);
    const writeWindow = {
      seconds: Math.round((Date.now() - w0) / 100) / 10,
      machineBusyMs: machineBusyMs() - busy0,
      workersCpuMs: children.reduce((s, c) => s + cpuMs(c.pid!), 0) - wcpu0,
      simulatorCpuMs: cpuMs(sim.child.pid!) - wsim0,
      syncSlices: await sliceCount(pool, w0),
    };
    const beyondIdle = (ms: number, perSlice: number) => Math.round((ms - writeWindow.syncSlices * perSlice) / Math.max(1, writes.length));
    const cpuMsPerWrite = idleCpuMsPerSlice
      ? {
          machine: beyondIdle(writeWindow.machineBusyMs, idleCpuMsPerSlice.total),
          workers: beyondIdle(writeWindow.workersCpuMs, idleCpuMsPerSlice.workers),
        }
      : null;
    const sorted = writes.map((w) => w.delayMs ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
    const asOfSorted = writes.map((w) => w.asOfDelayMs ?? Number.POSITIVE_INFINITY).sort((a, b) => a - b);
    const fin = (n: number | null) => (n === null || !Number.isFinite(n) ? null : Math.round(n));
    const { current, checked } = await checkCurrent(pool, writes);
    return {
      workspaces: o.workspaces,
      workers,
      concurrency: o.concurrency,
      backfillSeconds: Math.round(backfillSeconds * 10) / 10,
      idleRequestsPerWorkspaceHour: Math.round(idleReq / idleHours),
      idleCpuMsPerWorkspaceHour: Math.round(idleCpu / idleHours),
      writes: writes.length,
      visible: writes.filter((w) => w.delayMs !== undefined).length,
      p50Ms: fin(pct(sorted, 50)),
      p95Ms: fin(pct(sorted, 95)),
      maxMs: fin(sorted.at(-1) ?? null),
      asOfP50Ms: fin(pct(asOfSorted, 50)),
      asOfP95Ms: fin(pct(asOfSorted, 95)),
      workspacesCurrent: current,
      workspacesChecked: checked,
      peakRssMb: children.map((c) => peakRssMb(c.pid!)),
      idleSlices,
      idleCpuMsPerSlice,
      sliceMsByKind: await sliceProfile(pool, w0),
      writeWindow,
      cpuMsPerWrite,
    };
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : Promise.resolve())));
    sim.child.kill('SIGTERM');
    await pool.end();
    await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
    await admin.end();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const o = parseOptions(process.argv.slice(2), process.env);
  console.log(
    `Fleet: ${o.workspaces} workspaces (${o.tickets} tickets, ${o.deals} deals each), one simulator process, workers ${o.workerCounts.join(' then ')} x ${o.concurrency}`,
  );
  const runs: FleetRunFigures[] = [];
  for (const workers of o.workerCounts) {
    const r = await runOnce(o, workers);
    runs.push(r);
    console.log(JSON.stringify(r));
  }
  console.table(
    runs.map((r) => ({
      workers: `${r.workers} x ${r.concurrency}`,
      backfill_s: r.backfillSeconds,
      'p50/p95/max s': [r.p50Ms, r.p95Ms, r.maxMs].map((v) => (v === null ? '-' : (v / 1000).toFixed(1))).join(' / '),
      'as-of p50/p95 s': [r.asOfP50Ms, r.asOfP95Ms].map((v) => (v === null ? '-' : (v / 1000).toFixed(1))).join(' / '),
      visible: `${r.visible}/${r.writes}`,
      current: `${r.workspacesCurrent}/${r.workspacesChecked}`,
      'idle req/ws-h': r.idleRequestsPerWorkspaceHour,
      'idle cpu ms/ws-h': r.idleCpuMsPerWorkspaceHour,
      'peak RSS MB': r.peakRssMb.join(', '),
      'idle slices/s': Math.round((r.idleSlices / o.idleSeconds) * 10) / 10,
      'cpu ms/slice w+sim+pg': r.idleCpuMsPerSlice
        ? `${r.idleCpuMsPerSlice.workers}+${r.idleCpuMsPerSlice.simulator}+${r.idleCpuMsPerSlice.postgres}=${r.idleCpuMsPerSlice.total}`
        : '-',
      'cpu ms/write machine, workers': r.cpuMsPerWrite ? `${r.cpuMsPerWrite.machine}, ${r.cpuMsPerWrite.workers}` : '-',
    })),
  );
  const out = process.env.BENCH_FLEET_OUT;
  if (out) writeFileSync(out, JSON.stringify({ at: new Date().toISOString(), options: { ...o, postgresUrl: undefined }, runs }, null, 2));
}

await main();

/** Extra Node.js flags for the workers (`BENCH_FLEET_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/p"`): where a slice's time goes. */
function workerNodeArgs(): string[] {
  return (process.env.BENCH_FLEET_NODE_ARGS ?? '').split(/\s+/).filter((a) => a.length > 0);
}
