import { afterEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/index.js';
import { readBackfill, readSavedWindow, STATE_VERSION, upgradeStoredState } from '../../src/sync/index.js';
import { runCli } from '../helpers/cli.js';
import { dialects } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from '../cli/env.js';
import { readSyncState, writeSyncState } from '../../src/store/sync-state.js';

/** A window as a build before the read floor existed saved it (state version 1: no `state_version` key). */
const V1_WINDOW = { since: '2024-05-01T10:00:00.000Z', cursor: 'c-2', maxOccurredAt: '2024-05-01T11:00:00.000Z' };

/** The stored sync state is versioned, upgraded step by step and checked when read (src/sync/state.ts). */
for (const dialect of dialects)
  describe(`stored sync state on ${dialect.name}`, () => {
    let done: Array<() => Promise<void> | void> = [];
    afterEach(async () => {
      for (const f of done.reverse()) await f();
      done = [];
    });

    async function mirror(): Promise<{ store: Store; database: string; dir: string }> {
      const { dir, cleanup } = tempDir();
      const target = await dialect.newDatabase();
      done.push(cleanup, () => target.drop());
      const store = await openStore({ database: target.database });
      done.push(() => store.close());
      await store.migrate();
      return { store, database: target.database, dir };
    }

    it('an older shape reads as today’s, and a writer stores it upgraded with the version', async () => {
      const { store } = await mirror();
      await store.transaction((tx) => writeSyncState(tx, 'window', V1_WINDOW));
      expect(await readSavedWindow(store)).toEqual({ ...V1_WINDOW, readFloor: null });
      expect(await readSyncState(store, 'window')).toEqual(V1_WINDOW);

      expect(await upgradeStoredState(store)).toBe(1);
      expect(await readSyncState(store, 'window')).toEqual({ ...V1_WINDOW, readFloor: null });
      expect(await readSyncState(store, 'state_version')).toBe(STATE_VERSION);
      expect(await upgradeStoredState(store)).toBe(STATE_VERSION);
    });

    it('a corrupt value fails with a sentence naming its key', async () => {
      const { store } = await mirror();
      await store.transaction((tx) => writeSyncState(tx, 'backfill', { phase: 'sideways', cursor: null }));
      await expect(readBackfill(store)).rejects.toMatchObject({
        code: 'STATE_CORRUPT',
        message: expect.stringMatching(/sync state key "backfill" \(table sync_state\) cannot be read: .*phase.*Delete that row/),
      });
      await expect(upgradeStoredState(store)).rejects.toThrow(/"backfill"/);
    });

    it('a state newer than this build is refused, not misread', async () => {
      const { store } = await mirror();
      await store.transaction((tx) => writeSyncState(tx, 'state_version', STATE_VERSION + 1));
      await expect(readSavedWindow(store)).rejects.toMatchObject({ code: 'STATE_NEWER' });
    });
  });

describe('a command opening a mirror whose state is old or corrupt', () => {
  const sim = useSimulator({ seed: 5, tickets: 4, deals: 2 });
  let done: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const f of done.reverse()) await f();
    done = [];
  });

  async function backfilled() {
    const { dir, cleanup } = tempDir();
    done.push(cleanup);
    const database = `${dir}/mirror.sqlite`;
    const env = cliConfig(dir, { url: sim.url, database });
    expect((await runCli(['backfill'], env)).code).toBe(0);
    return { env, database };
  }

  it('sync upgrades an older state and goes on; a corrupt key exits with its name', async () => {
    const { env, database } = await backfilled();
    const store = await openStore({ database });
    await store.transaction(async (tx) => {
      await writeSyncState(tx, 'state_version', null);
      await writeSyncState(tx, 'window', { ...V1_WINDOW, cursor: null, since: null });
    });
    await store.close();
    expect((await runCli(['sync'], env)).code).toBe(0);

    const again = await openStore({ database });
    expect(await readSyncState(again, 'state_version')).toBe(STATE_VERSION);
    await again.transaction((tx) => writeSyncState(tx, 'watermark', 42));
    await again.close();
    const status = await runCli(['status'], env);
    expect(status.code).not.toBe(0);
    expect(status.stderr).toMatch(/sync state key "watermark"/);
  });
});
