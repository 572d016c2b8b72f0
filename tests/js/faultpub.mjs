// A fault trial's publisher written with nats.js v3 (tests/.../JetStream/Cluster/Faults), the same protocol as
// tests/go/faultpub: <loops> async loops on one connection each publish unique payloads "<prefix><loop>-<n>" to
// <subject>.<prefix's first character>, each with its payload as Nats-Msg-Id, retrying a publish until it is
// acknowledged (a duplicate answer names the stored sequence too). Every acknowledgement is printed as
// "A <payload> <seq>" the moment it arrives (after "READY", once connected). The connection stays on its one server (reconnecting forever).
// The URL carries the credentials: nats://user:pass@host:port.
// A line "STOP" on stdin stops new publishes; those in flight are retried until acknowledged, then it prints
// "DONE <errors>" and exits 0.
// Usage: node faultpub.mjs <url> <subject> <prefix> <loops>
import { createInterface } from "node:readline";
import { connect } from "@nats-io/transport-node";
import { jetstream } from "@nats-io/jetstream";

const [url, base, prefix, loopsArg] = process.argv.slice(2);
const subject = `${base}.${prefix[0]}`;
const enc = new TextEncoder();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const parsed = new URL(url);
const nc = await connect({
  servers: `${parsed.hostname}:${parsed.port}`,
  user: decodeURIComponent(parsed.username),
  pass: decodeURIComponent(parsed.password),
  // Stays on its one server, as an application pinned to it would.
  ignoreClusterUpdates: true,
  maxReconnectAttempts: -1,
  reconnectTimeWait: 100,
  timeout: 30_000,
});
const js = jetstream(nc, { timeout: 2_000 });
process.stdout.write("READY\n");
let stopping = false;
let errors = 0;

async function loop(index) {
  for (let n = 0; !stopping; n++) {
    const payload = `${prefix}${index}-${n}`;
    for (;;) {
      try {
        const ack = await js.publish(subject, enc.encode(payload), { msgID: payload, timeout: 2_000 });
        process.stdout.write(`A ${payload} ${ack.seq}\n`);
        break;
      } catch {
        errors++;
        // No leader (no responders) or no connection answers at once: do not spin.
        await sleep(50);
      }
    }
  }
}

const loops = Array.from({ length: Number(loopsArg) }, (_, i) => loop(i));
for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === "STOP") break;
}
stopping = true;
await Promise.all(loops);
process.stdout.write(`DONE ${errors}\n`);
await nc.close();
process.exit(0);
