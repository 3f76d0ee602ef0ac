import { defineConfig } from 'vitest/config';

/*
 * Two projects: everything on the embedded database (PGlite), then the database-touching suites under
 * api/test again on a real PostgreSQL (TEST_POSTGRES_URL, started by .ci/run). Outside CI a missing
 * PostgreSQL skips that project loudly; with CI=true it fails.
 */
export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'pglite',
          include: [
            'imports.test.ts',
            'core/**/*.test.ts',
            'api/**/*.test.ts',
            'standby/**/*.test.ts',
            'sdk/node/**/*.test.ts',
            'sdk/web/**/*.test.ts',
            'sdk/release/**/*.test.ts',
            'operator/**/*.test.ts',
            'charts/**/*.test.ts',
            'k8s/**/*.test.ts',
          ],
          env: { TEST_DATABASE: 'pglite' },
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['api/test/**/*.test.ts'],
          // Browser suites exercise the page, not the database: once, on the embedded one, is enough.
          exclude: ['**/*.browser.test.ts', '**/node_modules/**', '**/dist/**'],
          env: { TEST_DATABASE: 'postgres' },
        },
      },
    ],
  },
});
