import { DEAL_LIST, DEAL_READ, type Deal } from '../api/index.js';
import type { RecordEntity } from './entity.js';
import { stageKey } from './pipeline.js';

/** Deals: a list item is the whole record; a deal names a stage of the pipelines' reference data. */
export const deal: RecordEntity<Deal, Deal> = {
  type: 'deal',
  plural: 'deals',
  list: DEAL_LIST,
  single: DEAL_READ,
  table: 'deals',
  childTables: ['deal_contacts', 'deal_fields'],
  historyTable: 'deal_history',
  historyOwner: 'deal_id',
  tracked: [
    { field: 'stage_id', name: 'stage', value: 'id', implied: ['pipeline'] },
    { field: 'amount', name: 'amount', value: 'amount' },
    // An amount means nothing without its currency: a past currency stands in the versions as it stood.
    { field: 'currency', name: 'currency', value: 'text' },
    { field: 'close_date', name: 'closeDate', value: 'date' },
    { field: 'owner_id', name: 'owner', value: 'id' },
    // A deal's status follows its stage upstream; a server may still log it on its own.
    { field: 'status', name: 'status', value: 'text', follows: 'stage_id' },
  ],
  metricLabel: 'deal',
  touchesUnlisted: () => false,
  listable: () => true,

  fromList: (_store, items) => Promise.resolve({ copies: items.map((d) => ({ id: d.id, record: d })), readById: [] }),
  requires: (record) => stageKey(record.pipeline.id, record.stage.id),
};
