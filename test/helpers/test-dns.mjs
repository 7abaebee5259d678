// Loaded into the CLI's process by test/helpers/test-dns.ts (node --import): host names under
// `.invalid`, which never resolve (RFC 6761), are answered here at once, as the machine's resolver
// would answer them, without asking any DNS server: no test waits on the machine's resolver (slow
// or absent) or sends a query past 127.0.0.0/8. `eai-again.invalid` and its subdomains answer
// EAI_AGAIN (a DNS that cannot answer now), every other such name ENOTFOUND (no such host). Other
// names (127.0.0.1 needs none, localhost is in /etc/hosts) are resolved as usual. With
// TEST_DNS_LOG set, each name answered here is appended to that file, one line each: how many
// times the process asked.
import dns from 'node:dns';
import fs from 'node:fs';

const resolve = dns.lookup;

dns.lookup = function lookup(hostname, options, callback) {
  const done = typeof options === 'function' ? options : callback;
  const name = String(hostname).toLowerCase().replace(/\.$/, '');
  if (!name.endsWith('.invalid')) return resolve.call(this, hostname, options, callback);
  if (process.env.TEST_DNS_LOG) fs.appendFileSync(process.env.TEST_DNS_LOG, `${name}\n`);
  const code = name === 'eai-again.invalid' || name.endsWith('.eai-again.invalid') ? 'EAI_AGAIN' : 'ENOTFOUND';
  const error = Object.assign(new Error(`getaddrinfo ${code} ${hostname}`), {
    code,
    errno: code === 'EAI_AGAIN' ? -3001 : -3008,
    syscall: 'getaddrinfo',
    hostname,
  });
  process.nextTick(done, error);
  return {};
};
