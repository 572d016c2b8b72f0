// JetStream scenarios with the real nats.js v3 clients (@nats-io/transport-node + @nats-io/jetstream).
// Usage: node jetstream.mjs <nats-url> <scenario>   (node jetstream.mjs --list prints the names)
// The server must run with JetStream enabled and an empty store. Exit code 0 = passed.
import { connect, headers } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, JetStreamApiError, StorageType, DiscardPolicy } from "@nats-io/jetstream";

const enc = new TextEncoder();
const dec = new TextDecoder();

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

function equal(actual, expected, what) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
}

async function expectApiError(promise, errCode, what) {
  try {
    await promise;
  } catch (err) {
    const code = err?.api_error?.err_code ?? err?.apiError?.()?.err_code ?? err?.code;
    check(err instanceof JetStreamApiError || code !== undefined, `${what}: unexpected error ${err}`);
    equal(code, errCode, `${what} err_code`);
    return err;
  }
  throw new Error(`${what}: expected an API error ${errCode}`);
}

const scenarios = {
  async streams(nc) {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"], storage: StorageType.File });
    equal(info.config.name, "ORDERS", "created name");
    equal(info.config.max_msgs, -1, "default max_msgs");
    equal(info.config.duplicate_window, 120_000_000_000, "default duplicate window");
    await expectApiError(jsm.streams.add({ name: "OTHER", subjects: ["orders.new"] }), 10065, "overlapping subjects");

    const js = jetstream(nc);
    for (let i = 1; i <= 4; i++) {
      const ack = await js.publish(`orders.${i % 2 ? "odd" : "even"}`, enc.encode(`o${i}`));
      equal(ack.seq, i, "pub ack seq");
      equal(ack.stream, "ORDERS", "pub ack stream");
    }
    const updated = await jsm.streams.update("ORDERS", { subjects: ["orders.>", "refunds.>"], max_msgs: 50 });
    equal(updated.config.max_msgs, 50, "updated max_msgs");
    equal(updated.state.messages, 4, "messages after update");

    const names = [];
    for await (const name of jsm.streams.names()) names.push(name);
    equal(names, ["ORDERS"], "stream names");
    const listed = [];
    for await (const si of jsm.streams.list()) listed.push(si.config.name);
    equal(listed, ["ORDERS"], "stream list");

    const m = await jsm.streams.getMessage("ORDERS", { seq: 2 });
    equal(m.subject, "orders.even", "message subject");
    equal(dec.decode(m.data), "o2", "message data");
    const last = await jsm.streams.getMessage("ORDERS", { last_by_subj: "orders.odd" });
    equal(last.seq, 3, "last by subject");

    check(await jsm.streams.deleteMessage("ORDERS", 1), "delete message");
    const purged = await jsm.streams.purge("ORDERS", { filter: "orders.even" });
    equal(purged.purged, 2, "purged by filter");
    const after = await jsm.streams.info("ORDERS");
    equal(after.state.messages, 1, "messages after purge");
    check(await jsm.streams.delete("ORDERS"), "delete stream");
    await expectApiError(jsm.streams.info("ORDERS"), 10059, "info of deleted stream");
  },

  async publish(nc) {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "EV", subjects: ["ev.>"], max_msgs: 3, discard: DiscardPolicy.New, storage: StorageType.Memory });
    const js = jetstream(nc);
    const a = await js.publish("ev.1", enc.encode("a"), { msgID: "x" });
    const dup = await js.publish("ev.1", enc.encode("a"), { msgID: "x" });
    check(dup.duplicate, "duplicate flagged");
    equal(dup.seq, a.seq, "duplicate keeps the original sequence");
    await expectApiError(js.publish("ev.1", enc.encode("b"), { expect: { lastSequence: 9 } }), 10071, "expected last sequence");
    await expectApiError(js.publish("ev.1", enc.encode("b"), { expect: { streamName: "NOPE" } }), 10060, "expected stream");
    await expectApiError(js.publish("ev.1", enc.encode("b"), { expect: { lastMsgID: "y" } }), 10070, "expected last msg id");
    const b = await js.publish("ev.2", enc.encode("b"), { expect: { lastSequence: 1, lastMsgID: "x", streamName: "EV" } });
    equal(b.seq, 2, "expected headers satisfied");
    await js.publish("ev.3", enc.encode("c"));
    await expectApiError(js.publish("ev.4", enc.encode("d")), 10077, "discard new when full");
  },

  async direct(nc) {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: "KV", subjects: ["kv.>"], allow_direct: true, max_msgs_per_subject: 1, allow_rollup_hdrs: true });
    const js = jetstream(nc);
    await js.publish("kv.a", enc.encode("1"));
    await js.publish("kv.a", enc.encode("2"));
    const h = headers();
    h.set("Nats-Rollup", "all");
    await js.publish("kv.b", enc.encode("3"), { headers: h });
    const m = await jsm.direct.getMessage("KV", { last_by_subj: "kv.b" });
    equal(dec.decode(m.data), "3", "direct get data");
    equal(m.seq, 3, "direct get sequence");
    equal(m.stream, "KV", "direct get stream");
    const si = await jsm.streams.info("KV");
    equal(si.state.messages, 1, "rollup all left one message");
  },
};

const [url, name] = process.argv.slice(2);
if (url === "--list") {
  console.log(Object.keys(scenarios).join("\n"));
  process.exit(0);
}
const scenario = scenarios[name];
if (!scenario) {
  console.error(`unknown scenario ${name}`);
  process.exit(2);
}
const nc = await connect({ servers: url, timeout: 20_000 });
try {
  await scenario(nc);
  await nc.drain();
  process.exit(0);
} catch (err) {
  console.error(err?.stack ?? String(err));
  await nc.close();
  process.exit(1);
}
