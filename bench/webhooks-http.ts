/**
 * The HTTP part of a webhook delivery alone: the product's sender (src/modules/webhooks/delivery.ts,
 * undici's dispatch through the URL guard's pool) POSTing signed messages of the size a day's
 * messages have to the receiver of bench/webhooks.ts (bench/webhooks-receiver.ts, Node.js's http
 * server answering 204, in its own process), `--in-flight` at a time over `--endpoints` URLs, with
 * no database. Prints the CPU a delivery of the sender and of the receiver: the floor under the
 * whole delivery path's CPU (docs/benchmarks.md, "Webhooks: fan-out and delivery"), since every
 * delivery makes this request whatever the dispatcher and the database do around it.
 *
 *   node --import tsx bench/webhooks-http.ts [--messages 100000] [--in-flight 64] [--endpoints 1000] [--rounds 3]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { createSender } from '../src/modules/webhooks/delivery.ts';
import { signatureHeaders } from '../src/modules/webhooks/signing.ts';
import { pageTableIsolation } from './machine.ts';
import { argValue } from './registry-db.ts';
import { speedReference } from './registry-fixtures.ts';

const messages = Number(argValue('messages', '100000'));
const inFlight = Number(argValue('in-flight', '64'));
const endpoints = Number(argValue('endpoints', '1000'));
const rounds = Number(argValue('rounds', '3'));

const receiver = fork(fileURLToPath(new URL('./webhooks-receiver.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'] });
let received = 0;
let receiverCpuUs = 0;
receiver.on('message', (m: { received?: number; cpu?: number }) => {
  if (m.received !== undefined) received += m.received;
  if (m.cpu !== undefined) receiverCpuUs = m.cpu;
});
const [{ port }] = (await once(receiver, 'message')) as [{ port: number }];
const receiverCpu = async () => {
  receiver.send({ cmd: 'cpu' });
  const before = receiverCpuUs;
  while (receiverCpuUs === before) await new Promise((r) => setTimeout(r, 5));
  return receiverCpuUs;
};

const sender = createSender({ allowPrivate: true, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
const secrets = ['whsec_' + Buffer.alloc(32, 7).toString('base64')];
const urls = Array.from({ length: endpoints }, (_, i) => `http://127.0.0.1:${port}/hooks/${i}`);
// A day's message (the feed form of an event, as the fan-out stores it): about 600 bytes.
const body = (id: number) =>
  `{"type":"company.address_changed","timestamp":"2026-11-28T04:00:00.000Z","data":{"id":${id},"event_type":"address_changed",` +
  `"old_value":{"street":"ul. Marszałkowska 104/122","city":"Warszawa","postal_code":"00-017","country":"PL"},` +
  `"new_value":{"street":"ul. Świętokrzyska 36","city":"Warszawa","postal_code":"00-116","country":"PL"},` +
  `"event_date":"2026-11-28","severity":"medium","primary_identifier":"5260250995","identifier_type":"nip",` +
  `"company_name":"PRZEDSIĘBIORSTWO HANDLOWO-USŁUGOWE PRZYKŁAD SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ"}}`;

async function round(): Promise<Record<string, number>> {
  received = 0;
  const recv0 = await receiverCpu();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let next = 0;
  let failed = 0;
  const lane = async () => {
    while (next < messages) {
      const i = next++;
      const b = body(i);
      const now = new Date();
      const r = await sender.send(urls[i % endpoints]!, signatureHeaders(secrets, `msg_${i}`, now, b), b, now);
      if (!r.ok) failed++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  while (received < messages) await new Promise((r) => setTimeout(r, 20));
  const recv = (await receiverCpu()) - recv0;
  return {
    messages,
    failed,
    per_second: Math.round(messages / seconds),
    sender_us: Math.round((cpu.user + cpu.system) / messages),
    sender_system_us: Math.round(cpu.system / messages),
    receiver_us: Math.round(recv / messages),
  };
}

console.log(
  JSON.stringify({ speed_reference_us: speedReference(), ...pageTableIsolation(), messages, in_flight: inFlight, endpoints, rounds }),
);
for (let r = 0; r < rounds; r++) console.log(JSON.stringify({ round: r + 1, ...(await round()) }));
console.log(
  `node --import tsx bench/webhooks-http.ts --messages ${messages} --in-flight ${inFlight} --endpoints ${endpoints} --rounds ${rounds}`,
);
await sender.close();
receiver.disconnect();
