// Consumer, Key-Value and Object Store scenarios with the real nats.js v3 clients
// (@nats-io/jetstream, @nats-io/kv, @nats-io/obj 3.4.0).
// Usage: node consumers.mjs <nats-url> <scenario>   (node consumers.mjs --list prints the names)
// The server must run with JetStream enabled and an empty store. Exit code 0 = passed.
import { connect } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, AckPolicy, DeliverPolicy, JetStreamApiError } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { Objm } from "@nats-io/obj";
import { randomBytes, createHash } from "node:crypto";

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

async function publish(js, subject, count, start = 0) {
  for (let i = start; i < start + count; i++) {
    await js.publish(subject, `m${i}`);
  }
}

const scenarios = {
  async pull(nc) {
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    await jsm.streams.add({ name: "ORDERS", subjects: ["orders.>"] });
    await publish(js, "orders.new", 10);
    const ci = await jsm.consumers.add("ORDERS", { durable_name: "worker", ack_policy: AckPolicy.Explicit });
    equal(ci.num_pending, 10, "num_pending after create");
    equal(ci.config.max_ack_pending, 1000, "default max_ack_pending");
    equal(ci.config.ack_wait, 30_000_000_000, "default ack_wait");
    const c = await js.consumers.get("ORDERS", "worker");

    const first = await c.next({ expires: 5000 });
    equal(first.string(), "m0", "next");
    equal(first.subject, "orders.new", "original subject");
    check(await first.ackAck(), "double ack confirmed");

    const got = [];
    const iter = await c.fetch({ max_messages: 4, expires: 5000 });
    for await (const m of iter) {
      got.push(m.string());
      m.ack();
    }
    equal(got, ["m1", "m2", "m3", "m4"], "fetch batch");

    const m5 = await c.next({ expires: 5000 });
    m5.nak();
    const again = await c.next({ expires: 5000 });
    equal(again.string(), "m5", "nak redelivers");
    equal(again.info.deliveryCount, 2, "delivery count after nak");
    again.term();

    const consumed = [];
    const msgs = await c.consume({ max_messages: 3 });
    for await (const m of msgs) {
      consumed.push(m.string());
      m.ack();
      if (consumed.length === 4) break;
    }
    equal(consumed, ["m6", "m7", "m8", "m9"], "consume loop");
    await msgs.close();

    const info = await c.info();
    equal(info.delivered.stream_seq, 10, "delivered stream seq");
    equal(info.num_pending, 0, "nothing pending");
    await expectApiError(jsm.consumers.add("ORDERS", { durable_name: "bad", filter_subject: "nope.>", ack_policy: AckPolicy.Explicit }), 10093, "filter not subset");
    check(await jsm.consumers.delete("ORDERS", "worker"), "delete");
    await expectApiError(jsm.consumers.info("ORDERS", "worker"), 10014, "deleted consumer info");
  },

  async ordered(nc) {
    const jsm = await jetstreamManager(nc);
    const js = jetstream(nc);
    await jsm.streams.add({ name: "O", subjects: ["o.>"] });
    await publish(js, "o.a", 100);
    const oc = await js.consumers.get("O");
    const seen = [];
    const msgs = await oc.consume();
    for await (const m of msgs) {
      seen.push(m.string());
      if (seen.length === 100) break;
    }
    equal(seen, Array.from({ length: 100 }, (_, i) => `m${i}`), "ordered consumer sees all in order");
    const last = await js.consumers.get("O", { deliver_policy: DeliverPolicy.Last });
    const m = await last.next({ expires: 5000 });
    equal(m.string(), "m99", "deliver last");
  },

  async kv(nc) {
    const kvm = new Kvm(nc);
    const kv = await kvm.create("config", { history: 5 });
    const r1 = await kv.put("color", "red");
    const r2 = await kv.put("color", "blue");
    equal(r2, r1 + 1, "revisions");
    equal((await kv.get("color")).string(), "blue", "get");
    await kv.update("color", "green", r2);
    let failed = false;
    try {
      await kv.update("color", "black", r2);
    } catch {
      failed = true;
    }
    check(failed, "update with a stale revision fails");
    await kv.create("size", "L");
    const history = [];
    for await (const e of await kv.history({ key: "color" })) {
      history.push(e.string());
    }
    equal(history, ["red", "blue", "green"], "history");
    const keys = [];
    for await (const k of await kv.keys()) {
      keys.push(k);
    }
    equal(keys.sort(), ["color", "size"], "keys");
    await kv.delete("size");
    equal((await kv.get("size"))?.operation, "DEL", "deleted entry");
    await kv.purge("color");
    equal((await kv.get("color"))?.operation, "PURGE", "purged entry");

    const watched = [];
    const watch = await kv.watch({ key: "w.*" });
    const done = (async () => {
      for await (const e of watch) {
        if (e.operation === "PUT") watched.push(`${e.key}=${e.string()}`);
        if (watched.length === 2) break;
      }
    })();
    await kv.put("w.a", "1");
    await kv.put("w.b", "2");
    await done;
    equal(watched, ["w.a=1", "w.b=2"], "watch");
  },

  async obj(nc) {
    const objm = new Objm(nc);
    const os = await objm.create("files");
    const data = randomBytes(3 * 1024 * 1024 + 17);
    const info = await os.putBlob({ name: "big.bin" }, data);
    equal(info.size, data.length, "object size");
    await os.putBlob({ name: "small.txt" }, new TextEncoder().encode("hello"));
    const back = await os.getBlob("big.bin");
    equal(createHash("sha256").update(back).digest("hex"), createHash("sha256").update(data).digest("hex"), "object content");
    const names = (await os.list()).map((o) => o.name).sort();
    equal(names, ["big.bin", "small.txt"], "list");
    await os.delete("small.txt");
    const gone = await os.info("small.txt");
    check(gone === null || gone.deleted, "deleted object");
  },

  async objlinks(nc) {
    const objm = new Objm(nc);
    const os = await objm.create("docs");
    const other = await objm.create("other");
    const data = randomBytes(300_000);
    const report = await os.putBlob({ name: "report.pdf" }, data);
    const link = await os.link("latest", report);
    equal(link.options?.link, { bucket: "docs", name: "report.pdf" }, "link to object");
    const through = await os.getBlob("latest");
    equal(createHash("sha256").update(through).digest("hex"), createHash("sha256").update(data).digest("hex"), "get through a link");

    const note = await other.putBlob({ name: "note.txt" }, new TextEncoder().encode("hi"));
    await os.link("other-note", note);
    equal(new TextDecoder().decode(await os.getBlob("other-note")), "hi", "link into another bucket");
    const bucketLink = await os.linkStore("all-other", other);
    equal(bucketLink.options?.link?.bucket, "other", "link to a bucket");
    equal((await os.info("all-other"))?.options?.link?.bucket, "other", "bucket link info");
    let refused = false;
    try {
      await os.link("link-of-link", await os.info("latest"));
    } catch {
      refused = true;
    }
    check(refused, "links of links are refused");

    const names = (await os.list()).map((o) => o.name).sort();
    equal(names, ["all-other", "latest", "other-note", "report.pdf"], "list with links");
    await os.delete("report.pdf");
    let dangling;
    try {
      dangling = await os.getBlob("latest");
    } catch {
      dangling = null;
    }
    equal(dangling, null, "a link to a deleted object reads nothing");
  },

  async objwatch(nc) {
    const objm = new Objm(nc);
    const os = await objm.create("watched");
    await os.putBlob({ name: "a.txt" }, new TextEncoder().encode("one"));
    await os.putBlob({ name: "b.txt" }, new TextEncoder().encode("two"));
    // includeHistory: the last entry of every object first, then every change.
    const watch = await os.watch({ includeHistory: true });
    const seen = [];
    let initialSeen;
    const initial = new Promise((resolve) => (initialSeen = resolve));
    const done = (async () => {
      for await (const info of watch) {
        seen.push(`${info.name}:${info.deleted ? "deleted" : info.size}`);
        if (seen.length === 2) initialSeen();
        if (seen.length === 5) break;
      }
    })();
    await initial;
    await os.putBlob({ name: "a.txt" }, new TextEncoder().encode("one more"));
    await os.delete("b.txt");
    await os.putBlob({ name: "c.txt" }, new TextEncoder().encode("three"));
    await done;
    equal(seen, ["a.txt:3", "b.txt:3", "a.txt:8", "b.txt:deleted", "c.txt:5"], "object watch");
    const left = (await os.list()).map((o) => o.name).sort();
    equal(left, ["a.txt", "c.txt"], "list after delete");
  },

  async kvwatch(nc) {
    const kvm = new Kvm(nc);
    const kv = await kvm.create("events", { history: 3 });
    await kv.put("k1", "v1");
    const watch = await kv.watch({ key: ">" });
    const seen = [];
    const done = (async () => {
      for await (const e of watch) {
        seen.push(`${e.key}:${e.operation}:${e.string()}`);
        if (seen.length === 4) break;
      }
    })();
    await kv.put("k2", "v2");
    await kv.delete("k1");
    await kv.purge("k2");
    await done;
    equal(seen, ["k1:PUT:v1", "k2:PUT:v2", "k1:DEL:", "k2:PURGE:"], "watch with deletes and purges");

    for (const v of ["1", "2", "3", "4"]) await kv.put("h", v);
    const history = [];
    for await (const e of await kv.history({ key: "h" })) history.push(e.string());
    equal(history, ["2", "3", "4"], "history keeps the last 3");

    // A TTL bucket: the entry goes once max_age passes; wait for that, not for a fixed time.
    const short = await kvm.create("short", { ttl: 1000 });
    await short.put("x", "soon gone");
    equal((await short.get("x"))?.string(), "soon gone", "ttl entry readable at first");
    equal((await short.status()).ttl, 1000, "bucket ttl");
    const deadline = Date.now() + 30_000;
    while ((await short.get("x")) !== null) {
      check(Date.now() < deadline, "ttl entry expires");
      await new Promise((r) => setTimeout(r, 100));
    }
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
