// How long a request may take, body included, unless its client is told otherwise. Apart from
// transport.ts so that the option registry can show it in --help without loading the HTTP client.
export const DEFAULT_TIMEOUT_MS = 30_000;
