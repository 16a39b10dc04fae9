import { describe, expect, it } from 'vitest';
import type { StatusReport } from '../../src/cli/commands/status.js';
import { runCli } from '../helpers/cli.js';
import { tempDir } from '../helpers/tmp.js';
import { cliConfig, useSimulator } from './env.js';

describe('verify and status', () => {
  const sim = useSimulator({ seed: 13, tickets: 25, deals: 12 });

  it('verify finds no drift after a sync, lists unsynced writes as in flight (exit 0), and --repair re-reads them', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliConfig(dir, { url: sim.url });
    expect((await runCli(['backfill'], env)).code).toBe(0);
    expect((await runCli(['sync'], env)).code).toBe(0);
    const clean = await runCli(['verify'], env);
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/Checked 25 tickets, 12 deals, \d+ pipelines: no drift/);

    const deal = (sim.control.truth().deals as Array<{ id: string }>)[0]!.id;
    await fetch(`${sim.url}/api/v1/deals/${deal}`, { method: 'DELETE', headers: { authorization: 'Bearer test-key' } });
    sim.control.act(6);
    // Made after the mirror's as-of: in flight, not drift (issue 46); no daemon runs, so no second look.
    const flight = await runCli(['verify', '--json', '--settle', '0'], env);
    expect(flight.code, flight.stderr).toBe(0);
    const report = JSON.parse(flight.stdout) as { drift: unknown[]; inFlight: Array<{ entityId: string; kind: string }> };
    expect(report.drift).toEqual([]);
    expect(report.inFlight).toContainEqual(expect.objectContaining({ entityId: deal, kind: 'extra' }));
    expect((await runCli(['verify', '--settle', '0'], env)).stdout).toMatch(
      /change\(s\) in flight \(made upstream after the mirror's as-of/,
    );

    const repair = await runCli(['verify', '--repair'], env);
    expect(repair.code, repair.stderr).toBe(0);
    expect((await runCli(['verify'], env)).code).toBe(0);
    cleanup();
  });

  it('status reports watermark, lag, last run, counts, dirty and quarantine, as text and JSON', async () => {
    const { dir, cleanup } = tempDir();
    const env = cliConfig(dir, { url: sim.url });
    const before = await runCli(['status'], env);
    expect(before.code).toBe(2); // no mirror yet: a reader does not create one
    expect(before.stderr).toMatch(/backfill/);
    expect((await runCli(['backfill'], env)).code).toBe(0);
    expect((await runCli(['sync'], env)).code).toBe(0);
    const json = await runCli(['status', '--json'], env);
    expect(json.code, json.stderr).toBe(0);
    const s = JSON.parse(json.stdout) as StatusReport;
    expect(s.watermark).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(s.upstream?.lagSeconds).toBe(0);
    expect(s.lastRun?.kind).toBe('sync');
    expect(s.lastRun?.outcome).toBe('success');
    expect(s.counts?.tickets).toBeGreaterThanOrEqual(25);
    expect(s.dirty).toBe(0);
    expect(s.quarantined).toEqual([]);
    expect(s.lateEvent).toBeNull();
    const text = await runCli(['status'], env);
    expect(text.stdout).toMatch(/Watermark:\s+\d{4}-/);
    expect(text.stdout).toMatch(/lag 0 s/);
    expect(text.stdout).toMatch(/Late events: none seen beyond the guaranteed tick overlap/);
    expect(text.stdout).not.toContain('test-key');
    cleanup();
  });
});
