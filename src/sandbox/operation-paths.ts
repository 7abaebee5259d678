// The eight operations' methods and paths, as the sandbox serves them. Written out here, not taken
// from the client's table: a test server that shared the client's paths would agree with a wrong
// path instead of answering it 404. The type keeps both tables naming the same operations.

import type { Operation } from '../api/types.js';

export const SANDBOX_OPERATION_PATHS: Readonly<Record<Operation, { method: 'GET' | 'POST'; path: string }>> = {
  lookup_url: { method: 'GET', path: '/reverse_lookup/network' },
  lookup_email: { method: 'GET', path: '/reverse_lookup/email' },
  lookup_domain: { method: 'GET', path: '/reverse_lookup/domain' },
  mx: { method: 'POST', path: '/domain/resolve/mx' },
  whois: { method: 'POST', path: '/domain/resolve/whois' },
  myplans: { method: 'GET', path: '/account/myplans' },
  credits: { method: 'GET', path: '/account/credits' },
  limits: { method: 'GET', path: '/account/limits' },
};
