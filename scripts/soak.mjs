#!/usr/bin/env node
// Soak test of the daemon (docs/operations.md, "Growth"): `wsmirror run` against the bundled
// simulator with live activity, a reader opening the mirror and querying it every second, for
// SOAK_MINUTES (default 30). Every 10 s it samples the WAL size, the daemon's RSS and, from its
// /metrics, the V8 heap in use (so a growing RSS can be told apart from a growing JS heap); at the
// end it prints the largest WAL, and RSS and heap after the first 5 minutes against their later peaks.
// Usage: npm run build && node scripts/soak.mjs   (env SOAK_MINUTES, SOAK_ACTIVITY, SOAK_SCHEDULE, SOAK_READ_MS)
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';
import Database from 'better-sqlite3';
import { startSimulator } from '../dist/src/simulator/index.js';

const minutes = Number(process.env.SOAK_MINUTES ?? 30);
const activity = Number(process.env.SOAK_ACTIVITY ?? 20);
const schedule = process.env.SOAK_SCHEDULE ?? '*/5 * * * * *';
const readEveryMs = Number(process.env.SOAK_READ_MS ?? 1000);
const bin = fileURLToPath(new URL('../bin/wsmirror.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'wsmirror-soak-'));
const file = join(dir, 'mirror.sqlite');

const port = await new Promise((resolve) => {
  const srv = createServer().listen(0, '127.0.0.1', () => {
    const p = srv.address().port;
    srv.close(() => resolve(p));
  });
});
const sim = await startSimulator({ seed: 7, tickets: 3000, deals: 300, activity, apiKeys: { 'soak-key': '' } });
writeFileSync(join(dir, 'wsmirror.json'), JSON.stringify({ schedule, maxRequestsPerSecond: 500, http: { port } }));
const daemon = spawn(process.execPath, [bin, 'run'], {
  env: {
    PATH: process.env.PATH,
    WSMIRROR_CONFIG: join(dir, 'wsmirror.json'),
    WSMIRROR_BASE_URL: sim.url,
    WSMIRROR_API_KEY: 'soak-key',
    WSMIRROR_DATABASE: file,
    WSMIRROR_LOG_LEVEL: 'info',
  },
  stdio: ['ignore', 'ignore', 'pipe'],
});
let cycles = 0;
let failures = 0;
daemon.stderr.on('data', (d) => {
  const text = d.toString();
  cycles += (text.match(/"msg":"sync cycle"/g) ?? []).length;
  failures += (text.match(/failed; the next tick retries/g) ?? []).length;
});

const size = (f) => {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
};
const rssMb = () => {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${daemon.pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};

/** From the daemon's /metrics: V8 heap used and committed, and memory outside the heap (MB). */
const memoryMb = async () => {
  const pick = (text, name) => {
    const m = new RegExp(`^wsmirror_process_${name} (\\S+)$`, 'm').exec(text);
    return m ? Number((Number(m[1]) / 1048576).toFixed(1)) : NaN;
  };
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return {
      heapMb: pick(text, 'nodejs_heap_size_used_bytes'),
      heapTotalMb: pick(text, 'nodejs_heap_size_total_bytes'),
      externalMb: pick(text, 'nodejs_external_memory_bytes'),
    };
  } catch {
    return { heapMb: NaN, heapTotalMb: NaN, externalMb: NaN };
  }
};

const started = Date.now();
// The BI-style reader: a fresh read-only connection every second, one query, closed again.
let reads = 0;
let readErrors = 0;
/** Reads attempted before the daemon had created the mirror file: expected to fail, counted apart. */
let readsBeforeMirror = 0;
let readErrorsBeforeFirstCycle = 0;
/** Seconds since the start of the first and last reader error, to tell start-up from steady state. */
let firstReadErrorS = null;
let lastReadErrorS = null;
/** Each distinct reader error message with its count, so a rare one can be diagnosed. */
const readErrorMessages = {};
const reader = setInterval(() => {
  if (!existsSync(file)) {
    readsBeforeMirror++;
    return;
  }
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 2000');
    db.prepare('select status, count(*) n from tickets group by status').all();
    db.close();
    reads++;
  } catch (err) {
    // Before the first cycle the daemon is still migrating and backfilling: a reader can find no
    // tables yet. Counted apart, so the steady-state figure is what a BI tool sees later.
    if (cycles === 0) readErrorsBeforeFirstCycle++;
    else readErrors++;
    const at = Number(((Date.now() - started) / 1000).toFixed(1));
    firstReadErrorS ??= at;
    lastReadErrorS = at;
    const message = String(err?.code ?? '') + ': ' + String(err?.message ?? err);
    readErrorMessages[message] = (readErrorMessages[message] ?? 0) + 1;
  }
}, readEveryMs);

const samples = [];
await new Promise((resolve) => {
  const sampler = setInterval(async () => {
    const s = {
      minute: Number(((Date.now() - started) / 60_000).toFixed(2)),
      walBytes: size(`${file}-wal`),
      dbBytes: size(file),
      rssMb: Number(rssMb().toFixed(1)),
      ...(await memoryMb()),
      cycles,
    };
    samples.push(s);
    console.log(JSON.stringify(s));
    if (Date.now() - started >= minutes * 60_000) {
      clearInterval(sampler);
      resolve();
    }
  }, 10_000);
});
clearInterval(reader);
daemon.kill('SIGTERM');
const code = await new Promise((r) => daemon.on('close', r));
await sim.close();

const median = (xs) => {
  if (xs.length === 0) return null;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
/** Least-squares slope of a sampled field, in MB per 10 minutes. */
const slopePer10Min = (rows, field) => {
  const pts = rows.filter((r) => Number.isFinite(r[field]));
  if (pts.length < 2) return null;
  const mx = pts.reduce((a, r) => a + r.minute, 0) / pts.length;
  const my = pts.reduce((a, r) => a + r[field], 0) / pts.length;
  const num = pts.reduce((a, r) => a + (r.minute - mx) * (r[field] - my), 0);
  const den = pts.reduce((a, r) => a + (r.minute - mx) ** 2, 0);
  return Number(((num / den) * 10).toFixed(2));
};
const after5 = samples.filter((s) => s.minute >= 5);
const rssAt5 = after5[0]?.rssMb ?? NaN;
const summary = {
  minutes,
  activityWritesPerSecond: activity,
  schedule,
  cycles,
  failedCycles: failures,
  reads,
  readErrors,
  readErrorMessages,
  readsBeforeMirror,
  readErrorsBeforeFirstCycle,
  firstReadErrorS,
  lastReadErrorS,
  maxWalMb: Number((Math.max(...samples.map((s) => s.walBytes)) / 1048576).toFixed(2)),
  finalWalMb: Number((samples.at(-1).walBytes / 1048576).toFixed(2)),
  finalDbMb: Number((samples.at(-1).dbBytes / 1048576).toFixed(2)),
  rssAt5MinMb: rssAt5,
  rssMaxAfter5MinMb: Math.max(...after5.map((s) => s.rssMb)),
  rssFinalMb: samples.at(-1).rssMb,
  rssMedian5to10MinMb: median(samples.filter((s) => s.minute >= 5 && s.minute < 10).map((s) => s.rssMb)),
  rssMedianLast5MinMb: median(samples.filter((s) => s.minute >= minutes - 5).map((s) => s.rssMb)),
  rssSlopeMbPer10MinAfter5: slopePer10Min(after5, 'rssMb'),
  heapTotalSlopeMbPer10MinAfter5: slopePer10Min(after5, 'heapTotalMb'),
  heapAt5MinMb: after5[0]?.heapMb ?? NaN,
  heapMaxAfter5MinMb: Math.max(...after5.map((s) => s.heapMb)),
  heapFinalMb: samples.at(-1).heapMb,
  exitCode: code,
};
console.log(JSON.stringify({ summary }));
rmSync(dir, { recursive: true, force: true });
