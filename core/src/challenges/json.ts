/**
 * A challenge view as plain JSON for the browser: every encoded image `{mime, width, height, data}`
 * becomes `{mime, width, height, src: "data:<mime>;base64,..."}`. The main API and the standby send the
 * same shape, so the widget has one renderer.
 */
export function viewToJson(value: unknown): unknown {
  if (Buffer.isBuffer(value)) return value.toString('base64');
  if (Array.isArray(value)) return value.map(viewToJson);
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (Buffer.isBuffer(record.data) && typeof record.mime === 'string') {
      const { data, ...rest } = record;
      return { ...rest, src: `data:${record.mime};base64,${(data as Buffer).toString('base64')}` };
    }
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, viewToJson(v)]));
  }
  return value;
}
