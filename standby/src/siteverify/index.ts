/*
 * The vendors' siteverify endpoints, shared by the main API (api/src/routes/siteverify.ts) and the
 * standby's fallback role (routes.ts): one request format, one answer format, one boundary.
 */
export { cdataOfOfflineToken } from './offline.ts';
export {
  type Fields,
  failureAnswer,
  nulIn,
  parseSiteverify,
  readFields,
  SITEVERIFY_PATHS,
  type SiteverifyRequest,
  siteverifyBoundary,
  tooLong,
} from './request.ts';
export {
  type AcceptedVerdict,
  type Outcome,
  type Problem,
  problemFor,
  type Vendor,
  vendorAnswer,
} from './vendors.ts';
