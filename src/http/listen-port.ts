import { createServer } from 'node:net';
import { defaultPublicBaseUrl, type Config } from '../config.ts';

/**
 * PORT=0 asks the system for a free port. The links the service sends (PUBLIC_BASE_URL's default,
 * `http://HOST:PORT`), the OpenAPI document's server and the "regwatch is ready" line are built
 * before the API listens, so the port is taken from the system first and the API then listens on
 * it: they name the port that answers, not 0. (Between the probe's close and the API's listen
 * another process could take the port; the start then fails with EADDRINUSE, never silently.)
 * Any other PORT, or a process with no API, is left as it is.
 */
export async function resolveListenPort(config: Config): Promise<Config> {
  if (config.port !== 0 || config.role === 'worker') return config;
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ port: 0, host: config.host, exclusive: true }, () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port from the system'))));
    });
  });
  return Object.freeze({
    ...config,
    port,
    publicBaseUrl: config.publicBaseUrlSet ? config.publicBaseUrl : defaultPublicBaseUrl(config.host, port),
  });
}
