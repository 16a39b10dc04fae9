import { describe, expect, it } from 'vitest';
import { BIN, cliEnv, runCli, spawnCli, waitForOutput } from '../helpers/cli.js';
import { spawn } from 'node:child_process';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';

describe('backfill progress and daemon ticks', () => {
  const sim = useSimulator({ seed: 31, tickets: 120, deals: 10, faults: { latencyMs: 5 } });

  it('draws a progress line (records, rate, elapsed) when stderr is a terminal', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliEnv(cliConfig(dir, { url: sim.url, extra: { pageSize: 10 } }));
    // `script` gives the child a pseudo-terminal, as a person at a shell would.
    const child = spawn('script', ['-qfec', `${process.execPath} ${BIN} backfill`, '/dev/null'], { env });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(out).toMatch(/tickets: deals \d+, tickets \d+, events \d+ · \d+ records\/s · \d+\.\d s/);
    expect(out).toMatch(/\r/);
    expect(out).toMatch(/Backfill complete: 120 tickets/);
    cleanup();
  });

  it('without a terminal, progress is JSON log lines and a tick that finds a cycle running is skipped', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliConfig(dir, { url: sim.url, extra: { pageSize: 10 } });
    const backfill = await runCli(['backfill'], { ...env, WSMIRROR_LOG_LEVEL: 'info' });
    expect(backfill.stderr).toMatch(/"msg":"backfill complete"/);
    expect(backfill.stderr).not.toMatch(/\r/);
    // Every response takes 600 ms, so each cycle outlasts the one-second schedule.
    sim.control.setFaults({ latencyMs: 600 });
    const daemon = spawnCli(['run'], { ...env, WSMIRROR_LOG_LEVEL: 'debug' });
    try {
      await waitForOutput(daemon, /tick skipped/, 60_000);
    } finally {
      daemon.kill('SIGTERM');
      const r = await daemon.result;
      sim.control.setFaults({ latencyMs: 5 });
      expect(r.code).toBe(0);
    }
    cleanup();
  });
});
