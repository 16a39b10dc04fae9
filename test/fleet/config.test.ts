import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { nextSliceDelay, parseFleet, readApiKey, workspaceConfig, KEY_REJECTED_RETRY_MS } from '../../src/fleet/index.js';
import { tempDir } from '../helpers/tmp.js';

const DB = 'postgres://wsmirror@db:5432/warehouse';

describe('fleet file', () => {
  it('merges defaults under each entry, defaults the schema to the id, and never keeps a key', () => {
    const fleet = parseFleet({
      database: DB,
      defaults: { schedule: 'continuous', maxRequestsPerSecond: 'auto' },
      workspaces: [
        { id: 'acme-eu', baseUrl: 'https://acme.example.com', apiKeyFile: '/keys/acme' },
        { id: 'globex', baseUrl: 'https://globex.example.com', apiKeyEnv: 'GLOBEX_KEY', maxRequestsPerSecond: 5, paused: true },
      ],
    });
    expect(fleet.worker).toMatchObject({ concurrency: 4, sliceSeconds: 20 });
    const [acme, globex] = fleet.workspaces;
    expect(acme).toMatchObject({ id: 'acme-eu', schema: 'acme_eu', keyFile: '/keys/acme', keyEnv: null, paused: false });
    expect(acme!.settings).toMatchObject({ schedule: 'continuous', maxRequestsPerSecond: 'auto' });
    expect(globex).toMatchObject({ schema: 'globex', keyEnv: 'GLOBEX_KEY', paused: true });
    expect(globex!.settings.maxRequestsPerSecond).toBe(5);
    const config = workspaceConfig(globex!, DB, 'the-key', 'info');
    expect(config).toMatchObject({ schema: 'globex', maxRequestsPerSecond: 5, schedule: 'continuous', database: DB, apiKey: 'the-key' });
    expect(JSON.stringify(fleet)).not.toContain('the-key');
  });

  it('reports every problem at once, each naming its key and the fix', () => {
    let message = '';
    try {
      parseFleet({
        database: DB,
        defaults: { http: { port: 1 } },
        workspaces: [
          { id: 'Acme', baseUrl: 'https://a.example.com', apiKeyFile: '/k' },
          { id: 'b', baseUrl: 'ftp://b', apiKey: 'sk-secret-value', schedule: 'sometimes' },
          { id: 'c', baseUrl: 'https://c.example.com', apiKeyFile: '/k', apiKeyEnv: 'C', schema: 'public' },
          { id: 'd', baseUrl: 'https://d.example.com', apiKeyEnv: 'D', schema: 'c_schema' },
          { id: 'd', baseUrl: 'https://d.example.com', apiKeyEnv: 'D2' },
        ],
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/defaults\.http: a worker option: set it under "worker"/);
    expect(message).toMatch(/workspaces\[0\]\.id: must be lower-case/);
    expect(message).toMatch(/workspaces\[1\]\.apiKey: never put a key in the fleet file/);
    expect(message).toMatch(/workspaces\[1\]: give exactly one of apiKeyFile/);
    expect(message).toMatch(/workspaces\[1\]\.schedule \(workspace "b"\): must be .*a croner pattern/);
    expect(message).toMatch(/workspaces\[1\]\.baseUrl \(workspace "b"\)/);
    expect(message).toMatch(/workspaces\[2\]: give exactly one of apiKeyFile/);
    expect(message).toMatch(/workspaces\[2\]\.schema: "public" is reserved/);
    expect(message).toMatch(/workspaces\[4\]\.id: "d" is already used by workspaces\[3\]/);
    expect(message).not.toContain('sk-secret-value');
  });

  it('reads a key from its file (trimmed) or its variable, and says which is missing', () => {
    const { dir, cleanup } = tempDir();
    const file = join(dir, 'acme');
    writeFileSync(file, 'file-key\n');
    expect(readApiKey({ id: 'acme', keyFile: file, keyEnv: null })).toBe('file-key');
    expect(readApiKey({ id: 'g', keyFile: null, keyEnv: 'G_KEY' }, { G_KEY: 'env-key' })).toBe('env-key');
    expect(() => readApiKey({ id: 'g', keyFile: null, keyEnv: 'G_KEY' }, {})).toThrow(/G_KEY .* is not set on this worker/);
    expect(() => readApiKey({ id: 'x', keyFile: join(dir, 'none'), keyEnv: null })).toThrow(
      /Cannot read the API key file of workspace "x"/,
    );
    cleanup();
  });
});

describe('next slice', () => {
  const fleet = parseFleet({
    database: DB,
    workspaces: [
      { id: 'cron', baseUrl: 'https://a.example.com', apiKeyEnv: 'A', schedule: '*/30 * * * * *' },
      { id: 'cont', baseUrl: 'https://a.example.com', apiKeyEnv: 'A', schedule: 'continuous', minPollIntervalMs: 1000 },
    ],
  });
  const cron = workspaceConfig(fleet.workspaces[0]!, DB, 'k', 'info');
  const cont = workspaceConfig(fleet.workspaces[1]!, DB, 'k', 'info');
  const ok = {
    ok: true,
    backfilling: false,
    behind: false,
    fullLookback: false,
    eventsNew: 0,
    requests: 2,
    elapsedMs: 200,
    failuresInARow: 0,
    errorCode: null,
    ratePerSecond: 10,
  };

  it('follows the cron tick, continuous spacing, at once while backfilling, and backs off after failures', () => {
    expect(nextSliceDelay(cron, ok, new Date('2026-01-01T00:00:10.000Z'))).toBe(20_000);
    expect(nextSliceDelay(cont, ok)).toBe(800); // idle: minPollIntervalMs from the start of the slice
    expect(nextSliceDelay(cont, { ...ok, backfilling: true })).toBe(0);
    expect(nextSliceDelay(cron, { ...ok, behind: true })).toBe(0);
    // The slice that ends a backfill (a thousand requests) is followed at once, not spaced by them.
    expect(nextSliceDelay(cont, { ...ok, kind: 'backfill', requests: 1000, elapsedMs: 100_000 })).toBe(0);
    // A full lookback window of 40 pages is charged as an ordinary poll: spaced like one.
    expect(nextSliceDelay(cont, { ...ok, kind: 'sync', fullLookback: true, requests: 40 })).toBe(800);
    expect(nextSliceDelay(cron, { ...ok, ok: false, failuresInARow: 3, errorCode: 'UPSTREAM_UNAVAILABLE' })).toBe(20_000);
    expect(nextSliceDelay(cron, { ...ok, ok: false, failuresInARow: 1, errorCode: 'AUTH_REJECTED' })).toBe(KEY_REJECTED_RETRY_MS);
  });
});
