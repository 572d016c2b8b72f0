// MQTT 3.1.1 scenarios with the real MQTT.js client (npm `mqtt` 5.16.0), with nats.js v3
// (@nats-io/transport-node) on the NATS side where a scenario crosses over.
// Usage: node mqtt.mjs <mqtt-port | ws://host:port/mqtt> <nats-url> <scenario>   (node mqtt.mjs --list prints the names)
// The server must listen for MQTT on 127.0.0.1:<mqtt-port> with JetStream enabled and an empty store.
// Exit code 0 = passed; otherwise a message on stderr says what went wrong. Every wait is on an event
// with a generous timeout, never a sleep.
import { connect as natsConnect } from "@nats-io/transport-node";
import { check, close, equal, open as openClient, runScenarios, withTimeout } from "./mqtt-common.mjs";

// An MQTT 3.1.1 client (keepalive 60 s); see open in mqtt-common.mjs.
const open = (port, clientId, options = {}) => openClient(port, clientId, 4, { keepalive: 60, ...options });

async function subscribe(client, filter, qos) {
  const granted = await withTimeout(client.subscribeAsync(filter, { qos }), `SUBACK for ${filter}`);
  equal(granted.map((g) => g.qos), [qos], `granted QoS for ${filter}`);
}

// QoS 1/2 publishes resolve on PUBACK / PUBCOMP.
function publish(client, topic, payload, opts = {}) {
  return withTimeout(client.publishAsync(topic, payload, { qos: 0, ...opts }), `publish ${topic}`);
}

async function pubsub(port, qos) {
  const sub = await open(port, `js-sub-q${qos}`);
  const pub = await open(port, `js-pub-q${qos}`);
  await subscribe(sub.client, `t${qos}/+/x`, qos);
  const acked = await publish(pub.client, `t${qos}/one/x`, "first", { qos });
  if (qos > 0) check(acked !== undefined, `QoS ${qos} publish acknowledged`);
  await publish(pub.client, `t${qos}/two/x`, "second", { qos });
  const a = await sub.inbox.next("first message");
  const b = await sub.inbox.next("second message");
  equal([a.topic, a.payload, a.qos, a.retain], [`t${qos}/one/x`, "first", qos, false], "first message");
  equal([b.topic, b.payload, b.qos, b.retain], [`t${qos}/two/x`, "second", qos, false], "second message");
  await close(pub.client);
  await close(sub.client);
}

// Subscribes js-persist (clean: false) to s/+ at QoS 1, disconnects, then publishes three QoS 1 messages.
async function sessionLeave(port) {
  const first = await open(port, "js-persist", { clean: false });
  equal(first.connack.sessionPresent, false, "first CONNACK session present");
  await subscribe(first.client, "s/+", 1);
  await close(first.client);

  const pub = await open(port, "js-persist-pub");
  for (const n of [1, 2, 3]) await publish(pub.client, `s/${n}`, `m${n}`, { qos: 1 });
  await close(pub.client);
}

// Reconnects js-persist with clean: false: session present and the three messages, in order, at QoS 1.
async function sessionResume(port) {
  const again = await open(port, "js-persist", { clean: false });
  equal(again.connack.sessionPresent, true, "second CONNACK session present");
  const got = [];
  for (let i = 0; i < 3; i++) {
    const m = await again.inbox.next(`queued message ${i + 1}`);
    got.push([m.topic, m.payload, m.qos]);
  }
  equal(got, [["s/1", "m1", 1], ["s/2", "m2", 1], ["s/3", "m3", 1]], "messages published while offline");
  await close(again.client);
}

