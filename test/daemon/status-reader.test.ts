import { Migrator, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { loadMigrations } from '../../migrations/index.js';
import { DaemonTelemetry, openStatusReader, renderPage, StatusSource } from '../../src/daemon/index.js';
import { openStore, type Store } from '../../src/store/index.js';
import { SecretRedactor } from '../../src/util/redact.js';
import { dialects } from '../helpers/dialects.js';
import { databaseOf } from '../../src/store/internal.js';

const migrations = await loadMigrations();

/** Client sessions open on the test's database (PostgreSQL; not an autovacuum worker visiting it), the writer's own included; null for SQLite. */
async function sessions(store: Store): Promise<number | null> {
  if (store.dialect !== 'postgres') return null;
  const r = await sql<{
    n: string;
  }>`select count(*) as n from pg_stat_activity where datname = current_database() and backend_type = 'client backend'`.execute(
    databaseOf(store),
  );
  return Number(r.rows[0]!.n);
}

describe.each(dialects)('the status page reader ($name)', (dialect) => {
  it('waits for pending migrations without piling up connections, then reads the mirror', async () => {
    const target = await dialect.newDatabase();
    const writer = await openStore({ database: target.database });
    const closes: (() => Promise<void>)[] = [];
    try {
      // A mirror one migration behind this build: what a standby of a newer version finds.
      const migrator = new Migrator({ db: databaseOf(writer), provider: { getMigrations: () => Promise.resolve(migrations) } });
      expect((await migrator.migrateTo('0500_messages_author_covering')).error).toBeUndefined();
      const before = await sessions(writer);
      const config = { database: target.database, schema: 'public' };
      for (let i = 0; i < 5; i++) {
        await expect(openStatusReader(config, (close) => closes.push(close))).rejects.toMatchObject({ code: 'MIGRATION_PENDING' });
      }
      expect(closes).toHaveLength(0);
      expect(await sessions(writer)).toBe(before);

      // The page says why it shows no mirror, and does not try again on every load.
      let opens = 0;
      const source = new StatusSource({
        telemetry: new DaemonTelemetry('*/30 * * * * *', 600_000),
        config: { eventsRetentionDays: 90, maxRequestsPerSecond: 10, maxRequestsPerSecondCeiling: 100 },
        openReader: () => {
          opens++;
          return openStatusReader(config, (close) => closes.push(close));
        },
        redactor: new SecretRedactor(),
      });
      const first = await source.page();
      expect(first.mirror).toBeNull();
      expect(first.mirrorError).toMatch(/needs migrations \(0600_status_page_indexes[,)]/);
      expect(renderPage(first)).toContain('The mirror could not be read (yet)');
      await expect(source.report()).rejects.toThrow(/needs migrations/);
      expect(opens).toBe(1);

      await writer.migrate();
      const reader = await openStatusReader(config, (close) => closes.push(close));
      await expect(reader.pruneEvents('2026-01-01T00:00:00.000Z')).rejects.toMatchObject({ code: 'READONLY' });
      expect(closes).toHaveLength(1);
      expect(await reader.dirtyCount()).toBe(0);
    } finally {
      for (const close of closes) await close();
      await writer.close();
      await target.drop();
    }
  });
});
