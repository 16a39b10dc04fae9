import type { Migration } from 'kysely';
import * as m0001 from './0001_mirror_tables.js';
import * as m0100 from './0100_reporting.js';
import * as m0200 from './0200_bi_types.js';
import * as m0300 from './0300_dirty_read_messages.js';
import * as m0400 from './0400_live_updated_indexes.js';
import * as m0500 from './0500_messages_author_covering.js';
import * as m0600 from './0600_status_page_indexes.js';
import * as m0700 from './0700_owner_keyed_children.js';
import * as m0800 from './0800_dirty_failed_reads.js';
import * as m0900 from './0900_history_gaps.js';
import * as m1000 from './1000_current_as_of.js';
import * as m1100 from './1100_sync_runs_cycles.js';

/**
 * Every migration, by name, in the order they apply. A static list (not a directory scan) so the
 * same code runs from source under vitest and from dist/ after tsc.
 */
export const migrations: Record<string, Migration> = {
  '0001_mirror_tables': m0001,
  '0100_reporting': m0100,
  '0200_bi_types': m0200,
  '0300_dirty_read_messages': m0300,
  '0400_live_updated_indexes': m0400,
  '0500_messages_author_covering': m0500,
  '0600_status_page_indexes': m0600,
  '0700_owner_keyed_children': m0700,
  '0800_dirty_failed_reads': m0800,
  '0900_history_gaps': m0900,
  '1000_current_as_of': m1000,
  '1100_sync_runs_cycles': m1100,
};
