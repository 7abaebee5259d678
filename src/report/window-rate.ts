// The rate the report draws and calls the peak: a bucket's requests as requests per window, over
// the time of it requests were sent. A run of 30 s at 10 a second sent 300 in its one minute,
// which is 600 a minute, the limit it used in full, not 300 against a limit of 600.

/**
 * Paced requests, n of them, span n - 1 intervals. Under a second sent, or a lone request, the
 * bucket counts as a whole (a handful of requests is no rate).
 */
export function perWindowRate(bucket: { requests: number; spanMs: number }, bucketMs: number, windowMs: number): number {
  const partial = bucket.spanMs < bucketMs && bucket.spanMs >= 1000 && bucket.requests >= 2;
  return partial ? ((bucket.requests - 1) * windowMs) / bucket.spanMs : (bucket.requests * windowMs) / bucketMs;
}
