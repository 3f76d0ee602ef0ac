import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { Gatehouse, GatehouseError, type Verdict } from '@gatehouse/node';

/**
 * The protected backend of the drill: one form endpoint that validates the widget's token with the Node
 * SDK, as an integrator's would (no standby host configured: the SDK discovers them), and applies the
 * caller rule. `POST /login {token, idempotency_key}` answers 200 (accepted), 403 (refused, with the
 * verdict) or 503 (no verdict could be had: the SDK threw).
 */

export const ACTION = 'login';

export interface BackendAnswer {
  status: number;
  accepted: boolean;
  verdict: Pick<Verdict, 'valid' | 'offline' | 'clientOnly' | 'errorCode' | 'reason' | 'action'> | null;
  error: string | null;
}

export async function startBackend(options: { mainUrl: string; appKey: string; appSecret: string }) {
  const gatehouse = new Gatehouse({
    appKey: options.appKey,
    appSecret: options.appSecret,
    baseUrl: options.mainUrl,
    timeoutMs: 2000,
  });
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const { token, idempotency_key } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    let answer: BackendAnswer;
    try {
      const v = await gatehouse.validate(token, {
        expectedAction: ACTION,
        clientIp: req.socket.remoteAddress ?? '127.0.0.1',
        idempotencyKey: idempotency_key,
      });
      const verdict = {
        valid: v.valid,
        offline: v.offline,
        clientOnly: v.clientOnly,
        errorCode: v.errorCode,
        reason: v.reason,
        action: v.action,
      };
      answer = { status: v.accepted ? 200 : 403, accepted: v.accepted, verdict, error: null };
    } catch (error) {
      // Fail closed: without a verdict nobody gets in.
      const why = error instanceof GatehouseError ? `${error.code}: ${error.message}` : String(error);
      answer = { status: 503, accepted: false, verdict: null, error: why };
    }
    res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    gatehouse,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}

/** What the end user's browser does after the widget completes: posts the form to the backend. */
export async function submitForm(url: string, token: string, idempotencyKey: string): Promise<BackendAnswer> {
  const res = await fetch(`${url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token, idempotency_key: idempotencyKey }),
  });
  return (await res.json()) as BackendAnswer;
}
