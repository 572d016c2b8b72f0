// nats.js v3 (@nats-io/transport-node) across a cluster: subscribers on the first server, publishers on the
// last, queue members on every server. Run by Routes/ClusterClientTests.cs, which talks to it over
// stdin/stdout at two points (the same protocol as tests/go/clusterclient):
//   "CHECK <gone> <kept>"  it has unsubscribed <gone> and still holds <kept>; the test checks every other
//                          server's route interest and answers a line on stdin.
//   "KILL"                 its failover connection (first server only) is subscribed; the test kills the first
//                          server and answers; the client must fail over to a server it learnt from connect_urls.
// Exit 0 and "PASS" when every check held; otherwise a message on stderr says what failed.
// Usage: node cluster.mjs <url> <url> [<url> ...]
import { createInterface } from "node:readline";
import { connect, headers, NoRespondersError, RequestError } from "@nats-io/transport-node";

const enc = new TextEncoder();
const dec = new TextDecoder();
// Set when the servers are a hub and its leaf (CLUSTERCLIENT_LEAF=1) rather than one cluster.
const LEAF = !!process.env.CLUSTERCLIENT_LEAF;
const TIMEOUT_MS = 30_000;
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

function check(cond, what) {
  if (!cond) throw new Error(`check failed: ${what}`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function answer(what) {
  const line = await lines.next();
  check(!line.done && line.value.trim() === "ok", `${what}: the test answered ${JSON.stringify(line.value)}`);
}

// A subscription with a queue of its messages, so a test can wait for the next one.
function inbox(nc, subject, opts = {}) {
  const queued = [];
  let wake = null;
  const sub = nc.subscribe(subject, {
    ...opts,
    callback: (err, m) => {
      if (err) return;
      queued.push(m);
      wake?.();
    },
  });
  return {
    sub,
    async next(what, skipProbes = true) {
      const deadline = Date.now() + TIMEOUT_MS;
      while (Date.now() < deadline) {
        while (queued.length > 0) {
          const m = queued.shift();
          if (!skipProbes || m.string() !== "probe") return m;
        }
        await new Promise((resolve) => {
          wake = resolve;
          setTimeout(resolve, 200);
        });
      }
      throw new Error(`${what}: nothing arrived`);
    },
    async probe(pub, probeSubject) {
      const deadline = Date.now() + TIMEOUT_MS;
      while (Date.now() < deadline) {
        pub.publish(probeSubject, enc.encode("probe"));
        await pub.flush();
        const until = Date.now() + 200;
        while (Date.now() < until) {
          const m = queued.shift();
          if (m?.subject === probeSubject) return;
          if (!m) await new Promise((resolve) => { wake = resolve; setTimeout(resolve, 50); });
        }
      }
      throw new Error(`interest in ${subject} never crossed the route`);
    },
  };
}

function expectMsg(m, subject, data) {
  check(m.subject === subject && m.string() === data, `expected ${subject} ${data}, got ${m.subject} ${m.string()}`);
}

async function pubsub(sub, pub) {
  const star = inbox(sub, "orders.*");
  const full = inbox(sub, "orders.>");
  await sub.flush();
  await star.probe(pub, "orders.probe");
  await full.probe(pub, "orders.probe");
  pub.publish("orders.new", enc.encode("o1"));
  pub.publish("orders.eu.new", enc.encode("o2"));
  const h = headers();
  h.set("X-Trace", "t1");
  pub.publish("orders.hdr", enc.encode("o3"), { headers: h });
  await pub.flush();
  expectMsg(await star.next("orders.*"), "orders.new", "o1");
  const withHeaders = await star.next("orders.*");
  expectMsg(withHeaders, "orders.hdr", "o3");
  check(withHeaders.headers?.get("X-Trace") === "t1", "header lost across the route");
  expectMsg(await full.next("orders.>"), "orders.new", "o1");
  expectMsg(await full.next("orders.>"), "orders.eu.new", "o2");
  expectMsg(await full.next("orders.>"), "orders.hdr", "o3");
  console.log("ok pubsub");
}

async function queue(conns) {
  const seen = new Map();
  const perServer = conns.map(() => 0);
  let probedOnFirst = false;
  // Across a leaf connection a publisher's own side always serves a group it has members of: the probe can only
  // reach the first server's members while the last server has none, so those subscribe after the probe.
  const subscribe = (nc, i) => {
    for (let k = 0; k < 2; k++) {
      nc.subscribe("jobs", {
        queue: "workers",
        callback: (err, m) => {
          if (err) return;
          if (m.string() === "probe") {
            if (i === 0) probedOnFirst = true;
            return;
          }
          seen.set(m.string(), (seen.get(m.string()) ?? 0) + 1);
          perServer[i]++;
        },
      });
    }
  };
  conns.forEach((nc, i) => { if (i === 0 || !LEAF) subscribe(nc, i); });
  await Promise.all(conns.map((nc) => nc.flush()));
  const last = conns[conns.length - 1];
  const deadline = Date.now() + TIMEOUT_MS;
  while (!probedOnFirst) {
    check(Date.now() < deadline, "queue interest never crossed the route");
    last.publish("jobs", enc.encode("probe"));
    await last.flush();
    await sleep(100);
  }
  if (LEAF) {
    conns.forEach((nc, i) => { if (i > 0) subscribe(nc, i); });
    await Promise.all(conns.map((nc) => nc.flush()));
  }
  const count = 300;
  for (let i = 0; i < count; i++) conns[i % conns.length].publish("jobs", enc.encode(`m${i}`));
  await Promise.all(conns.map((nc) => nc.flush()));
  while (seen.size < count) {
    check(Date.now() < deadline + TIMEOUT_MS, `queue: ${seen.size} of ${count} distinct messages arrived`);
    await sleep(20);
  }
  await Promise.all(conns.map((nc) => nc.flush()));
  last.publish("jobs", enc.encode("probe"));
  await last.flush();
  await conns[0].flush();
  for (const [data, n] of seen) check(n === 1, `queue: ${data} delivered ${n} times`);
  perServer.forEach((n, i) => check(n > 0, `queue: no message served on server ${i} (local members are preferred)`));
  console.log("ok queue");
}

function isNoResponders(err) {
  return err instanceof NoRespondersError || err?.cause instanceof NoRespondersError ||
    (err instanceof RequestError && typeof err.isNoResponders === "function" && err.isNoResponders());
}

async function request(responder, requester) {
  responder.subscribe("svc.upper", { callback: (err, m) => { if (!err) m.respond(enc.encode(m.string().toUpperCase())); } });
  await responder.flush();
  const deadline = Date.now() + TIMEOUT_MS;
  for (;;) {
    try {
      const reply = await requester.request("svc.upper", enc.encode("hello"), { timeout: 2_000 });
      check(reply.string() === "HELLO", `request: got ${reply.string()}`);
      break;
    } catch (err) {
      check(Date.now() < deadline, `request: ${err}`);
      await sleep(50);
    }
  }
  for (let i = 0; i < 20; i++) {
    const reply = await requester.request("svc.upper", enc.encode(`n${i}`), { timeout: 5_000 });
    check(reply.string() === `N${i}`, `request ${i}: got ${reply.string()}`);
  }
  let failure;
  try {
    await requester.request("nobody.listens.here", enc.encode("?"), { timeout: 10_000 });
  } catch (err) {
    failure = err;
  }
  check(isNoResponders(failure), `request without responders anywhere: expected no responders, got ${failure}`);
  console.log("ok request");
}

async function unsubscribe(sub) {
  const leaving = sub.subscribe("leaving.>");
  sub.subscribe("staying");
  await sub.flush();
  leaving.unsubscribe();
  await sub.flush();
  console.log("CHECK leaving.> staying");
  await answer("unsubscribe");
  console.log("ok unsubscribe");
}

async function failover(first, others) {
  const nc = await connect({ servers: first, timeout: 10_000, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  let reconnected = null;
  (async () => {
    for await (const s of nc.status()) {
      if (s.type === "reconnect") reconnected = s.server;
    }
  })();
  const box = inbox(nc, "failover.>");
  await nc.flush();
  const publisher = others[others.length - 1];
  await box.probe(publisher, "failover.probe");
  check(nc.info?.connect_urls?.length > 1, `failover: no other server in connect_urls ${JSON.stringify(nc.info?.connect_urls)}`);
  console.log("KILL");
  await answer("failover");
  const deadline = Date.now() + TIMEOUT_MS;
  while (reconnected === null) {
    check(Date.now() < deadline, "failover: no reconnect");
    await sleep(50);
  }
  check(!first.endsWith(`:${nc.info.port}`), `failover: reconnected to the killed server (${reconnected})`);
  await box.probe(publisher, "failover.probe");
  publisher.publish("failover.after", enc.encode("moved"));
  await publisher.flush();
  expectMsg(await box.next("failover.>"), "failover.after", "moved");
  console.log("ok failover");
  await nc.close();
}

const urls = process.argv.slice(2);
try {
  check(urls.length >= 2, "usage: node cluster.mjs <url> <url> [<url> ...]");
  const conns = await Promise.all(urls.map((url) => connect({ servers: url, timeout: 10_000 })));
  const first = conns[0];
  const last = conns[conns.length - 1];
  await pubsub(first, last);
  await queue(conns);
  await request(first, last);
  await unsubscribe(first);
  // A hub and its leaf share no connect_urls: nothing to fail over to.
  if (!LEAF) {
    await failover(urls[0], conns.slice(1));
  }
  await Promise.all(conns.slice(1).map((nc) => nc.close()));
  console.log("PASS");
  process.exit(0);
} catch (err) {
  console.error(`FAIL: ${err?.stack ?? err}`);
  process.exit(1);
}
