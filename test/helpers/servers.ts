// Small node:http servers for behaviour the sandbox does not have, on 127.0.0.1 port 0.
import http from 'node:http';

export /** A server whose account calls answer normally and whose other calls answer `answer()`. */
async function accountOnlyServer(answer: (req: http.IncomingMessage) => { status: number; body: string } | Promise<{ status: number; body: string }>) {
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url!, 'http://x');
    res.setHeader('content-type', 'application/json');
    if (url.pathname.endsWith('/account/credits')) {
      return res.end(
        JSON.stringify({ status: 'success', data: { total_remaining_credits: 1000, plan_remaining_credits: {}, low_credit_balance_min_threshold: 0 } }),
      );
    }
    if (url.pathname.endsWith('/account/limits')) {
      const reset = new Date(Date.now() + 60_000).toISOString();
      return res.end(
        JSON.stringify({
          status: 'success',
          data: {
            email_verify: {
              api_rate_limit: { total: '6000 RPM', remaining: '6000 RPM', next_limit_reset: reset },
              bulk_verify_concurrency_limit: { total: '1', remaining: '1' },
            },
          },
        }),
      );
    }
    const { status, body } = await answer(req);
    res.statusCode = status;
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v2`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}
