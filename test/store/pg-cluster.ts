import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/**
 * A throwaway PostgreSQL for the store's dialect tests: WSMIRROR_TEST_PG_URL (an admin URL) when
 * set, else a private cluster started from the local PostgreSQL binaries; null when neither is
 * available, so the suite skips on machines without PostgreSQL.
 */
export interface PgServer {
  /** A fresh, empty database on the server. */
  createDatabase(): Promise<string>;
  stop(): Promise<void>;
}

function findBin(name: string): string | null {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || null;
  } catch {
    const base = '/usr/lib/postgresql';
    if (!existsSync(base)) return null;
    for (const v of readdirSync(base).sort().reverse()) {
      const p = join(base, v, 'bin', name);
      if (existsSync(p)) return p;
    }
    return null;
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

let counter = 0;

function server(adminUrl: string, stop: () => Promise<void>): PgServer {
  return {
    async createDatabase() {
      const name = `wsmirror_test_${process.pid}_${Date.now()}_${counter++}`;
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        await admin.query(`create database ${name}`);
      } finally {
        await admin.end();
      }
      return withDatabase(adminUrl, name);
    },
    stop,
  };
}

export async function startPg(): Promise<PgServer | null> {
  const given = process.env.WSMIRROR_TEST_PG_URL;
  if (given) return server(given, async () => {});
  const initdb = findBin('initdb');
  const pgCtl = findBin('pg_ctl');
  if (!initdb || !pgCtl) return null;

  const dir = mkdtempSync(join(tmpdir(), 'wsmirror-pg-'));
  const data = join(dir, 'data');
  // PostgreSQL refuses to run as root; run it as the postgres user there.
  const asRoot = process.getuid?.() === 0;
  const run = (bin: string, args: string[]) => {
    if (!asRoot) return execFileSync(bin, args, { stdio: 'pipe' });
    return execFileSync('runuser', ['-u', 'postgres', '--', bin, ...args], { stdio: 'pipe' });
  };
  try {
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }));
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }));
      chownSync(dir, uid, gid);
    }
    const port = await freePort();
    run(initdb, ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
    run(pgCtl, ['-D', data, '-l', join(dir, 'log'), '-w', '-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -F`, 'start']);
    return server(`postgres://postgres@127.0.0.1:${port}/postgres`, async () => {
      try {
        run(pgCtl, ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    if (process.env.CI) console.warn(`PostgreSQL tests skipped: ${(err as Error).message}`);
    return null;
  }
}
