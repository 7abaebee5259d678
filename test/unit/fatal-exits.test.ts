// The exit status of each class of fatal failure (docs/cli-contract.md, "Every night, unattended"):
// 130 stopped by a signal, 3 a budget that refused a single call, 2 an API that is down (waiting may
// mend it), 1 anything else, a host that does not exist included (an address to fix); and the one
// line each is said in, with its stable code, and with --json its object.
import { describe, expect, it } from 'vitest';
import {
  BudgetRefusedError,
  ApiFailedError,
  ApiUnavailableError,
  BadRequestError,
  BadResponseError,
  ConfigError,
  InterruptedError,
  isOutage,
  isTransient,
  LeadEnrichError,
  NetworkError,
  PaymentRequiredError,
  RateLimitedError,
  RateLimitedTooLongError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
} from '../../src/api/errors.js';
import { asksJson, fatalOf, tellFatal } from '../../src/cli/fatal.js';
import type { CliIo } from '../../src/cli/io.js';

const notUsage = () => false;
const unknownHost = () =>
  new NetworkError('Could not resolve api.example.invalid', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }) });
const refused = () =>
  new NetworkError('Connection refused by 127.0.0.1:9', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });

describe('the exit status of each class of failure', () => {
  it.each([
    ['stopped by a signal', 130, 'interrupted', new InterruptedError('Stopped before anything was written')],
    ['a budget that refused a single call', 3, 'budget', new BudgetRefusedError('Not sent: the call could have spent more than --budget 8/day')],
    ['a 5xx', 2, 'server_error', new ServerError('Server error 503 Service Unavailable from /x')],
    ['"failed" at 200', 2, 'api_failed', new ApiFailedError('The API answered "failed"')],
    ['a timeout', 2, 'timeout', new TimeoutError('No complete answer from /x within the timeout')],
    ['a refused connection', 2, 'network', refused()],
    ['a 429 past the hour bound', 2, 'rate_limited', new RateLimitedTooLongError('Rate limited for 3 days')],
    ['a host that does not exist', 1, 'network', unknownHost()],
    ['a 429 within the bound', 1, 'rate_limited', new RateLimitedError('Rate limited', undefined)],
    ['a body not as the interface says', 1, 'bad_response', new BadResponseError('Response from /x has no data object')],
    ['a rejected token', 1, 'unauthorized', new UnauthorizedError('The API rejected the token')],
    ['out of credits', 1, 'payment_required', new PaymentRequiredError('Out of credits')],
    ['a bad request', 1, 'bad_request', new BadRequestError('The API rejected the input', [])],
    ['a configuration error', 1, 'config', new ConfigError('No usable API token')],
    ['the API given up on after --patience', 1, 'api_unavailable', new ApiUnavailableError('The API stayed down')],
  ] as const)('%s: exit %i, code %s', (_what, status, code, error) => {
    const fatal = fatalOf(error, notUsage);
    expect(fatal).toEqual({ status, code, message: error.message, line: error.message });
  });

  it('a usage mistake: exit 1, code usage, the --help hint after a full stop (none after a question)', () => {
    const usage = () => true;
    expect(fatalOf(new Error('Unknown argument: frobnicate'), usage)).toEqual({
      status: 1,
      code: 'usage',
      message: 'Unknown argument: frobnicate',
      line: "Unknown argument: frobnicate. Run 'lead-enrich --help' for usage.",
    });
    expect(fatalOf(new Error('Did you mean enrich?'), usage).line).toBe("Did you mean enrich? Run 'lead-enrich --help' for usage.");
  });

  it('anything else is unexpected: exit 1, with how to see more and to report it', () => {
    expect(fatalOf(new TypeError('x is undefined'), notUsage)).toEqual({
      status: 1,
      code: 'unexpected',
      message: 'x is undefined',
      line: 'unexpected failure: x is undefined. Set LEAD_ENRICH_DEBUG=1 for details and please report it.',
    });
    expect(fatalOf('a thrown string', notUsage)).toMatchObject({ status: 1, code: 'unexpected', message: 'a thrown string' });
  });

  it('a message of several lines is said on one, its control characters shown escaped', () => {
    const fatal = fatalOf(new ServerError('Server error 500\r\n   from /x:\n\n  down\x1b[2J  '), notUsage);
    expect(fatal.message).toBe('Server error 500 from /x: down\\x1b[2J');
    expect(fatalOf(new Error('Invalid values:\n  Argument: budget'), () => true).message).toBe('Invalid values: Argument: budget');
  });
});

