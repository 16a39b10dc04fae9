export { startHealthServer } from './http.js';
export {
  HealthTracker,
  tickInterval,
  UNHEALTHY_AFTER_FAILURES,
  type BackfillProgress,
  type HealthSnapshot,
  type Role,
  type Verdict,
} from './health.js';
export { DaemonMetrics, endpointOf, type FileSizes } from './metrics.js';
export { maintainMirror } from './maintenance.js';
export { DaemonTelemetry } from './telemetry.js';
export { CatchUpPolicy, MAX_CATCH_UP_CYCLES } from './catch-up.js';
