// What the MQTT.js scenario scripts (mqtt.mjs for MQTT 3.1.1, mqtt5.mjs for MQTT 5) share: assertions, the
// event-bound timeout, the inbox of received messages, the connect that attaches it before CONNACK, and the
// command-line runner. Every wait is on an event with a generous timeout, never a sleep.
import mqtt from "mqtt";

export const TIMEOUT_MS = 30_000;

export function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

export function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

export function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${TIMEOUT_MS} ms waiting for ${what}`)), TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// Messages an MQTT.js client receives, in arrival order, awaited one at a time.
export class Inbox {
  #queued = [];
  #waiters = [];

  push(message) {
    const waiter = this.#waiters.shift();
    if (waiter) waiter(message);
    else this.#queued.push(message);
  }

  next(what) {
    if (this.#queued.length > 0) return Promise.resolve(this.#queued.shift());
    return withTimeout(new Promise((resolve) => this.#waiters.push(resolve)), what);
  }

  get pending() {
    return this.#queued.length;
  }
}

// Connects an MQTT.js client (protocolVersion 4 or 5) with automatic reconnects off, its inbox attached before
// CONNACK so a persistent session's queued messages are not missed. Resolves with the client, the CONNACK and
// the inbox. A number is the MQTT port; a string is a ws:// URL (MQTT over WebSocket, path /mqtt).
export async function open(port, clientId, protocolVersion, options = {}) {
  const where = typeof port === "number" ? { host: "127.0.0.1", port, protocol: "mqtt" } : {};
  const client = mqtt.connect(typeof port === "string" ? port : undefined, {
    ...where,
    protocolVersion,
    clientId,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: TIMEOUT_MS,
    ...options,
  });
  const inbox = new Inbox();
  client.on("message", (topic, payload, packet) =>
    inbox.push({
      topic,
      payload: payload.toString(),
      qos: packet.qos,
      retain: packet.retain,
      dup: packet.dup,
      properties: packet.properties ?? {},
    }));
  const connack = await withTimeout(
    new Promise((resolve, reject) => {
      client.once("connect", resolve);
      client.once("error", reject);
      client.once("close", () => reject(new Error(`${clientId}: connection closed before CONNACK`)));
    }),
    `CONNACK for ${clientId}`,
  );
  client.removeAllListeners("error");
  client.removeAllListeners("close");
  client.on("error", (err) => console.error(`${clientId}: ${err?.message ?? err}`));
  return { client, connack, inbox };
}

export function close(client) {
  return withTimeout(client.endAsync(), "DISCONNECT");
}

// node <script> <mqtt-port | ws://host:port/mqtt> <nats-url> <scenario>; --list prints the names.
// Exit code 0 = passed; otherwise a message on stderr says what went wrong.
export async function runScenarios(script, scenarios) {
  const [port, url, name] = process.argv.slice(2);
  if (port === "--list") {
    console.log(Object.keys(scenarios).join("\n"));
    process.exit(0);
  }
  const scenario = scenarios[name];
  if (!scenario) {
    console.error(`unknown scenario ${name}; usage: node ${script} <mqtt-port> <nats-url> <scenario>`);
    process.exit(2);
  }
  try {
    await scenario(/^\d+$/.test(port) ? Number(port) : port, url);
    console.log(`PASS ${name}`);
    process.exit(0);
  } catch (err) {
    console.error(`FAIL ${name}: ${err?.stack ?? String(err)}`);
    process.exit(1);
  }
}
