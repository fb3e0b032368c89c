import { connect, createServer } from 'node:net';

/** A loopback port free at the time of asking (for servers a test starts later, or never). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

export interface RawResponse {
  status: number;
  contentType: string;
  body: string;
}

/** One request as raw bytes on its own connection; the first response, or null if the server sent none. */
export function sendRawHttp(port: number, request: Buffer): Promise<RawResponse | null> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', (e) => (chunks.length > 0 || e.message.startsWith('no answer') ? reject(e) : resolve(null)));
    socket.on('close', () => {
      let raw = Buffer.concat(chunks);
      // Skip interim responses (`100 Continue`).
      while (/^HTTP\/1\.1 1\d\d /.test(raw.subarray(0, 13).toString('latin1')) && raw.indexOf('\r\n\r\n') >= 0)
        raw = raw.subarray(raw.indexOf('\r\n\r\n') + 4);
      const headEnd = raw.indexOf('\r\n\r\n');
      if (headEnd < 0) return resolve(null);
      const head = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
      const header = (name: string) =>
        head
          .find((l) => l.toLowerCase().startsWith(`${name}:`))
          ?.slice(name.length + 1)
          .trim() ?? '';
      let body = raw.subarray(headEnd + 4);
      if (/chunked/i.test(header('transfer-encoding'))) {
        const parts: Buffer[] = [];
        for (let at = 0; ;) {
          const eol = body.indexOf('\r\n', at);
          const size = parseInt(body.subarray(at, eol).toString(), 16);
          if (!(size > 0)) break;
          parts.push(body.subarray(eol + 2, eol + 2 + size));
          at = eol + 2 + size + 2;
        }
        body = Buffer.concat(parts);
      } else if (header('content-length') !== '') {
        body = body.subarray(0, Number(header('content-length')));
      }
      resolve({ status: Number(head[0]!.split(' ')[1]), contentType: header('content-type'), body: body.toString('utf8') });
    });
  });
}
