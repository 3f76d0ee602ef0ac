/** Koa middleware every HTTP service of Gatehouse shares: the error envelope, request ids and logs, body reading. */
export { answerOf, sendJson } from './answer.ts';
export { jsonBodies, parseOrThrow, pathOfNul, readBody, utf8Only } from './body.ts';
export {
  type ClientAddressConfig,
  clientAddress,
  clientAddressEnv,
  clientAddressFrom,
  loadClientAddressConfig,
  parseTrustedProxies,
} from './client-address.ts';
export { openCors } from './cors.ts';
export { errorEnvelope } from './errors.ts';
export { internalListener, isInternalRequest } from './internal-listener.ts';
export { HTTP_LIMIT_DEFAULTS, type HttpLimits, httpLimitsEnv, listenHttp, loadHttpLimits } from './listen.ts';
export { requestContext } from './request-context.ts';
