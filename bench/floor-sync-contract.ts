/**
 * What the tick's contract floor (bench/README.md, "The tick's contract floor") adds to its lean
 * equivalent, done by wsmirror's own code as the backfill's contract floor does it (bench/floor.ts):
 * every answer checked by wsmirror's schemas (docs/sync.md, "Bad data"); the window's change-log
 * events stored by wsmirror's event writer, which also writes the history rows and gaps those
 * events tell (docs/sync.md, "History from the change log"); each record read compared with its
 * stored copy before it is written, the tracked fields the log did not explain written as observed
 * history by wsmirror's writer (docs/sync.md, "History"); and, once every group is written, the
 * `rpt_` rows of every record the tick changed or whose history changed refreshed by wsmirror's
 * incremental refresh (docs/schema.md), as a sync cycle's `report` step does.
 */
import type { z, ZodType } from 'zod';
import type { WorkspaceEvent } from '../src/api/schemas.js';
import { validateItems } from '../src/api/validate.js';
import { emptyRecordSets, RECORD_ENTITIES, recordSet, type RecordSets, type RecordTable } from '../src/entities/index.js';
import { silentLogger } from '../src/log/index.js';
import { openStore, type Store } from '../src/store/index.js';
import { diffFields, writeObservedHistory } from '../src/store/history.js';
import { databaseOf } from '../src/store/internal.js';
import { selectByIds } from '../src/store/key-sets.js';
import { trackedFields } from '../src/store/tracked-fields.js';
import { exactAmount } from '../src/store/deals.js';
import { columnsOf, type Rows } from './floor-rows.js';
import { emptyStats } from '../src/sync/index.js';
import { refreshReports } from '../src/sync/reporting.js';

/** The built-in entities (the bench registers none); the rows hold records of those the floor converts. */
const BUILT_IN = RECORD_ENTITIES;

export interface ContractTick {
  /**
   * The answers as wsmirror's check leaves them (normalised); throws when one fails it: the
   * simulator serves none such, so the floor may not pass one on.
   */
  check<S extends ZodType>(entityType: string, schema: S, raws: readonly unknown[]): z.output<S>[];
  /**
   * Before a group's rows are written: the stored copies of its records read and compared, and
   * the tracked fields that changed written as observed history (wsmirror's writer decides which
   * the stored events already explain), in one transaction of wsmirror's own store.
   */
  observe(rows: Rows): Promise<void>;
  /** Stores a group's events in one transaction of wsmirror's own store. */
  storeEvents(events: WorkspaceEvent[]): Promise<void>;
  /** A record the tick wrote or marked deleted: its reporting rows are refreshed at the end. */
  changed(table: RecordTable, id: string): void;
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
    async observe(rows) {
      if (BUILT_IN.every((e) => rows.of(e.table).length === 0)) return;
      await databaseOf(store)
        .transaction()
        .execute(async (trx) => {
          for (const entity of BUILT_IN) {
            const written = rows.of(entity.table).map((r) => rowObject(entity.table, r));
            if (written.length === 0) continue;
            const tracked = trackedFields(entity.type).map((f) => ({ column: f.field, field: f.field }));
            const stored = await selectByIds<Row>(
              trx,
              ['updated_at', ...tracked.map((t) => t.column), ...columnsOf(entity.table).filter((c) => c === 'amount_cents')],
              entity.table,
              written.map((w) => w.id),
            );
            const known = written.filter((w) => stored.has(w.id));
            await writeObservedHistory(
              trx,
              entity.type,
              known.map((after) => {
                const before = stored.get(after.id)!;
                return {
                  id: after.id,
                  changes: diffFields(exact(before), exact(after), tracked),
                  observedSince: before.updated_at === null ? null : String(before.updated_at),
                  changedAt: String(after.updated_at),
                };
              }),
            );
          }
        });
    },
    async storeEvents(events) {
      if (events.length === 0) return;
      const { historyOf } = await store.transaction((tx) => tx.insertEvents(events, new Date().toISOString()));
      for (const { plural } of BUILT_IN) for (const id of historyOf[plural] ?? []) recordSet(changed, plural).add(id);
    },
    changed(table, id) {
      recordSet(changed, table).add(id);
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

type Row = { id: string } & Record<string, string | number | null>;

/** A floor row (bench/floor-rows.ts, column order of TABLES) as an object of its columns. */
function rowObject(table: string, values: readonly unknown[]): Row {
  return Object.fromEntries(columnsOf(table).map((c, i) => [c, values[i]])) as Row;
}

/** A deal's amount compared as its exact cents, by wsmirror's own rule (src/store/deals.ts). */
const exact = (row: Row): Row => ('amount_cents' in row ? exactAmount(row as Row & { amount_cents: Row[string] }) : row);
