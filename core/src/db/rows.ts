/**
 * The rows of a raw `db.execute(…)`: postgres.js answers them as an array, PGlite as its result's `rows`.
 * One reading for every driver the API runs on, so a raw statement's caller does not care which it got.
 */
export function rowsOf<T>(result: unknown): T[] {
  return Array.isArray(result) ? (result as T[]) : ((result as { rows?: T[] }).rows ?? []);
}
