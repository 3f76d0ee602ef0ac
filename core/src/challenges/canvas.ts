import { createRequire } from 'node:module';
import type * as NapiCanvas from '@napi-rs/canvas';

let loaded: typeof NapiCanvas | undefined;

/**
 * `@napi-rs/canvas`, loaded on the first drawing rather than when this package is imported: the native
 * library and Skia add to a process's resident memory, and the main API only verifies answers
 * (the drawing happens in its renderer processes, api/src/challenges/image-pool.ts). Modules
 * here import the library's types statically and its values through this function.
 */
export function canvas(): typeof NapiCanvas {
  loaded ??= createRequire(import.meta.url)('@napi-rs/canvas') as typeof NapiCanvas;
  return loaded;
}
