/**
 * CPU time of the processes a job makes work, read from Linux's /proc (bench/README.md, "CPU
 * floor"): the simulator, and PostgreSQL's server when it runs on this machine. Elsewhere, or
 * when /proc cannot be read, the samplers give null and the figures are left out.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import pg from 'pg';

/** Clock ticks per second of /proc's times (`getconf CLK_TCK`; 100 on every Linux seen). */
const TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime, stime, cutime, cstime of a process, in ticks; null when it is gone or unreadable. */
function times(pid: number): { own: number; children: number; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields count from the last ')'.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // f[0] is field 3 (state): utime is field 14, so f[11]; stime f[12]; cutime f[13]; cstime f[14].
    return { own: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]), ppid: Number(f[1]) };
  } catch {
    return null;
  }
}

/** A process's CPU ms so far (its own threads only), or null. */
export function processCpuMs(pid: number | undefined): number | null {
  if (pid === undefined) return null;
  const t = times(pid);
  return t === null ? null : (t.own * 1000) / TICKS;
}

/**
 * CPU ms of a whole PostgreSQL server so far: the postmaster, its live children (background
 * workers, open backends) and the children it has reaped (every backend that exited). The
 * difference of two readings is what the server spent between them, whichever backends did it.
 */
function serverCpuMs(postmaster: number): number | null {
  const root = times(postmaster);
  if (root === null) return null;
  let ticks = root.own + root.children;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const t = times(Number(entry));
    if (t !== null && t.ppid === postmaster) ticks += t.own;
  }
  return (ticks * 1000) / TICKS;
}

/** Reads the server's CPU before and after a job; null when the server is not a process of this machine. */
export interface CpuSampler {
  (): number | null;
}

/** The postmaster of the server at `url`, when it is local: the parent of this connection's backend. */
export async function postgresCpuSampler(url: string): Promise<CpuSampler> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let postmaster: number | undefined;
  try {
    const backend = Number((await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid);
    // Read while the backend lives. A server in a container or on another host: its pid means nothing here.
    postmaster = times(backend)?.ppid;
  } finally {
    await client.end();
  }
  if (postmaster === undefined || !isPostgres(postmaster)) return () => null;
  const pid = postmaster;
  return () => serverCpuMs(pid);
}

function isPostgres(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('postgres');
  } catch {
    return false;
  }
}
