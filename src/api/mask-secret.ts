// A server that echoes the token back as data (a hostile one, or a debugging proxy) must not get
// it written to the output, the sidecar or the store: every string of an answer, keys included,
// has the token replaced by *** before anything else reads it.

const MASK = '***';

/**
 * Shorter tokens are not masked: no real token is that short (the service's are 97 characters),
 * and masking a 1-character test token would rewrite every key and value holding that letter.
 */
const MIN_SECRET_LENGTH = 8;

/**
 * `data` (parsed from `text`) with every occurrence of `secret` masked, in place. The walk is
 * skipped when the text can hold no copy: neither the token as it is nor any JSON escape, which
 * could spell it otherwise (`\/`, `\u0074`).
 */
export function maskSecret<T>(data: T, text: string, secret: string): T {
  if (secret.length < MIN_SECRET_LENGTH) return data;
  if (!text.includes(secret) && !text.includes('\\')) return data;
  return masked(data, secret) as T;
}

function masked(value: unknown, secret: string): unknown {
  if (typeof value === 'string') return value.includes(secret) ? value.split(secret).join(MASK) : value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) value[i] = masked(value[i], secret);
    return value;
  }
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  // Defined, not assigned: JSON.parse makes "__proto__" an own key, and assigning it would set the prototype.
  const set = (key: string, inner: unknown) => Object.defineProperty(record, key, { value: inner, writable: true, enumerable: true, configurable: true });
  for (const key of Object.keys(record)) {
    const before = record[key];
    const inner = masked(before, secret);
    if (key.includes(secret)) {
      delete record[key];
      set(key.split(secret).join(MASK), inner);
    } else if (inner !== before) {
      set(key, inner);
    }
  }
  return record;
}
