import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';

const KEY = 'sk-live-9f8e7d6c5b4a39281706';

/** The API key appears in no log line, error, file or table (docs/design.md §3). */
describe('the API key never leaks', () => {
  const sim = useSimulator({ seed: 17, tickets: 15, deals: 6, apiKeys: { [KEY]: '' } });

  it('is absent from every output and every file the mirror writes, through success and failure', async () => {
    const { dir, cleanup } = tempDir();
    const env = { ...cliConfig(dir, { url: sim.url, apiKey: KEY }), WSMIRROR_LOG_LEVEL: 'trace' };
    const outputs: string[] = [];
    for (const args of [['backfill'], ['sync'], ['status', '--json'], ['verify'], ['report']]) {
      const r = await runCli(args, env);
      outputs.push(r.stdout, r.stderr);
    }
    sim.control.failNext({ status: 500, count: 10 });
    const failed = await runCli(['sync'], env);
    expect(failed.code).toBe(4);
    outputs.push(failed.stdout, failed.stderr);
    for (const text of outputs) expect(text).not.toContain(KEY);
    expect(outputs.join('').length).toBeGreaterThan(1000); // trace logging really ran
    for (const file of readdirSync(dir)) {
      expect(readFileSync(join(dir, file)).includes(KEY), file).toBe(false);
    }
    cleanup();
  });
});
