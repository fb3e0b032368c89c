/**
 * The receiver of bench/webhooks.ts, in a process of its own (forked by it), so that the
 * sender's CPU figures do not include the receiving end: answers every POST with 204 at once and
 * reports, every 100 ms over IPC, when each event's message was answered.
 *
 * Messages: to the parent `{port}` once listening, `{answered: [eventId, ms, ...], received}`
 * (new since the last report), `{cpu}` (this process's CPU microseconds) when asked `{cmd: 'cpu'}`.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const send = (m: unknown) => process.send!(m);
let answered: number[] = [];
let received = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    received++;
    const m = /"data":\{"id":(\d+)/.exec(Buffer.concat(chunks).toString('utf8'));
    if (m) answered.push(Number(m[1]), Date.now());
    res.writeHead(204).end();
  });
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', () => send({ port: (server.address() as AddressInfo).port }));

const timer = setInterval(() => {
  if (received === 0 && answered.length === 0) return;
  send({ answered, received });
  answered = [];
  received = 0;
}, 100);

process.on('message', (m: { cmd: string }) => {
  if (m.cmd === 'cpu') {
    const c = process.cpuUsage();
    send({ cpu: c.user + c.system });
  }
});
process.on('disconnect', () => {
  clearInterval(timer);
  server.closeAllConnections();
  server.close();
});
