import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { createTestDatabase } from './helpers/db.ts';
import { freePort } from './helpers/net.ts';
import { serveEnv, serveProcess } from './helpers/serve.ts';
import { waitFor } from './helpers/wait.ts';

/**
 * docs/configuration.md, "Shutdown": "SIGINT or SIGTERM stop the HTTP server (in-flight requests
 * finish), the worker (running jobs finish), then the cluster, in that order"; the stop has a 30 s
 * limit. A request in flight at SIGTERM leaves its connection idle once answered, and the server
 * closes it then (src/app.ts), so a client that would keep it open (any keep-alive agent: Node's,
 * undici's, a proxy's) does not hold the HTTP server open. Before (found by an audit), the stop
 * never got past the HTTP server, and the grace timer killed the process after 30 s with exit 1,
 * the worker and the database never stopped.
 */

const t = await createTestDatabase();
const env = serveEnv(t.url);

test(
  'SIGTERM with a request in flight on a keep-alive connection: the request finishes, then the process stops cleanly, exit 0',
  { timeout: 90_000 },
  async () => {
    const port = await freePort();
    const server = serveProcess({ ...env, PORT: String(port) });
    await waitFor(
      '/health',
      async () => {
        try {
          return (await fetch(`http://127.0.0.1:${port}/health`)).status === 200;
        } catch {
          return false;
        }
      },
      60_000,
    );

    // A request in flight: its headers and part of its body sent before SIGTERM, the rest after.
    const body = JSON.stringify({ email: 'inflight@example.com', name: 'In flight' });
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let response = '';
    socket.on('data', (d) => (response += d));
    socket.write(
      `POST /api/v1/auth/register HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 5)}`,
    );
    await new Promise((r) => setTimeout(r, 300));
    const stopAt = Date.now();
    server.child.kill('SIGTERM');
    await waitFor('shutting down', () => server.output().includes('"msg":"shutting down"'));
    socket.write(body.slice(5));
    await waitFor('the in-flight answer', () => response.includes('\r\n\r\n'), 10_000);
    assert.match(response, /^HTTP\/1\.1 201 /, 'the in-flight request finishes');

    // The client keeps its connection, as a keep-alive agent does; the process must still stop.
    const code = await Promise.race([server.exited, new Promise<string>((r) => setTimeout(() => r('still running after 20 s'), 20_000))]);
    const after = await server.exited;
    socket.destroy();
    const tookMs = Date.now() - stopAt;
    assert.equal(code, 0, `exit ${after} after ${tookMs} ms; answer headers: ${response.split('\r\n\r\n')[0]!.replaceAll('\r\n', ' / ')}`);
    assert.match(server.output(), /"msg":"stopped"/);
  },
);
