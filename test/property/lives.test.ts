import fc from 'fast-check';
import { describe, it } from 'vitest';
import { dialects } from '../helpers/dialects.js';
import { checkLife } from './check.js';
import { lifeArb } from './life.js';

/**
 * Issue 26's property: random workspace lives (creates, replies, notes, field changes,
 * reassignments, stage moves back and forth, deletes, several changes of one record between two
 * cycles) under random upstream dialects, mirrored live and by `backfill --history all`, equal the
 * independent computation from the simulator's truth in every base and rpt_ table. A failure
 * shrinks to a minimal life and prints its seed (fast-check's report: rerun with
 * WSMIRROR_FUZZ_SEED and WSMIRROR_FUZZ_PATH).
 *
 * `npm test` lives WSMIRROR_FUZZ_LIVES (default 20, about 30 s of one core) lives on SQLite and a tenth of that (at least one) on
 * PostgreSQL when it is configured; `npm run fuzz` lives 2,000.
 */
const env = process.env;
const LIVES = Number(env.WSMIRROR_FUZZ_LIVES ?? 20);
const SEED = env.WSMIRROR_FUZZ_SEED === undefined ? undefined : Number(env.WSMIRROR_FUZZ_SEED);
const PATH = env.WSMIRROR_FUZZ_PATH;

for (const db of dialects) {
  const runs = db.name === 'sqlite' ? LIVES : Math.max(1, Math.round(LIVES / 10));
  describe(`workspace lives under random dialects (${db.name})`, () => {
    it(`${runs} lives: both mirrors equal the truth`, { timeout: runs * 10_000 + 600_000 }, async () => {
      await fc.assert(
        fc.asyncProperty(lifeArb, async (life) => {
          const diffs = await checkLife(life, db);
          if (diffs.length > 0) throw new Error(`${diffs.length} differences:\n${diffs.slice(0, 20).join('\n')}`);
        }),
        {
          numRuns: runs,
          ...(SEED === undefined ? {} : { seed: SEED }),
          ...(PATH === undefined ? {} : { path: PATH }),
          endOnFailure: false,
        },
      );
    });
  });
}
