/**
 * What the risk engine derives from a client address (its network prefix, its client key, which
 * datacenter range or reputation list holds it) depends on the address alone, so it is not worked out again
 * on every init (each takes a parse with ipaddr.js). Each such derivation is memoized per address string
 * here. Bounded: past `max` addresses (an attack spraying them) the memo starts over rather than growing,
 * and a miss costs one parse.
 */
export function memoByIp<T>(derive: (ip: string) => T, max = 10_000): (ip: string) => T {
  const memo = new Map<string, T>();
  return (ip) => {
    const hit = memo.get(ip);
    if (hit !== undefined || memo.has(ip)) return hit as T;
    const value = derive(ip);
    if (memo.size >= max) memo.clear();
    memo.set(ip, value);
    return value;
  };
}
