import { defineConfig } from 'vitest/config';

/**
 * The loadtest tests: `npm run test:loadtest`, the last step of `npm test`, or one file with
 *   npx vitest run -c loadtest/vitest.config.ts loadtest/test/stack.test.ts
 * Apart from the root config because they must run alone: each file starts a whole stack and the k6 test
 * loads it (thresholds on latency would fail beside the other suites), so files run one after the other.
 */
export default defineConfig({
  test: {
    root: '.',
    include: ['loadtest/test/**/*.test.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 200_000,
  },
});
