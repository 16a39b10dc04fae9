import type { ApiClient } from '../api/index.js';

/** Figures of one command run, persisted in sync_runs and logged as the cycle's summary line. */
export interface RunStats {
  eventsRead: number;
  eventsNew: number;
  recordsFetched: number;
  staleReads: number;
  staleAccepted: number;
  deleted: number;
  quarantined: number;
  requests: number;
  retries: number;
}

export function emptyStats(): RunStats {
  return {
    eventsRead: 0,
    eventsNew: 0,
    recordsFetched: 0,
    staleReads: 0,
    staleAccepted: 0,
    deleted: 0,
    quarantined: 0,
    requests: 0,
    retries: 0,
  };
}

/** Requests and retries are the client's counters, measured as a difference over the run. */
export function requestMeter(client: ApiClient): (stats: RunStats) => void {
  const start = client.stats();
  return (stats) => {
    const end = client.stats();
    stats.requests = end.requests - start.requests;
    stats.retries = end.retries - start.retries;
  };
}
