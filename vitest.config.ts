import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // Integration suites start real HTTP servers and spawn the CLI; two cores share them.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    // Safety nets for a loaded machine, not speed assertions: speed belongs in `npm run bench`.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    reporters: ['default', './test/reporters/slowest.ts'],
  },
});
