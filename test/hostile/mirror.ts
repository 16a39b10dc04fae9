/**
 * One mirror behind the hostile proxy (server.ts), for the suites of issue 31: the simulator as
 * ground truth, the proxy in front, a backfilled mirror of one dialect, and the steps every case
 * takes (an ordinary upstream change, a CLI run, a read of the mirror, the comparison with the truth).
 */
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { cliConfig } from '../cli/env.js';
import type { Dialect } from '../helpers/dialects.js';
import { tempDir } from '../helpers/tmp.js';
import { diffMirror } from '../helpers/truth.js';
import { measure, type Measured } from './cli.js';
import { startHostile, type Faults, type HostileUpstream } from './server.js';
import { databaseOf } from '../../src/store/internal.js';

export const KEY = 'test-key';
/** The hostile suites' lookback: short, so a test's events stay within the first full window. */
export const LOOKBACK_SECONDS = 60;

export interface HostileMirror {
  readonly sim: Simulator;
  readonly hostile: HostileUpstream;
  readonly dir: string;
  readonly database: string;
  readonly env: Record<string, string>;
  ticketIds(): string[];
  dealIds(): string[];
  /** An ordinary upstream change, made on the simulator directly (not through the proxy); returns the new subject or name. */
  edit(kind: 'tickets' | 'deals', id: string): Promise<string>;
  /** A public agent reply on the simulator: a new message and a `ticket.replied` event. */
  reply(id: string): Promise<string>;
  /** A call on the simulator's API (not through the proxy). */
  api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
  /** `wsmirror <args>` against the proxy; `extra` adds config keys for this run only. */
  run(args?: string[], extra?: Record<string, unknown>): Promise<Measured>;
  read<T>(fn: (store: Store) => Promise<T>): Promise<T>;
  quarantined(entityType: string): Promise<Array<{ entity_id: string; reason: string; raw_json: unknown }>>;
  dirty(): Promise<Array<{ entity_type: string; entity_id: string }>>;
  /**
   * The mirror against the truth (docs/sync.md owes the log from the hand-over's lookback on);
   * `as` rewrites a copy of the truth the way the proxy rewrote what it served.
   */
  diff(as?: (truth: Record<string, unknown>) => void): Promise<string[]>;
  clearFaults(): void;
}

/**
 * Registers beforeAll/afterAll/afterEach for one dialect's mirror: a simulator (`seed`, small),
 * the proxy, a backfill through it with `extra` config (reads by id pinned, so the proxy's record
 * rewrites are what the drain sees), and faults cleared after each test.
 */
export function useHostileMirror(dialect: Dialect, seed: number, extra: Record<string, unknown> = {}): HostileMirror {
  let sim: Simulator;
  let hostile: HostileUpstream;
  let drop: () => Promise<void>;
  let cleanup: () => void;
  let dir = '';
  let database = '';
  let env: Record<string, string> = {};
  let edits = 0;
  let configs = 0;
  // Each set of keys gets its own file: the mirror's own config stays as the backfill wrote it.
  const config = (more: Record<string, unknown> = {}) =>
    cliConfig(configs++ === 0 ? dir : mkdtempSync(join(dir, 'config-')), {
      url: hostile.url,
      database,
      extra: { lookbackSeconds: LOOKBACK_SECONDS, drainPlan: 'record', ...extra, ...more },
    });

  beforeAll(async () => {
    sim = await startSimulator({ seed, tickets: 12, deals: 8, control: true, apiKeys: { [KEY]: '' } });
    hostile = await startHostile(sim.url);
    ({ dir, cleanup } = tempDir());
    const target = await dialect.newDatabase();
    database = target.database;
    drop = target.drop;
    env = config();
    const r = await measure(['backfill'], env, dir);
    expect(r.code, r.stderr).toBe(0);
  }, 60_000);
  afterAll(async () => {
    await hostile?.close();
    await sim?.close();
    await drop?.();
    cleanup?.();
  });
  const clearFaults = () => {
    for (const k of Object.keys(hostile.faults)) delete hostile.faults[k as keyof Faults];
  };
  afterEach(clearFaults);

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sim.url}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(res.status, `${method} ${path}`).toBeLessThan(300);
    return (await res.json()) as Record<string, unknown>;
  };
  const read = async <T>(fn: (store: Store) => Promise<T>): Promise<T> => {
    const store = await openStore({ database, readonly: true });
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  };

  return {
    get sim() {
      return sim;
    },
    get hostile() {
      return hostile;
    },
    get dir() {
      return dir;
    },
    get database() {
      return database;
    },
    get env() {
      return env;
    },
    ticketIds: () => (sim.control.truth().tickets as Array<{ id: string }>).map((t) => t.id),
    dealIds: () => (sim.control.truth().deals as Array<{ id: string }>).map((d) => d.id),
    async edit(kind, id) {
      const value = `edit ${++edits}`;
      await api('PATCH', `/${kind}/${id}`, kind === 'tickets' ? { subject: value } : { name: value });
      return value;
    },
    async reply(id) {
      const body = `reply ${++edits}`;
      await api('POST', `/tickets/${id}/messages`, { body });
      return body;
    },
    api,
    run: (args = ['sync'], more) => measure(args, more ? { ...env, ...config(more) } : env, dir),
    read,
    quarantined: (entityType) =>
      read((s) =>
        databaseOf(s).selectFrom('quarantine').select(['entity_id', 'reason', 'raw_json']).where('entity_type', '=', entityType).execute(),
      ),
    dirty: () => read((s) => databaseOf(s).selectFrom('dirty').select(['entity_type', 'entity_id']).execute()),
    diff: (as) =>
      read((s) => {
        const truth = structuredClone(sim.control.truth()) as unknown as Record<string, unknown>;
        as?.(truth);
        return diffMirror(databaseOf(s), truth, { lookbackSeconds: LOOKBACK_SECONDS });
      }),
    clearFaults,
  };
}
