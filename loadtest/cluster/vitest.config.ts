import { defineConfig } from 'vitest/config';

/**
 * The cluster suite: `npm run test:cluster`, or one file with
 *   npx vitest run -c loadtest/cluster/vitest.config.ts loadtest/cluster/test/nodes.test.ts
 * One local cluster (loadtest/cluster/up.sh: two nodes, real pods) is started for the whole run by the
 * global setup and stopped after it, so the files run one after the other against it.
 */
export default defineConfig({
  test: {
    root: '.',
    include: ['loadtest/cluster/test/**/*.test.ts'],
    globalSetup: ['loadtest/cluster/test/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 600_000,
  },
});
