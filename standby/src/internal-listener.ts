import type { IncomingMessage, ServerResponse } from 'node:http';

/*
 * The operator's `POST /internal/v1/mode` on a port of its own (STANDBY_INTERNAL_PORT), which no Ingress
 * routes and a NetworkPolicy opens to the operator only: with it set, the public listeners answer 404 for
 * /internal/* (as for a path that does not exist). Unset: served on every listener, as before.
 */
const INTERNAL = Symbol('gatehouse.standby.internal-listener');
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

export const isInternalRequest = (req: IncomingMessage) => (req as Marked)[INTERNAL] === true;
