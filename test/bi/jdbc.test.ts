import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRun, runBackfill } from '../../src/sync/index.js';
import { parseTimestamp } from '../../src/util/time.js';
import { callApi, harness, type Harness } from '../sync/harness.js';

/** Debian's libxerial-sqlite-jdbc-java: the driver Metabase and DBeaver ship for SQLite. */
const JAR = ['/usr/share/java/sqlite-jdbc.jar', '/usr/share/java/xerial-sqlite-jdbc.jar'].find((p) => existsSync(p));
const JAVA = (() => {
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const missing = !JAVA ? 'java is not installed' : !JAR ? 'the xerial sqlite-jdbc jar is not in /usr/share/java' : null;
if (missing) {
  console.warn(
    `SKIPPED test/bi/jdbc.test.ts: ${missing}. Install with: apt-get install -y default-jdk-headless libxerial-sqlite-jdbc-java`,
  );
}

function runCheck(database: string): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(
      'java',
      // xerial reads zone-less text in the JVM's zone; the stored text is UTC (docs/bi.md tells BI users).
      ['-Duser.timezone=UTC', '-cp', JAR!, join(import.meta.dirname, 'Check.java'), database],
      { timeout: 120_000 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

/**
 * Issue 7 acceptance, "real BI drivers": every table of a demo mirror (backfilled with history,
 * then synced, reporting refreshed) read through the xerial JDBC driver with its default settings.
 */
describe.skipIf(missing !== null)('the xerial sqlite-jdbc driver reads every table of a mirror', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ sim: { seed: 3, tickets: 80, deals: 40 } });
    await recordRun(h.ctx, 'backfill', (s) => runBackfill(h.ctx, s, { history: 'all' }));
    h.sim.control.act(20);
    // Custom fields of every type: the simulator's (text, number, boolean) and two new keys.
    h.sim.control.defineCustomField('ticket', { key: 'renewal_on', type: 'text' });
    h.sim.control.defineCustomField('ticket', { key: 'signed_at', type: 'text' });
    const ticket = (h.sim.control.truth().tickets as { id: string }[])[0]!.id;
    await callApi(h.sim, 'PATCH', `/tickets/${ticket}`, {
      fields: { renewal_on: '2024-06-01', signed_at: '2024-05-02T10:30:00+02:00', vip: true, mrr: 1250.5 },
    });
    await recordRun(h.ctx, 'sync', () => h.sync());
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('finds a declared type for every column and parses every timestamp, date, boolean and amount', async () => {
    const { code, out } = await runCheck(h.database);
    expect(
      out.split('\n').filter((l) => l.startsWith('FAIL') || l.includes('Exception')),
      out,
    ).toEqual([]);
    expect(code, out).toBe(0);
    expect(out).toContain('readonly open_mode=1 refused write');
    expect(out).toContain('readonly mode=ro refused write');
    const parsed = Object.fromEntries([...out.matchAll(/^parsed (\w+) (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
    expect(parsed.DATETIME).toBeGreaterThan(1000);
    expect(parsed.DATE).toBeGreaterThan(0);
    expect(parsed.BOOLEAN).toBeGreaterThan(100);
    expect(parsed.REAL).toBeGreaterThan(0);
    // getTimestamp gives the instant the stored UTC text names (JVM zone UTC, as Metabase runs it).
    const probes = [...out.matchAll(/^probe (\S+) (\S+ \S+) (\d+)$/gm)];
    expect(probes.length).toBeGreaterThan(10);
    for (const [, column, text, ms] of probes) expect(Number(ms), `${column} ${text}`).toBe(parseTimestamp(text!));
    // A custom field column is read as its own Java type (docs/schema.md, "Custom fields as columns").
    const custom = Object.fromEntries([...out.matchAll(/^customfield (\S+) (.+)$/gm)].map((m) => [m[1], m[2]]));
    expect(custom).toEqual({
      ticket_id: 'TEXT 12 java.lang.String',
      plan: 'TEXT 12 java.lang.String',
      region: 'TEXT 12 java.lang.String',
      mrr: 'REAL 7 java.lang.Double',
      vip: 'BOOLEAN 16 java.lang.Boolean',
      renewal_on: 'DATE 91 java.lang.String',
      // xerial reports every DATETIME column (the mirror's own too) as Types.DATE; Metabase types it by its name.
      signed_at: 'DATETIME 91 java.sql.Timestamp',
    });
    expect(out).toMatch(/^probe rpt_ticket_custom_fields\.signed_at 2024-05-02 08:30:00\.000 1714638600000$/m);
  });
});
