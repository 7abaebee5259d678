// Child-process runner for the `no limit` baseline: a bare got keep-alive loop, `concurrency`
// workers pulling the same emails enrich looks up (the first `keys` rows of the contacts file)
// from the same sandbox, one GET /reverse_lookup/email each, body parsed as JSON. No limiter, no
// store, no CSV: what the HTTP client alone can do on this machine.
// Usage: node bench/lib/got-runner.js '<json {baseUrl, token, keys, concurrency}>'
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import got from 'got';
import { contactEmail } from './data.js';

const spec = JSON.parse(process.argv[2] ?? '{}');
const emails = Array.from({ length: spec.keys }, (_, i) => contactEmail(i));
const agent = { http: new http.Agent({ keepAlive: true, keepAliveMsecs: 1000 }) };
const headers = { authorization: `Bearer ${spec.token}`, accept: 'application/json' };
let next = 0;
let ok = 0;
let failed = 0;

async function worker() {
  while (next < emails.length) {
    const email = emails[next++];
    const response = await got(`${spec.baseUrl}/reverse_lookup/email`, {
      searchParams: { email_address: email },
      headers,
      agent,
      retry: { limit: 0 },
      throwHttpErrors: false,
      responseType: 'text',
    });
    if (response.statusCode === 200 && JSON.parse(response.body).status === 'success') ok += 1;
    else failed += 1;
  }
}

const started = performance.now();
await Promise.all(Array.from({ length: spec.concurrency }, worker));
const ms = performance.now() - started;
agent.http.destroy();
process.stdout.write(`${JSON.stringify({ ms, requests: ok + failed, ok, failed, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
