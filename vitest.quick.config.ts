import { defineConfig } from 'vitest/config';
import { shared } from './vitest.config.js';
import { QUICK_TESTS } from './test/quick.js';

/** `npm test`: the quick selection of test/quick.ts; `npm run test:all` runs vitest.config.ts whole. */
export default defineConfig({ test: { ...shared, include: [...QUICK_TESTS] } });
