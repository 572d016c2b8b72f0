// MQTT 5 scenarios with the real MQTT.js client (npm `mqtt` 5.16.0, protocolVersion 5), nats.js v3 on the NATS side.
// Usage: node mqtt5.mjs <mqtt-port | ws://host:port/mqtt> <nats-url> <scenario>   (node mqtt5.mjs --list prints the names)
// Exit code 0 = passed; otherwise a message on stderr says what went wrong. Every wait is on an event with a
// generous timeout, never a sleep.
import { connect as natsConnect, headers as natsHeaders } from "@nats-io/transport-node";
import { close, equal, open as openClient, runScenarios, withTimeout } from "./mqtt-common.mjs";

// An MQTT 5 client; see open in mqtt-common.mjs.
const open = (port, clientId, options = {}) => openClient(port, clientId, 5, options);

const scenarios = {
  // User properties, content type, response topic and correlation data between MQTT.js 5 clients, and
  // user properties / content type as headers to a nats.js subscriber.
  async properties(port, url) {
    const nc = await natsConnect({ servers: url, timeout: 20_000 });
    const natsSub = nc.subscribe("props.>");
    await nc.flush();
    const sub = await open(port, "js5-props-sub");
    const pub = await open(port, "js5-props-pub");
    equal(sub.connack.properties?.topicAliasMaximum, 64, "topic alias maximum in CONNACK");
    await withTimeout(sub.client.subscribeAsync("props/#", { qos: 1 }), "SUBACK");
    await withTimeout(pub.client.publishAsync("props/a", "hello", {
      qos: 1,
      properties: {
        userProperties: { unit: "C" },
        contentType: "text/plain",
        responseTopic: "props/reply",
        correlationData: Buffer.from([9, 8, 7]),
      },
    }), "QoS 1 publish");
    const m = await sub.inbox.next("message with properties");
    equal([m.topic, m.payload, m.qos, m.properties.contentType, m.properties.responseTopic, [...m.properties.correlationData],
      m.properties.userProperties], ["props/a", "hello", 1, "text/plain", "props/reply", [9, 8, 7], { unit: "C" }], "MQTT 5 subscriber");
    const n = await withTimeout((async () => { for await (const msg of natsSub) return msg; })(), "NATS message");
    equal([n.subject, n.string(), n.headers?.get("unit"), n.headers?.get("Content-Type"), n.reply], ["props.a", "hello", "C", "text/plain", "props.reply"],
      "NATS subscriber");
    // NATS headers back to MQTT 5 user properties.
    const h = natsHeaders();
    h.set("origin", "nats");
    nc.publish("props.b", "from-nats", { headers: h });
    const back = await sub.inbox.next("message from NATS");
    equal([back.topic, back.payload, back.properties.userProperties], ["props/b", "from-nats", { origin: "nats" }], "from NATS");
    await close(pub.client);
    await close(sub.client);
    await nc.drain();
  },

  // A topic alias set then used by MQTT.js.
  async alias(port) {
    const sub = await open(port, "js5-alias-sub");
    const pub = await open(port, "js5-alias-pub");
    await withTimeout(sub.client.subscribeAsync("alias/+", { qos: 0 }), "SUBACK");
    await withTimeout(pub.client.publishAsync("alias/x", "1", { properties: { topicAlias: 5 } }), "publish with alias");
    await withTimeout(pub.client.publishAsync("", "2", { properties: { topicAlias: 5 } }), "publish by alias");
    const a = await sub.inbox.next("first");
    const b = await sub.inbox.next("second");
    equal([[a.topic, a.payload], [b.topic, b.payload]], [["alias/x", "1"], ["alias/x", "2"]], "aliased publishes");
    await close(pub.client);
    await close(sub.client);
  },

  // Two MQTT.js members of $share/g/work/+ and a NATS queue subscriber in group g share the messages.
  async shared(port, url) {
    const nc = await natsConnect({ servers: url, timeout: 20_000 });
    let nats = 0;
    const queue = nc.subscribe("work.*", { queue: "g" });
    await nc.flush();
    const a = await open(port, "js5-share-a");
    const b = await open(port, "js5-share-b");
    let mqttCount = 0;
    let total = 0;
    let done;
    const all = new Promise((resolve) => { done = resolve; });
    const count = 60;
    const bump = () => { if (++total === count) done(); };
    for (const m of [a, b]) {
      m.client.on("message", () => { mqttCount++; bump(); });
      await withTimeout(m.client.subscribeAsync("$share/g/work/+", { qos: 0 }), "shared SUBACK");
    }
    const pub = await open(port, "js5-share-pub");
    const natsDone = (async () => { for await (const _ of queue) { nats++; bump(); } })();
    for (let i = 0; i < count; i++) await withTimeout(pub.client.publishAsync("work/item", `${i}`), "publish");
    await withTimeout(all, `${count} messages across the group`);
    if (mqttCount === 0 || nats === 0) throw new Error(`every member type should get a share: mqtt ${mqttCount}, nats ${nats}`);
    await close(pub.client);
    await close(a.client);
    await close(b.client);
    await nc.drain();
    await natsDone;
  },

  // Specification 4.8.2 with mixed QoS: a QoS 1 MQTT.js member, a QoS 0 MQTT.js member and a NATS queue subscriber of
  // group m; every QoS 1 publish reaches exactly one of them (the stored copy's consumer serves only the QoS 1 member's
  // draws), at the QoS of the member that got it.
  async sharedqos(port, url) {
    const nc = await natsConnect({ servers: url, timeout: 20_000 });
    const queue = nc.subscribe("mixq.*", { queue: "m" });
    await nc.flush();
    const q1 = await open(port, "js5-mix-q1");
    const q0 = await open(port, "js5-mix-q0");
    await withTimeout(q1.client.subscribeAsync("$share/m/mixq/+", { qos: 1 }), "QoS 1 member SUBACK");
    await withTimeout(q0.client.subscribeAsync("$share/m/mixq/+", { qos: 0 }), "QoS 0 member SUBACK");
    const seen = [];
    let arrived;
    let waitFor = 0;
    const enough = () => new Promise((resolve) => { arrived = resolve; if (seen.length >= waitFor) resolve(); });
    const note = (member, payload, qos) => { seen.push({ member, payload, qos }); if (arrived && seen.length >= waitFor) arrived(); };
    q1.client.on("message", (topic, payload, packet) => { if (topic !== "mixend/q1") note("q1", payload.toString(), packet.qos); });
    q0.client.on("message", (topic, payload, packet) => { if (topic !== "mixend/q0") note("q0", payload.toString(), packet.qos); });
    const natsDone = (async () => { for await (const m of queue) note("nats", m.string(), 0); })();
    const pub = await open(port, "js5-mix-pub");
    const count = 150;
    for (let i = 0; i < count; i++) await withTimeout(pub.client.publishAsync("mixq/j", `${i}`, { qos: 1 }), "QoS 1 publish");
    waitFor = count;
    await withTimeout(enough(), `${count} messages across the group`);
    // Interest retention: once $MQTT_msgs is empty the group's consumer has sent or settled every stored copy.
    for (;;) {
      const info = JSON.parse((await nc.request("$JS.API.STREAM.INFO.$MQTT_msgs", "", { timeout: 20_000 })).string());
      if (info.state.messages === 0) break;
      await withTimeout(new Promise((resolve) => setImmediate(resolve)), "stream info");
    }
    // A last message to each MQTT member on a topic of its own comes after anything still queued for it.
    for (const [name, m] of [["q1", q1], ["q0", q0]]) {
      await withTimeout(m.client.subscribeAsync(`mixend/${name}`, { qos: 1 }), "end SUBACK");
      await withTimeout(pub.client.publishAsync(`mixend/${name}`, "end", { qos: 1 }), "end publish");
      await m.inbox.next(`end message for ${name}`).then(async function skip(msg) { if (msg.topic !== `mixend/${name}`) await m.inbox.next(`end for ${name}`).then(skip); });
    }
    equal(seen.map((s) => s.payload).sort(), [...Array(count).keys()].map(String).sort(), "each message exactly once across the group");
    for (const s of seen) equal(s.qos, s.member === "q1" ? 1 : 0, `QoS at member ${s.member}`);
    equal([...new Set(seen.map((s) => s.member))].sort(), ["nats", "q0", "q1"], "every member takes a share");
    await close(pub.client);
    await close(q1.client);
    await close(q0.client);
    await nc.drain();
    await natsDone;
  },
};

await runScenarios("mqtt5.mjs", scenarios);
