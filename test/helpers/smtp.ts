import type { Socket } from 'node:net';
import { defer } from './cleanup.ts';
import { SMTPServer } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

export interface TestSmtp {
  port: number;
  url: string;
  messages: ParsedMail[];
  /** Resolves with the first message matching, waiting up to `ms`. */
  waitFor(pred: (m: ParsedMail) => boolean, ms?: number): Promise<ParsedMail>;
  close(): Promise<void>;
}

/**
 * A real SMTP server (smtp-server) on 127.0.0.1, keeping every message it receives, parsed;
 * `dataDelayMs` holds each message that long before accepting it (a slow server).
 */
export async function startSmtp(port = 0, options: { dataDelayMs?: number } = {}): Promise<TestSmtp> {
  const messages: ParsedMail[] = [];
  const waiters: { pred: (m: ParsedMail) => boolean; resolve: (m: ParsedMail) => void }[] = [];
  const server = new SMTPServer({
    authOptional: true,
    closeTimeout: 500,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, _session, callback) {
      simpleParser(stream).then(async (mail) => {
        if (options.dataDelayMs) await new Promise((r) => setTimeout(r, options.dataDelayMs));
        messages.push(mail);
        for (const w of [...waiters])
          if (w.pred(mail)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(mail);
          }
        callback();
      }, callback);
    },
  });
  const sockets = new Set<Socket>();
  server.server.on('connection', (sock: Socket) => {
    sockets.add(sock);
    sock.on('close', () => sockets.delete(sock));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const actual = (server.server.address() as { port: number }).port;
  let closed = false;
  const close = () =>
    closed
      ? Promise.resolve()
      : new Promise<void>((resolve) => {
          closed = true;
          // Drop client connections at once: the server otherwise waits for them to hang up.
          for (const sock of sockets) sock.destroy();
          server.server.close(() => resolve());
        });
  defer(close);
  return {
    port: actual,
    url: `smtp://127.0.0.1:${actual}`,
    messages,
    waitFor(pred, ms = 20_000) {
      const found = messages.find(pred);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const w = {
          pred,
          resolve: (m: ParsedMail) => {
            clearTimeout(timer);
            resolve(m);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no matching mail within ${ms} ms (got ${messages.length})`));
        }, ms);
        waiters.push(w);
      });
    },
    close,
  };
}
