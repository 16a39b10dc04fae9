/**
 * `npm run bench`: wsmirror against a raw fetch loop making the same requests, in one run, on
 * the bundled simulator (in its own process). Reports wall time, the ratio, request counts seen
 * by the simulator, and each process's peak RSS. Then the reporting benchmark on SQLite, and, when
 * WSMIRROR_BENCH_POSTGRES_URL is set (e.g. postgres://postgres@127.0.0.1:5432/test; the role needs
 * CREATEDB), the same on PostgreSQL in a database created for the run and dropped after it
 * (bench/reporting-pg.ts).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const TICKETS = Number(process.env.BENCH_TICKETS ?? 5000);
const DEALS = Number(process.env.BENCH_DEALS ?? 1000);
const WRITES = Number(process.env.BENCH_WRITES ?? 2000);
const root = fileURLToPath(new URL('../..', import.meta.url));
const worker = fileURLToPath(new URL('./worker.js', import.meta.url));

async function startSim(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [join(root, 'bin/wsmirror.js'), 'simulate', '--port', '0', '--api-key', 'bench-key', '--tickets', String(TICKETS), '--deals', String(DEALS), '--control', '--seed', '1'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+?) /.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`simulator exited ${code}`)));
  });
  return { url, child };
}

function run(mode: string, url: string, arg = ''): Promise<Record<string, number>> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [worker, mode, url, arg], { maxBuffer: 1 << 24 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${mode} failed: ${stderr || err.message}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, number>);
    });
  });
}

async function control(url: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${url}/_control/${path}`, { method, headers: { 'content-type': 'application/json' }, ...(body ? { body: JSON.stringify(body) } : {}) });
  return res.status === 204 ? null : res.json();
}

async function simRequests(url: string): Promise<number> {
  const log = (await control(url, 'GET', 'requests')) as unknown[] | { requests: unknown[] };
  return Array.isArray(log) ? log.length : log.requests.length;
}

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-bench-'));
  const { url, child } = await startSim();
  try {
    console.log(`Simulator: ${TICKETS} tickets, ${DEALS} deals at ${url}`);
    const list = (await (await fetch(`${url}/api/v1/tickets?limit=100`, { headers: { authorization: 'Bearer bench-key' } })).json()) as { tickets: Array<{ id: string }> };
    const capacity = await run('load', url, JSON.stringify(list.tickets.map((t) => t.id)));
    console.log(`Simulator capacity: ${fmt(capacity.perSecond!)} GET /tickets/:id per second (loopback, 16 connections x 8 pipelined, 4 s)`);

    await run('raw-backfill', url); // warm-up: the simulator's caches, the OS
    await control(url, 'DELETE', 'requests');
    const rawBackfill = await run('raw-backfill', url);
    const rawBackfillSeen = await simRequests(url);
    await control(url, 'DELETE', 'requests');
    const db = join(dir, 'bench.sqlite');
    const wsBackfill = await run('wsmirror-backfill', url, db);
    const wsBackfillSeen = await simRequests(url);

    await control(url, 'POST', 'act', { count: WRITES });
    const sqlite = new Database(db, { readonly: true });
    const watermark = JSON.parse((sqlite.prepare("select value_json from sync_state where key = 'watermark'").get() as { value_json: string }).value_json) as string;
    sqlite.close();
    const since = new Date(Date.parse(watermark) - 300_000).toISOString();
    await control(url, 'DELETE', 'requests');
    const rawSync = await run('raw-sync', url, since);
    const rawSyncSeen = await simRequests(url);
    await control(url, 'DELETE', 'requests');
    const wsSync = await run('wsmirror-sync', url, db);
    const wsSyncSeen = await simRequests(url);

    const rows = [
      ['backfill', rawBackfill, rawBackfillSeen, wsBackfill, wsBackfillSeen],
      [`sync after ${WRITES} writes`, rawSync, rawSyncSeen, wsSync, wsSyncSeen],
    ] as const;
    console.log('\n| job | raw loop ms | wsmirror ms | ratio | raw requests | wsmirror requests | wsmirror peak RSS MB | raw peak RSS MB |');
    console.log('|---|---|---|---|---|---|---|---|');
    for (const [name, r, rs, w, ws] of rows) {
      console.log(`| ${name} | ${fmt(r.ms!)} | ${fmt(w.ms!)} | ${(w.ms! / r.ms!).toFixed(2)} | ${rs} | ${ws} | ${w.maxRssMb} | ${r.maxRssMb} |`);
    }
  } finally {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }

  const reporting = await import('./reporting.js');
  if (reporting && process.env.BENCH_SKIP_REPORTING !== '1') {
    console.log('\nReporting views (50,000 tickets, 250,000 messages, 10,000 deals):');
    reporting.printBenchReporting((await reporting.benchReporting()) as Record<string, unknown>);
  }
  const postgresUrl = process.env.WSMIRROR_BENCH_POSTGRES_URL;
  if (postgresUrl && process.env.BENCH_SKIP_REPORTING !== '1') {
    const { benchReportingPostgres, printBenchReportingPostgres } = await import('./reporting-pg.js');
    console.log('\nReporting views on PostgreSQL (same mirror, copied from SQLite):');
    printBenchReportingPostgres((await benchReportingPostgres(postgresUrl)) as Record<string, unknown>);
  }
}

await main();
