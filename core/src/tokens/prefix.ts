/*
 * Token prefixes and the length limit: everything about a token a client may know. Dependency-free, so
 * the published SDKs (sdk/node's build) bundle this file without pulling in the server's codecs.
 */

/** Token prefixes, as the spec names them. */
export const PREFIX = {
  pass: 'pt_',
  server: 'sct_',
  degraded: 'dg_',
  offline: 'offline_',
  clientOnly: 'co_',
  challenge: 'ch_',
} as const;

/** No token we mint comes near this; longer input is rejected before any work. */
export const MAX_TOKEN_LENGTH = 1024;
