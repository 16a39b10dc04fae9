/**
 * What `npm test` runs: every unit test beside the code, the static checks of test/code, and one
 * or two representative scenarios per area on every configured database, so a newcomer's first run
 * and a change's inner loop take minutes. `npm run test:all` (what CI runs) runs every test file,
 * then the drain-plan reruns. test/code/quick-list.test.ts keeps this list honest: every entry
 * names an existing file and every area of test/ has one.
 */
export const QUICK_TESTS: readonly string[] = [
  'src/**/*.test.ts',
  'test/code/*.test.ts',
  // the upstream client, over real HTTP
  'test/api/client.test.ts',
  'test/api/simulator.test.ts',
  // the simulator
  'test/simulator/pagination.test.ts',
  'test/simulator/events.test.ts',
  // the store, on each database
  'test/store/migrations.test.ts',
  'test/store/tickets.test.ts',
  // the sync engine: backfill, handover to the change log, the lookback, history
  'test/sync/handover.test.ts',
  'test/sync/history.test.ts',
  // a third entity declared only under test/: backfill, sync, verify and repair through the registry
  'test/entity-fixture/task.test.ts',
  // the reporting tables against an independent oracle
  'test/report/tickets.test.ts',
  // the real CLI: exit codes, and the daemon
  'test/cli/exits.test.ts',
  'test/cli/daemon.test.ts',
  // the daemon's http server and status page
  'test/daemon/health.test.ts',
  'test/daemon/page-render.test.ts',
  // freshness: /wait over http
  'test/freshness/wait-http.test.ts',
  // a hostile upstream's impossible dates, through the real CLI
  'test/hostile/impossible-dates.test.ts',
  // the benchmark's floor stores the same mirror as wsmirror
  'test/bench/lean-floor.test.ts',
  // what BI tools see
  'test/bi/time-form.test.ts',
  'test/bi/docs-examples.test.ts',
  // the fleet's file, its schedule rule and its page (the spawned-worker suite is in test:all)
  'test/fleet/config.test.ts',
  'test/fleet/page.test.ts',
  // the deploy manifests, validated offline
  'test/deploy/kubernetes.test.ts',
  // random lives against the truth
  'test/property/lives.test.ts',
];
