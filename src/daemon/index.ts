export { startHealthServer, UNHEALTHY_AFTER_FAILURES, type HealthState } from './http.js';
export { DaemonMetrics } from './metrics.js';
