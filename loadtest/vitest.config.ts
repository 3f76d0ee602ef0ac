import { defineConfig } from 'vitest/config';

/**
 * The loadtest tests on their own (until the root vitest.config.ts includes them):
 *   npx vitest run -c loadtest/vitest.config.ts [loadtest/test/stack.test.ts]
 * Files run one after the other: each starts a whole stack, and the k6 test loads it.
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
