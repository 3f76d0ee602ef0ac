import type { IncomingMessage, ServerResponse } from 'node:http';

/*
 * Internal endpoints (the API's /metrics and /internal/*, the standby's /internal/v1/mode) can live on a
 * listener of their own, which no Ingress routes and a NetworkPolicy opens to the operator and standby
 * only. Both services mark the requests that arrive through that listener, so their routes can answer
 * 404 to the same paths on the public one.
 */
const INTERNAL = Symbol('gatehouse.internal-listener');
type Marked = IncomingMessage & { [INTERNAL]?: true };

/** Wraps a listener's callback: what arrives through it is internal. */
export function internalListener(
  callback: (req: IncomingMessage, res: ServerResponse) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    (req as Marked)[INTERNAL] = true;
    callback(req, res);
  };
}

/** Whether `req` came through a listener wrapped by `internalListener`. */
export const isInternalRequest = (req: IncomingMessage) => (req as Marked)[INTERNAL] === true;
