import { defineConfig } from 'vitest/config';

/** Every test file: `npm run test:all` runs them and, in the same pool, the drain-plan reruns below. */
const ALL = ['src/**/*.test.ts', 'test/**/*.test.ts'];

/**
 * The sync and reporting scenarios again under a forced drain plan and another upstream dialect
 * (`npm run test:plans` runs just these): the suites that pin a plan, or test the plans
 * themselves, are left out.
 */
const PLAN_SUITES = [
  'test/sync/**/*.test.ts',
  'test/report/e2e.test.ts',
  'test/report/sync-health.test.ts',
  'test/report/two-paths.test.ts',
];
const PLAN_EXCLUDED = [
  'test/sync/drain-plan.test.ts',
  'test/sync/deferred-indexes.test.ts',
  'test/sync/group-commit.test.ts',
  'test/sync/idle-tick.test.ts',
  'test/sync/state-version.test.ts',
  'test/sync/tidy-tables.test.ts',
];
export const PLAN_RERUNS = [
  { name: 'plan-list', env: { WSMIRROR_TEST_DRAIN_PLAN: 'list', WSMIRROR_SIMULATOR_DIALECT: 'updated-refs' } },
  { name: 'plan-record', env: { WSMIRROR_TEST_DRAIN_PLAN: 'record', WSMIRROR_SIMULATOR_DIALECT: 'opaque-changed' } },
] as const;

/** Test files run at once: WSMIRROR_TEST_FORKS, default 3. */
const FORKS = Number(process.env.WSMIRROR_TEST_FORKS ?? 3);

export const shared = {
  // Integration suites start real HTTP servers and spawn the CLI, and spend much of their time
  // waiting on them: two forks left a quarter of two cores idle. With three the whole vitest run
  // took 856 s on two cores (CI, 2026-12-02), against 890-1,000 s with two. WSMIRROR_TEST_FORKS
  // sets another count.
  pool: 'forks' as const,
  poolOptions: { forks: { maxForks: FORKS, minForks: 1 } },
  // Safety nets for a loaded machine, not speed assertions: speed belongs in `npm run bench`.
  testTimeout: 120_000,
  hookTimeout: 120_000,
  reporters: ['default', './test/reporters/slowest.ts'],
};

export default defineConfig({
  test: {
    ...shared,
    // One run, one pool of forks: the reruns fill the gaps of the main files instead of
    // running after them as two more vitest runs (their start and their tail).
    projects: [
      { extends: true as const, test: { name: 'all', include: ALL } },
      ...PLAN_RERUNS.map((p) => ({
        extends: true as const,
        test: { name: p.name, include: PLAN_SUITES, exclude: PLAN_EXCLUDED, env: { ...p.env } },
      })),
    ],
  },
});
