/**
 * @gatehouse/node: the Gatehouse server SDK (validate pass tokens, issue server tokens) and the headless
 * client that solves invisible-tier challenges for CI and load tests.
 */
export {
  Gatehouse,
  type IssueServerTokenOptions,
  type ServerToken,
  type ValidateOptions,
} from './client.ts';
export {
  GatehouseApiError,
  GatehouseAuthenticationError,
  GatehouseConfigError,
  GatehouseConnectionError,
  GatehouseError,
  GatehouseInvalidRequestError,
  GatehouseRateLimitError,
} from './errors.ts';
export { DEFAULT_BASE_URL, type GatehouseOptions } from './options.ts';
export {
  type CaptchaArgs,
  type ClientIpCheck,
  isAccepted,
  TOKEN_ERRORS,
  type TokenErrorCode,
  type Verdict,
} from './verdict.ts';
