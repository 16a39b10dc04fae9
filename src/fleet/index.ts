export { loadFleetFile, parseFleet, readApiKey, workspaceConfig, FLEET_SCHEMA, QUEUE_SCHEMA, VIEWS_SCHEMA } from './config.js';
export type { FleetFile, WorkerOptions, WorkspaceSpec } from './config.js';
export { applyFleet, openFleetPool, removeWorkspace, setPaused, type ApplyResult } from './db.js';
export { readFleetStatus, type FleetStatus, type WorkspaceStatus } from './status.js';
export { registerDatabaseSecret, runFleetWorker } from './worker.js';
export { HEARTBEAT_SECONDS, REDELIVERY_BOUND_SECONDS, SLICE_QUEUE } from './queue.js';
export { nextSliceDelay, KEY_REJECTED_RETRY_MS } from './schedule.js';