describe('which failures are transient, and which say the API is down', () => {
  it.each([
    ['RateLimitedError', new RateLimitedError('r', undefined), true, false],
    ['RateLimitedTooLongError', new RateLimitedTooLongError('r'), true, true],
    ['ServerError', new ServerError('s'), true, true],
    ['ApiFailedError', new ApiFailedError('a'), true, true],
    ['TimeoutError', new TimeoutError('t'), true, true],
    ['NetworkError', new NetworkError('n'), true, true],
    ['BadResponseError', new BadResponseError('b'), true, false],
    ['BadRequestError', new BadRequestError('b', []), false, false],
    ['UnauthorizedError', new UnauthorizedError('u'), false, false],
    ['PaymentRequiredError', new PaymentRequiredError('p'), false, false],
    ['a plain Error', new Error('e'), false, false],
  ])('%s: transient %s, an outage %s', (_name, error, transient, outage) => {
    expect(isTransient(error)).toBe(transient);
    expect(isOutage(error)).toBe(outage);
  });

  it('an error keeps its class name, code, status, API code and cause', () => {
    const cause = new Error('underneath');
    const error = new ServerError('s', { status: 503, apiCode: 7, cause });
    expect([error.name, error.code, error.status, error.apiCode, error.cause]).toEqual(['ServerError', 'server_error', 503, 7, cause]);
    const bare = new ConfigError('c');
    expect([bare.status, bare.apiCode, 'cause' in bare]).toEqual([undefined, undefined, false]);
  });
});

describe('the fatal line and its JSON', () => {
  function io(json?: 'out' | 'err') {
    const out: string[] = [];
    const err: string[] = [];
    const told: unknown[] = [];
    const cli: CliIo = {
      out: (text) => out.push(text),
      err: (line) => err.push(line),
      setStatus: () => {},
      isTty: false,
      json,
      onFatal: async (fatal) => void told.push(fatal),
    };
    return { cli, out, err, told };
  }

  it('one line on stderr naming the code; with --json one object on stdout with the exit status', async () => {
    const { cli, out, err, told } = io('out');
    const fatal = fatalOf(new BudgetRefusedError('Not sent'), notUsage);
    await tellFatal(cli, fatal);
    expect(err).toEqual(['lead-enrich: Not sent (code: budget)']);
    expect(JSON.parse(out.join(''))).toMatchObject({ exitCode: 3, error: { code: 'budget', message: 'Not sent' } });
    expect(told).toEqual([fatal]);
  });

  it('without --json, the line alone', async () => {
    const { cli, out, err } = io();
    await tellFatal(cli, fatalOf(new ServerError('down'), notUsage));
    expect(err).toEqual(['lead-enrich: down (code: server_error)']);
    expect(out).toEqual([]);
  });

  it('an io with no one to tell of the failure says the line all the same', async () => {
    const err: string[] = [];
    await tellFatal({ out: () => {}, err: (line) => err.push(line), setStatus: () => {}, isTty: false }, fatalOf(new ServerError('down'), notUsage));
    expect(err).toEqual(['lead-enrich: down (code: server_error)']);
  });

  it('--json is asked for anywhere before --, as a flag or =true, not after it', () => {
    expect(asksJson(['enrich', 'a.csv', '--json'])).toBe('out');
    expect(asksJson(['--', '--json'])).toBeUndefined();
    expect(asksJson(['--json=true', 'account'])).toBe('out');
    expect(asksJson(['lookup', '--', '--json'])).toBeUndefined();
    expect(asksJson(['--json=false'])).toBeUndefined();
    expect(asksJson([])).toBeUndefined();
  });
});
