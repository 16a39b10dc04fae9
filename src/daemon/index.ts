export { startHealthServer, type HealthServerOptions } from './http.js';
export {
  HealthTracker,
  tickInterval,
  UNHEALTHY_AFTER_FAILURES,
  type BackfillProgress,
  type CycleOutcome,
  type HealthSnapshot,
  type Role,
  type Verdict,
} from './health.js';
export { DaemonMetrics, endpointOf, type FileSizes } from './metrics.js';
export { maintainMirror } from './maintenance.js';
export { DaemonTelemetry, type TelemetryOptions } from './telemetry.js';
export { CatchUpPolicy, MAX_CATCH_UP_CYCLES } from './catch-up.js';
export { CycleLog, type ChartData, type CycleEntry, type CyclePoint } from './cycle-log.js';
export { asOfField, clock, count, describeState, duration, type DaemonState, type StateFacts, type StateKind } from './state.js';
export { collectStatus, mirrorFacts, mirrorLive, type LiveStatus, type RunRow, type StatusReport } from './status-report.js';
export { openStatusReader, StatusSource, type StatusSourceOptions } from './status-source.js';
export { renderPage } from './page/render.js';
export { PAGE_CSP } from './page/style.js';
export { cycleRows, type CycleRow, type PageFrame, type PageSnapshot } from './page/snapshot.js';
export { asOfLine } from './as-of-text.js';
export { AsOfWaiters, MAX_WAITERS, MAX_WAIT_TIMEOUT_MS } from './wait.js';
export { RecordWaiters, recordVerdict, type RecordVerdict, type RecordWaitOutcome } from './record-wait.js';
export {
  chargedRequests,
  IDLE_POLL_REQUESTS,
  IDLE_SHARE,
  nextPollDelay,
  PollNudge,
  pollContinuously,
  type ContinuousLoop,
  type PollOutcome,
  type PollPacing,
} from './continuous.js';
export { bearerGate, OPEN_PATHS } from './auth.js';