const scenarios = {
  async qos0(port) {
    await pubsub(port, 0);
  },

  async qos1(port) {
    await pubsub(port, 1);
  },

  // Go 2.9.10 grants QoS 1 to a QoS 2 subscription and closes a connection that publishes at QoS 2;
  // the C# test runs this scenario against ours only (Go 2.10's behaviour).
  async qos2(port) {
    await pubsub(port, 2);
  },

  // MQTT.js publishes on a/b (QoS 0 and 1); a nats.js subscriber on a.b receives both with Go's Nmqtt-Pub header.
  async "to-nats"(port, url) {
    const nc = await natsConnect({ servers: url, timeout: 20_000 });
    const sub = nc.subscribe("a.b");
    await nc.flush();
    const pub = await open(port, "js-to-nats");
    await publish(pub.client, "a/b", "zero", { qos: 0 });
    await publish(pub.client, "a/b", "one", { qos: 1 });
    const got = [];
    const received = (async () => {
      for await (const m of sub) {
        got.push([m.subject, m.string(), m.headers?.get("Nmqtt-Pub") ?? null]);
        if (got.length === 2) break;
      }
    })();
    await withTimeout(received, "two messages on a.b");
    equal(got, [["a.b", "zero", "0"], ["a.b", "one", "1"]], "NATS subscriber on a.b");
    await close(pub.client);
    await nc.drain();
  },

  // nats.js publishes on a.b; MQTT.js subscribed to a/b (QoS 0) and a/# (QoS 1) receives it on topic a/b,
  // at QoS 0 on both since a NATS publish is not stored for QoS 1 delivery.
  async "from-nats"(port, url) {
    const nc = await natsConnect({ servers: url, timeout: 20_000 });
    const sub = await open(port, "js-from-nats");
    await subscribe(sub.client, "a/b", 0);
    await subscribe(sub.client, "x/#", 1);
    nc.publish("a.b", "hello");
    nc.publish("x.y.z", "deep");
    await nc.flush();
    const a = await sub.inbox.next("a/b from NATS");
    const b = await sub.inbox.next("x/y/z from NATS");
    equal([a.topic, a.payload, a.qos, a.retain], ["a/b", "hello", 0, false], "a/b from NATS");
    equal([b.topic, b.payload, b.qos, b.retain], ["x/y/z", "deep", 0, false], "x/y/z from NATS");
    await close(sub.client);
    await nc.drain();
  },

  // A retained message reaches a later subscriber with the retain flag; a retained empty payload clears it.
  async retained(port) {
    const pub = await open(port, "js-ret-pub");
    await publish(pub.client, "r/lamp", "on", { qos: 1, retain: true });
    await publish(pub.client, "r/marker", "m", { qos: 1, retain: true });

    const first = await open(port, "js-ret-sub1");
    await subscribe(first.client, "r/lamp", 1);
    const lamp = await first.inbox.next("retained r/lamp");
    equal([lamp.topic, lamp.payload, lamp.retain], ["r/lamp", "on", true], "retained message on subscribe");
    await close(first.client);

    await publish(pub.client, "r/lamp", "", { qos: 1, retain: true });
    // A fresh subscriber on r/# gets the marker's retained copy and then a live message; had r/lamp not
    // been cleared, its retained copy would have come with the marker, before the live message.
    const second = await open(port, "js-ret-sub2");
    await subscribe(second.client, "r/#", 1);
    const marker = await second.inbox.next("retained r/marker");
    equal([marker.topic, marker.payload, marker.retain], ["r/marker", "m", true], "retained marker");
    await publish(pub.client, "r/live", "now", { qos: 1 });
    const live = await second.inbox.next("live r/live");
    equal([live.topic, live.payload, live.retain], ["r/live", "now", false], "after the cleared retained message");
    equal(second.inbox.pending, 0, "nothing else queued");
    await close(second.client);
    await close(pub.client);
  },

  // The will is published when a client's socket dies without DISCONNECT, not after a clean DISCONNECT.
  async will(port) {
    const watcher = await open(port, "js-will-watch");
    await subscribe(watcher.client, "will/#", 1);

    const polite = await open(port, "js-will-polite", { will: { topic: "will/polite", payload: "bye", qos: 1, retain: false } });
    await close(polite.client);

    const rude = await open(port, "js-will-rude", { will: { topic: "will/rude", payload: "gone", qos: 1, retain: false } });
    const closed = new Promise((resolve) => rude.client.once("close", resolve));
    rude.client.stream.destroy();
    await withTimeout(closed, "socket close");

    const will = await watcher.inbox.next("will message");
    equal([will.topic, will.payload, will.qos], ["will/rude", "gone", 1], "will after abnormal disconnect (none after DISCONNECT)");
    rude.client.end(true);
    await close(watcher.client);
  },

  // clean: false keeps the QoS 1 subscription while the client is away; QoS 1 messages published
  // meanwhile are delivered when it reconnects with session present.
  async session(port) {
    await sessionLeave(port);
    await sessionResume(port);
    // A clean connect with the same id discards the session.
    const clean = await open(port, "js-persist", { clean: true });
    equal(clean.connack.sessionPresent, false, "clean CONNACK session present");
    await close(clean.client);
  },

  // The same split by a server restart on the same store (driven by the C# test): the session, its
  // subscription and the messages queued for it are in JetStream.
  async "session-leave"(port) {
    await sessionLeave(port);
  },

  async "session-resume"(port) {
    await sessionResume(port);
  },
};

await runScenarios("mqtt.mjs", scenarios);
