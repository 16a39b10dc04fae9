import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { freshStore, tempDir } from './fixtures.js';

// POSIX record locks are per process, so exclusion is proven against a real second process that
// takes the lock exactly as the store does.
const CHILD = `
const Database = require('better-sqlite3');
// With -e there is no script path: the arguments start at argv[1].
const mode = process.argv[1], path = process.argv[2];
const db = new Database(path);
db.pragma('busy_timeout = 0');
db.pragma('locking_mode = EXCLUSIVE');
try { db.exec('BEGIN EXCLUSIVE'); } catch (e) { console.log('busy ' + e.code); process.exit(0); }
console.log('locked');
if (mode === 'hold') setInterval(() => {}, 1000); else process.exit(0);
`;

function child(mode: 'hold' | 'try', lockPath: string): { proc: ChildProcess; firstLine: Promise<string> } {
  const proc = spawn(process.execPath, ['-e', CHILD, mode, lockPath], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] });
  const firstLine = new Promise<string>((resolve, reject) => {
    let buf = '';
    proc.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
    });
    proc.on('exit', () => resolve(buf.trim()));
    proc.on('error', reject);
  });
  return { proc, firstLine };
}

describe('writer lock', () => {
  let tmp: ReturnType<typeof tempDir>;
  let store: Store;
  let dbPath: string;
  const children: ChildProcess[] = [];
  beforeEach(async () => {
    tmp = tempDir();
    store = await freshStore(tmp.dir);
    dbPath = join(tmp.dir, 'nested', 'mirror.sqlite');
  });
  afterEach(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await store.close();
    tmp.cleanup();
  });

  it('excludes another process while held and frees it on release', async () => {
    const lock = await store.acquireWriterLock({ wait: false });
    expect(await child('try', `${dbPath}.lock`).firstLine).toMatch(/^busy SQLITE_BUSY/);
    await lock.release();
    await lock.release(); // idempotent
    expect(await child('try', `${dbPath}.lock`).firstLine).toBe('locked');
  });

  it('fails fast with LOCK_HELD, or waits and takes over when the holder is SIGKILLed', async () => {
    const holder = child('hold', `${dbPath}.lock`);
    children.push(holder.proc);
    expect(await holder.firstLine).toBe('locked');

    const err = await store.acquireWriterLock({ wait: false }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'LOCK_HELD' });
    expect((err as Error).message).toMatch(/Another wsmirror process is writing/);

    let waiting = 0;
    let reportWaiting!: () => void;
    const waitingReported = new Promise<void>((resolve) => (reportWaiting = resolve));
    const pending = store.acquireWriterLock({
      wait: true,
      pollMs: 50,
      onWaiting: () => {
        waiting++;
        reportWaiting();
      },
    });
    await waitingReported;
    holder.proc.kill('SIGKILL');
    await once(holder.proc, 'exit');
    const lock = await pending;
    expect(waiting).toBe(1);
    expect(await child('try', `${dbPath}.lock`).firstLine).toMatch(/^busy/);
    await lock.release();
  });

  it('stops waiting when the signal aborts', async () => {
    const holder = child('hold', `${dbPath}.lock`);
    children.push(holder.proc);
    expect(await holder.firstLine).toBe('locked');
    const ac = new AbortController();
    const pending = store.acquireWriterLock({ wait: true, pollMs: 1000, signal: ac.signal, onWaiting: () => ac.abort() });
    await expect(pending).rejects.toMatchObject({ code: 'LOCK_ABORTED' });
  });

  it('readers are not blocked by the writer lock', async () => {
    const lock = await store.acquireWriterLock({ wait: false });
    const { openStore } = await import('../../src/store/index.js');
    const reader = await openStore({ database: dbPath, readonly: true });
    expect((await reader.counts()).tickets).toBe(0);
    await reader.close();
    await lock.release();
  });
});
