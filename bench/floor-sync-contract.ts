/**
 * What the tick's contract floor (bench/README.md, "The tick's contract floor") adds to its lean
 * equivalent, done by wsmirror's own code as the backfill's contract floor does it (bench/floor.ts):
 * every answer checked by wsmirror's schemas (docs/sync.md, "Bad data"); the window's change-log
 * events stored by wsmirror's event writer, which also writes the history rows and gaps those
 * events tell (docs/sync.md, "History from the change log"); and, once every group is written, the
 * `rpt_` rows of every record the tick changed or whose history changed refreshed by wsmirror's
 * incremental refresh (docs/schema.md), as a sync cycle's `report` step does.
 */
import type { z, ZodType } from 'zod';
import type { WorkspaceEvent } from '../src/api/schemas.js';
import { validateItems } from '../src/api/validate.js';
import { emptyRecordSets, type RecordSets } from '../src/entities/index.js';
import { silentLogger } from '../src/log/index.js';
import { openStore, type Store } from '../src/store/index.js';
import { emptyStats } from '../src/sync/index.js';
import { refreshReports } from '../src/sync/reporting.js';

export interface ContractTick {
  /**
   * The answers as wsmirror's check leaves them (normalised); throws when one fails it: the
   * simulator serves none such, so the floor may not pass one on.
   */
  check<S extends ZodType>(entityType: string, schema: S, raws: readonly unknown[]): z.output<S>[];
  /** Stores a group's events in one transaction of wsmirror's own store. */
  storeEvents(events: WorkspaceEvent[]): Promise<void>;
  /** A record the tick wrote or marked deleted: its reporting rows are refreshed at the end. */
  changed(table: 'tickets' | 'deals', id: string): void;
  /** The incremental `rpt_` refresh of every changed record. */
  refresh(): Promise<void>;
  /** ms of the validation (summed, in-process) and of the refresh. */
  figures(): { validateMs: number; reportMs: number };
  close(): Promise<void>;
}

export async function contractTick(database: string): Promise<ContractTick> {
  const store: Store = await openStore({ database });
  const changed: RecordSets = emptyRecordSets();
  let validateMs = 0;
  let reportMs = 0;
  return {
    check(entityType, schema, raws) {
      const started = performance.now();
      const { items, invalid } = validateItems(entityType, schema, raws);
      validateMs += performance.now() - started;
      if (invalid.length > 0) throw new Error(`the simulator served an invalid ${entityType}: ${invalid[0]!.reason}`);
      return items;
    },
    async storeEvents(events) {
      if (events.length === 0) return;
      const { historyOf } = await store.transaction((tx) => tx.insertEvents(events, new Date().toISOString()));
      for (const table of ['tickets', 'deals'] as const) for (const id of historyOf[table]) changed[table].add(id);
    },
    changed(table, id) {
      changed[table].add(id);
    },
    async refresh() {
      const started = performance.now();
      await refreshReports({ store, logger: silentLogger() }, emptyStats(), changed);
      reportMs += performance.now() - started;
    },
    figures: () => ({ validateMs: Math.round(validateMs), reportMs: Math.round(reportMs) }),
    close: () => store.close(),
  };
}
