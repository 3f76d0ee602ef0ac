import type { Logger } from 'pino';
import type { KubeClient } from './kube-client.ts';
import { EVENTS, resourcePath } from './resources.ts';

export interface InvolvedObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; uid: string; resourceVersion?: string };
}

export type EventType = 'Normal' | 'Warning';

/** Records core/v1 Events (what `kubectl describe` shows). */
export interface EventRecorder {
  event(obj: InvolvedObject, type: EventType, reason: string, message: string): void;
}

const REPEAT_WINDOW_MS = 10 * 60_000;

/**
 * Writes Events like client-go's recorder: best effort (a failure is logged, never thrown), and the
 * same event repeated within ten minutes bumps `count` and `lastTimestamp` instead of adding objects.
 */
export class KubeEventRecorder implements EventRecorder {
  readonly #client: KubeClient;
  readonly #component: string;
  readonly #instance: string;
  readonly #logger: Logger;
  readonly #recent = new Map<string, { name: string; count: number; at: number }>();

  constructor(client: KubeClient, component: string, instance: string, logger: Logger) {
    this.#client = client;
    this.#component = component;
    this.#instance = instance;
    this.#logger = logger;
  }

  event(obj: InvolvedObject, type: EventType, reason: string, message: string): void {
    void this.#write(obj, type, reason, message).catch((err: Error) =>
      this.#logger.warn({ err: err.message, reason }, 'could not record an event'),
    );
  }

  async #write(obj: InvolvedObject, type: EventType, reason: string, message: string): Promise<void> {
    const { namespace, name, uid } = obj.metadata;
    const now = new Date();
    const key = `${uid}\n${type}\n${reason}\n${message}`;
    const seen = this.#recent.get(key);
    if (seen && now.getTime() - seen.at < REPEAT_WINDOW_MS) {
      seen.count += 1;
      seen.at = now.getTime();
      await this.#client.mergePatch(resourcePath(EVENTS, namespace, seen.name), {
        count: seen.count,
        lastTimestamp: now.toISOString().replace(/\.\d+Z$/, 'Z'),
      });
      return;
    }
    const stamp = now.toISOString().replace(/\.\d+Z$/, 'Z');
    const created = await this.#client.create<{ metadata: { name: string } }>(
      resourcePath(EVENTS, namespace),
      {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { generateName: `${name}.`, namespace },
        involvedObject: {
          apiVersion: obj.apiVersion,
          kind: obj.kind,
          name,
          namespace,
          uid,
          resourceVersion: obj.metadata.resourceVersion,
        },
        type,
        reason,
        message: message.slice(0, 1024),
        source: { component: this.#component },
        reportingComponent: this.#component,
        reportingInstance: this.#instance,
        firstTimestamp: stamp,
        lastTimestamp: stamp,
        count: 1,
      },
    );
    this.#recent.set(key, { name: created.metadata.name, count: 1, at: now.getTime() });
    if (this.#recent.size > 1000) this.#recent.delete(this.#recent.keys().next().value as string);
  }
}
